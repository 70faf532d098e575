#!/usr/bin/env node
// Checks that `npm pack` of @ax/sdk produces a working tarball.
//
//   node scripts/check-pack.mjs            packs for real (prepack cleans and builds dist/), unpacks
//                                          the tarball into a scratch node_modules and imports every
//                                          entry of `exports` from it with plain node
//   node scripts/check-pack.mjs --dry-run  `npm pack --dry-run --ignore-scripts`: only the file list
//                                          of the current dist/ (what the vitest check runs; needs a
//                                          prior `pnpm build`)
//
// Both fail (exit 1, one line per problem) when an `exports` target is not in the tarball or a
// test file is.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
const dryRun = process.argv.includes('--dry-run');
const scratch = mkdtempSync(join(tmpdir(), 'ax-sdk-pack-'));
const problems = [];

/** Every file `exports` points at, e.g. dist/express.js and dist/express.d.ts. */
function exportTargets() {
  const targets = new Set();
  const walk = (value) => {
    if (typeof value === 'string') targets.add(value.replace(/^\.\//, ''));
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(manifest.exports);
  return [...targets];
}

try {
  const args = ['pack', '--json', '--pack-destination', scratch, ...(dryRun ? ['--dry-run', '--ignore-scripts'] : [])];
  const out = execFileSync('npm', args, { cwd: packageDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  // npm prints the lifecycle scripts' output before the JSON with --json on some versions
  const report = JSON.parse(out.slice(Math.max(0, out.search(/^\[/m))));
  const files = new Set(report[0].files.map((f) => f.path));
  for (const target of exportTargets()) if (!files.has(target)) problems.push(`exports target ${target} is not in the tarball`);
  for (const file of files) if (/\.test\.|(^|\/)testing\//.test(file)) problems.push(`test file ${file} is in the tarball`);
  if (!files.has('README.md')) problems.push('README.md is not in the tarball');

  if (!dryRun && problems.length === 0) {
    // Unpack as an app would install it, with its dependencies and the peers it imports at runtime.
    const modules = join(scratch, 'app', 'node_modules');
    mkdirSync(join(modules, '@ax', 'sdk'), { recursive: true });
    execFileSync('tar', ['-xzf', join(scratch, report[0].filename), '-C', join(modules, '@ax', 'sdk'), '--strip-components=1']);
    for (const dep of [...Object.keys(manifest.dependencies ?? {}), '@nestjs/common']) {
      mkdirSync(dirname(join(modules, dep)), { recursive: true });
      symlinkSync(join(packageDir, 'node_modules', dep), join(modules, dep), 'dir');
    }
    const expected = {
      '@ax/sdk': ['verifyExecutorCall', 'createAxClient', 'syncAnswer', 'acceptedAnswer', 'axExecutorApp'],
      '@ax/sdk/express': ['axExecutor', 'captureRawBody'],
      '@ax/sdk/fastify': ['axFastify'],
      '@ax/sdk/koa': ['axKoa'],
      '@ax/sdk/nest': ['axNest', 'AxExecutorGuard', 'axCallOf'],
    };
    const script = `const expected = ${JSON.stringify(expected)};
      for (const [entry, names] of Object.entries(expected)) {
        const module = await import(entry);
        for (const name of names) if (typeof module[name] !== 'function') throw new Error(entry + ' does not export ' + name);
      }`;
    try {
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: join(scratch, 'app'), stdio: ['ignore', 'inherit', 'pipe'] });
    } catch (error) {
      problems.push(`importing the unpacked tarball failed: ${String(error.stderr ?? error.message).trim()}`);
    }
  }
  if (problems.length > 0) {
    for (const problem of problems) process.stderr.write(`check-pack: ${problem}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write(`check-pack: ${report[0].filename}: ${files.size} files, every exports entry present${dryRun ? '' : ' and importable from the unpacked tarball'}\n`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
