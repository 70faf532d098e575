#!/usr/bin/env node
// Checks that packing ax-scheduler-sdk produces a working tarball.
//
//   node scripts/check-pack.mjs            `pnpm pack` for real (prepack cleans and builds dist/;
//                                          pnpm rewrites `workspace:` ranges as npm would publish
//                                          them), checks the packed package.json, unpacks the
//                                          tarball into a scratch node_modules and imports every
//                                          entry of `exports` from it with plain node
//   node scripts/check-pack.mjs --dry-run  `npm pack --dry-run --ignore-scripts`: only the file list
//                                          of the current dist/ (what the vitest check runs; needs a
//                                          prior `pnpm build`)
//
// Both fail (exit 1, one line per problem) when an `exports` target is not in the tarball, a test
// file is, or README.md, LICENSE or CHANGELOG.md is missing; the real pack also when the packed
// package.json keeps a `workspace:` range or names no licence or types.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
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
  // the dry run lists files only: npm can skip the lifecycle scripts, pnpm cannot
  const [tool, args] = dryRun
    ? ['npm', ['pack', '--json', '--pack-destination', scratch, '--dry-run', '--ignore-scripts']]
    : ['pnpm', ['pack', '--json', '--pack-destination', scratch]];
  const out = execFileSync(tool, args, { cwd: packageDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  // the lifecycle scripts' output comes before the JSON; npm prints an array, pnpm one object
  const parsed = JSON.parse(out.slice(Math.max(0, out.search(/^[[{]/m))));
  const report = Array.isArray(parsed) ? parsed[0] : parsed;
  const tarball = report.filename.startsWith('/') ? report.filename : join(scratch, report.filename);
  const files = new Set(report.files.map((f) => f.path));
  for (const target of exportTargets()) if (!files.has(target)) problems.push(`exports target ${target} is not in the tarball`);
  for (const file of files) if (/\.test\.|(^|\/)testing\//.test(file)) problems.push(`test file ${file} is in the tarball`);
  for (const doc of ['README.md', 'LICENSE', 'CHANGELOG.md']) if (!files.has(doc)) problems.push(`${doc} is not in the tarball`);

  if (!dryRun && problems.length === 0) {
    // Unpack as an app would install it, with its dependencies and the peers it imports at runtime.
    const modules = join(scratch, 'app', 'node_modules');
    const unpacked = join(modules, manifest.name);
    mkdirSync(unpacked, { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1']);
    const packed = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8'));
    for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const [dep, range] of Object.entries(packed[field] ?? {})) {
        if (String(range).startsWith('workspace:')) problems.push(`the packed package.json keeps ${field}.${dep}: ${range}`);
      }
    }
    if (packed.license !== 'Apache-2.0') problems.push(`the packed package.json says license ${packed.license}`);
    if (typeof packed.types !== 'string' || !files.has(packed.types.replace(/^\.\//, ''))) problems.push(`the packed package.json's types (${packed.types}) is not in the tarball`);
    for (const dep of [...Object.keys(manifest.dependencies ?? {}), '@nestjs/common']) {
      mkdirSync(dirname(join(modules, dep)), { recursive: true });
      symlinkSync(join(packageDir, 'node_modules', dep), join(modules, dep), 'dir');
    }
    const expected = {
      'ax-scheduler-sdk': ['verifyExecutorCall', 'createAxClient', 'syncAnswer', 'acceptedAnswer', 'axExecutorApp'],
      'ax-scheduler-sdk/express': ['axExecutor', 'captureRawBody'],
      'ax-scheduler-sdk/fastify': ['axFastify'],
      'ax-scheduler-sdk/koa': ['axKoa'],
      'ax-scheduler-sdk/nest': ['axNest', 'AxExecutorGuard', 'axCallOf'],
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
    process.stdout.write(`check-pack: ${basename(tarball)}: ${files.size} files, every exports entry present${dryRun ? '' : ' and importable from the unpacked tarball'}\n`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
