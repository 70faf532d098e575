#!/usr/bin/env node
// Packs axctl for a machine without a checkout: `node scripts/pack-axctl.mjs [OUT_DIR]` writes
// OUT_DIR/axctl-<version>.tgz (default OUT_DIR: dist/ at the root) and prints its path.
// Install it with `npm install -g ./axctl-<version>.tgz`: it needs only Node and npm.
//
// The CLI (packages/cli/src, entry packages/cli/pack/axctl-entry.js) is bundled by vite (SSR
// build for Node) from its sources into one ES module, dist/axctl.js, with whatever it imports
// from workspace packages (@ax/core, resolved to their sources as the tests do) and from npm
// packages. So the package has no dependencies at all: npm installs it without a registry and
// without the unpublished @ax/* packages. A bundle that still imports anything but Node's
// built-in modules is refused. The same sources give the same tarball, byte for byte.
// The version is packages/cli/package.json's.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
const cliDir = path.join(root, 'packages', 'cli');
const entry = path.join(cliDir, 'pack', 'axctl-entry.js');

/** A failure told as one line (`pack-axctl: …`), exit 1. */
class PackError extends Error {}
function fail(message) {
  throw new PackError(message);
}

const argv = process.argv.slice(2);
if (argv.includes('-h') || argv.includes('--help')) {
  process.stdout.write('usage: node scripts/pack-axctl.mjs [OUT_DIR]   (default OUT_DIR: dist/ at the repository root)\n');
  process.exit(0);
}
if (argv.length > 1 || argv[0]?.startsWith('-')) {
  process.stderr.write('pack-axctl: usage: node scripts/pack-axctl.mjs [OUT_DIR]\n');
  process.exit(2);
}
// Run as a package script (`pnpm pack:axctl out/`), pnpm starts in the root: a relative
// OUT_DIR is taken from where pnpm was started (INIT_CWD).
const initCwd = process.env.INIT_CWD;
const fromScript = initCwd !== undefined && /\bscripts[\\/]pack-axctl\.mjs\b/.test(process.env.npm_lifecycle_script ?? '');
const outDir = argv[0] === undefined ? path.join(root, 'dist') : path.resolve(fromScript ? initCwd : process.cwd(), argv[0]);

const cli = JSON.parse(readFileSync(path.join(cliDir, 'package.json'), 'utf8'));
const rootManifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

const stage = mkdtempSync(path.join(tmpdir(), 'ax-pack-axctl-'));
try {
  const pkgDir = path.join(stage, 'package');
  // The bundle names each module's path relative to the working folder: the same from anywhere.
  process.chdir(root);
  const result = await build({
    configFile: false,
    root: cliDir,
    envDir: false,
    publicDir: false,
    logLevel: 'warn',
    resolve: { alias: [{ find: /^@ax\/([a-z-]+)$/, replacement: `${root}packages/$1/src/index.ts` }] },
    // Bundle everything but Node's built-ins.
    ssr: { target: 'node', noExternal: true },
    build: {
      ssr: entry,
      outDir: path.join(pkgDir, 'dist'),
      emptyOutDir: true,
      target: 'node20',
      minify: false,
      sourcemap: false,
      copyPublicDir: false,
      reportCompressedSize: false,
      rolldownOptions: {
        output: { format: 'es', entryFileNames: 'axctl.js', chunkFileNames: '[name]-[hash].js', banner: '#!/usr/bin/env node' },
      },
    },
  });
  const chunks = (Array.isArray(result) ? result : [result]).flatMap((r) => r.output).filter((o) => o.type === 'chunk');
  const ownChunks = new Set(chunks.map((c) => c.fileName));
  const foreign = [...new Set(chunks.flatMap((c) => [...c.imports, ...c.dynamicImports]))].filter((i) => !ownChunks.has(i) && !isBuiltin(i));
  if (foreign.length > 0) fail(`the bundle still imports ${foreign.join(', ')}; only Node's built-in modules may stay outside it`);
  chmodSync(path.join(pkgDir, 'dist', 'axctl.js'), 0o755);

  const manifest = {
    name: 'axctl',
    version: cli.version,
    description: 'axctl, the command line of the ax admin API (bundled: no dependencies)',
    // Built from the workspace; not for a registry.
    private: true,
    type: 'module',
    bin: { axctl: 'dist/axctl.js' },
    files: ['dist'],
    engines: rootManifest.engines ?? { node: '>=20' },
  };
  writeFileSync(path.join(pkgDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);

  mkdirSync(outDir, { recursive: true });
  // npm pack of a folder with no dependencies and no scripts: no registry, no workspace.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')));
  const packed = spawnSync('npm', ['pack', pkgDir, '--pack-destination', outDir, '--json', '--ignore-scripts', '--loglevel=error'], {
    cwd: stage,
    env,
    encoding: 'utf8',
  });
  if (packed.error !== undefined) fail(`cannot run npm pack: ${packed.error.message}`);
  if (packed.status !== 0) fail(`npm pack failed (exit code ${packed.status}):\n${packed.stderr}`);
  const [info] = JSON.parse(packed.stdout);
  const tarball = path.join(outDir, info.filename);
  process.stderr.write(`pack-axctl: axctl ${manifest.version}: ${info.entryCount} files, ${(info.size / 1024).toFixed(1)} kB packed, ${(info.unpackedSize / 1024).toFixed(1)} kB unpacked\n`);
  process.stdout.write(`${tarball}\n`);
} catch (err) {
  if (!(err instanceof PackError)) throw err;
  process.stderr.write(`pack-axctl: ${err.message}\n`);
  process.exitCode = 1;
} finally {
  rmSync(stage, { recursive: true, force: true });
}
