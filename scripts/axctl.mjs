#!/usr/bin/env node
// `pnpm axctl …` (the root script "axctl": "node scripts/axctl.mjs"): runs the CLI of this
// checkout, packages/cli, with the given arguments, building it first when needed.
//
// - Build: `tsc -b packages/cli` (which builds what it references, @ax/core, too), only when
//   packages/cli/dist/main.js is missing or a source of those projects (their src/ folders,
//   tsconfig.json, package.json, the base tsconfig) is newer than the last build this launcher
//   ran. The build's output goes to stderr, so stdout stays the command's. Up to date (the
//   common path), this costs a few stat calls, no tsc.
// - Run: the CLI in this process (bin/axctl.js), so stdin, stdout, stderr, signals and the exit
//   code are the CLI's own.
// - pnpm 12 passes a `--` through to the script; a leading one is dropped, so
//   `pnpm axctl -- tasks list` works as with npm.
// - pnpm runs root scripts in the root; relative paths (`tasks apply -f tasks.yaml`) are
//   resolved from where pnpm was started (INIT_CWD) instead.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cliDir = path.join(root, 'packages', 'cli');
const builtMain = path.join(cliDir, 'dist', 'main.js');
/** Written after each successful build; its time is when that build started. */
const stampFile = path.join(cliDir, 'dist', '.axctl-built');

/** Reads a tsconfig (JSON that may have comments and trailing commas). */
function readTsconfig(file) {
  const text = readFileSync(file, 'utf8');
  let json = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      json += c;
      if (c === '\\') json += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      json += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      json += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else {
      json += c;
    }
  }
  return JSON.parse(json.replace(/,(\s*[}\]])/g, '$1'));
}

/** The project folders `tsc -b packages/cli` builds: packages/cli and its references, recursively. */
function projects(dir, seen = new Set()) {
  if (seen.has(dir)) return seen;
  seen.add(dir);
  const config = readTsconfig(path.join(dir, 'tsconfig.json'));
  for (const ref of config.references ?? []) projects(path.resolve(dir, ref.path), seen);
  return seen;
}

/** Newest modification time (ms) of a folder's files and sub-folders (a new or removed file changes its folder's time). */
function newestUnder(dir) {
  let newest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Why the CLI must be built, or undefined when its build is up to date. */
function buildReason() {
  if (!existsSync(builtMain)) return 'packages/cli/dist is missing';
  if (!existsSync(stampFile)) return 'first run of this launcher';
  const built = statSync(stampFile).mtimeMs;
  const inputs = [path.join(root, 'tsconfig.base.json')];
  for (const dir of projects(cliDir)) {
    inputs.push(path.join(dir, 'tsconfig.json'), path.join(dir, 'package.json'));
    if (existsSync(path.join(dir, 'src'))) inputs.push(path.join(dir, 'src'));
  }
  for (const input of inputs) {
    if (!existsSync(input)) continue;
    const time = statSync(input).isDirectory() ? newestUnder(input) : statSync(input).mtimeMs;
    if (time > built) return `${path.relative(root, input)} changed`;
  }
  return undefined;
}

function build(reason) {
  let tsc;
  try {
    tsc = createRequire(path.join(root, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    process.stderr.write('axctl: cannot build packages/cli: typescript is not installed (run pnpm install)\n');
    process.exit(1);
  }
  // Without dist/ but with its tsbuildinfo, tsc -b thinks the project is up to date: --force.
  const tscArgs = existsSync(builtMain) ? ['-b', 'packages/cli'] : ['-b', '--force', 'packages/cli'];
  process.stderr.write(`axctl: building packages/cli (${reason}): tsc ${tscArgs.join(' ')}\n`);
  const started = new Date();
  const result = spawnSync(process.execPath, [tsc, ...tscArgs], { cwd: root, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) {
    const why = result.error !== undefined ? result.error.message : result.signal !== null ? `killed by ${result.signal}` : `exit code ${result.status}`;
    process.stderr.write(`axctl: building packages/cli failed (${why}); see the errors above\n`);
    process.exit(1);
  }
  if (!existsSync(builtMain)) {
    process.stderr.write(`axctl: building packages/cli wrote no ${path.relative(root, builtMain)}\n`);
    process.exit(1);
  }
  closeSync(openSync(stampFile, 'w'));
  // Stamped with the time the build started: a source saved during the build is newer.
  utimesSync(stampFile, started, started);
}

const reason = buildReason();
if (reason !== undefined) build(reason);

const args = process.argv.slice(2);
if (args[0] === '--') args.shift();
const initCwd = process.env.INIT_CWD;
if (initCwd !== undefined && /\bscripts[\\/]axctl\.mjs\b/.test(process.env.npm_lifecycle_script ?? '') && existsSync(initCwd)) {
  process.chdir(initCwd);
}
process.argv.splice(2, Infinity, ...args);
await import(pathToFileURL(path.join(cliDir, 'bin', 'axctl.js')).href);
