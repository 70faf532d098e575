// Runs test files again and again to find the ones that fail only sometimes (#49), and says
// which tests failed and how. A test that fails one run in twenty asserts something the
// protocol does not promise (an order, a count at an instant, a time) or waits for the wrong
// thing; docs/testing.md lists what to look for. Never cure it with vitest's `retry`.
//
// Usage: node scripts/repeat-tests.mjs [options] [file-or-directory ...]
//   file-or-directory  test files, or directories whose server-backed test files to run;
//                      default: every server-backed test file (see below) of the ordinary suite
//   --runs N           runs of each file, default 5
//   --load             meanwhile keep a second vitest process busy with the other test files
//                      (server-backed ones not selected), restarted whenever it ends, so the
//                      selected files run on a loaded machine as they do in CI
//   --max-minutes M    budget for the whole script, default 30: no run starts after it; a run
//                      still going then may finish within --grace-minutes (default 3), after
//                      which it is stopped and reported as such (a stopped file's afterAll does
//                      not run: its test database and namespace stay behind)
//   --grace-minutes G  how long a run going at the budget's end may still take, default 3
//   --out DIR          where the per-run JSON reports go, default .repeat-tests/
//   --list             print the files that would run and exit
//
// A file is *server-backed* when it, or a local module it imports (followed through relative
// imports, e.g. a harness), uses one of @ax/testing's server helpers (createTestDatabase,
// createTestRedis, createTestAmqp, test*Url, startService, the private server starters).
// Test files under test/chaos are never selected (they stop servers; `pnpm test:chaos`).
//
// Runs go round by round (run 1 of every file, then run 2 …), so a budget that ends early
// still leaves every file with the same number of runs. Each run is
// `npx vitest run <file> --reporter=json --outputFile=<out>/<file>.<run>.json`.
// The report: files × runs, the passes per file, and for every file that ever failed, each
// failing run with its failing test names and the first line of each error. Exits 1 when any
// run failed, 0 when all passed, 2 on bad arguments.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const SERVER_HELPERS =
  /\b(createTestDatabase|createTestRedis|createTestAmqp|testServerUrl|testRedisUrl|testAmqpUrl|startService|startMariaDb|startRabbitMq|startRabbitMqCluster|startRedisServer|startRedisSentinelGroup)\b/;
/** Where the ordinary suite's test files live (vitest.config.ts `include`). */
const TEST_ROOTS = ['packages', 'services', 'test', 'bench/lib'];

function usage(message) {
  if (message) console.error(`repeat-tests: ${message}`);
  console.error('usage: node scripts/repeat-tests.mjs [--runs N] [--load] [--max-minutes M] [--grace-minutes G] [--out DIR] [--list] [file-or-directory ...]');
  process.exit(2);
}

function parseArgs(argv) {
  const o = { runs: 5, load: false, maxMinutes: 30, graceMinutes: 3, out: path.join(root, '.repeat-tests'), list: false, targets: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) usage(`${a} needs a value`);
      return v;
    };
    if (a === '--runs') o.runs = Number(value());
    else if (a === '--max-minutes') o.maxMinutes = Number(value());
    else if (a === '--grace-minutes') o.graceMinutes = Number(value());
    else if (a === '--out') o.out = path.resolve(value());
    else if (a === '--load') o.load = true;
    else if (a === '--list') o.list = true;
    else if (a === '--help' || a === '-h') usage();
    else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else o.targets.push(a);
  }
  if (!Number.isInteger(o.runs) || o.runs < 1) usage('--runs must be a positive integer');
  if (!(o.maxMinutes > 0)) usage('--max-minutes must be a positive number');
  if (!(o.graceMinutes >= 0)) usage('--grace-minutes must be a number ≥ 0');
  return o;
}

/** Every *.test.ts below `dir` (relative to the repository), skipping dist, node_modules and test/chaos. */
function testFilesUnder(dir) {
  const found = [];
  const walk = (rel) => {
    const abs = path.join(root, rel);
    if (!existsSync(abs)) return;
    if (statSync(abs).isFile()) {
      if (rel.endsWith('.test.ts')) found.push(rel);
      return;
    }
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
      const child = path.join(rel, entry.name);
      if (child.split(path.sep).join('/').startsWith('test/chaos')) continue;
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith('.test.ts')) found.push(child);
    }
  };
  walk(dir);
  return found.sort();
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;
const serverCache = new Map();

/** Whether `abs` or a local module it imports (transitively) uses a server helper. */
function usesServers(abs, seen = new Set()) {
  if (serverCache.has(abs)) return serverCache.get(abs);
  if (seen.has(abs) || !existsSync(abs)) return false;
  seen.add(abs);
  const text = readFileSync(abs, 'utf8');
  let result = SERVER_HELPERS.test(text);
  if (!result) {
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2];
      const base = path.resolve(path.dirname(abs), spec);
      const candidates = [base, base.replace(/\.m?js$/, '.ts'), `${base}.ts`, path.join(base, 'index.ts')];
      const next = candidates.find((c) => existsSync(c) && statSync(c).isFile());
      if (next !== undefined && usesServers(next, seen)) {
        result = true;
        break;
      }
    }
  }
  serverCache.set(abs, result);
  return result;
}

const serverBacked = (rel) => usesServers(path.join(root, rel));

function selectFiles(targets) {
  if (targets.length === 0) return TEST_ROOTS.flatMap(testFilesUnder).filter(serverBacked);
  const files = [];
  for (const t of targets) {
    const rel = path.relative(root, path.resolve(t));
    if (!existsSync(path.join(root, rel))) usage(`no such file or directory: ${t}`);
    // A file named explicitly runs whatever it touches; a directory contributes its server-backed files.
    files.push(...(statSync(path.join(root, rel)).isFile() ? [rel] : testFilesUnder(rel).filter(serverBacked)));
  }
  return [...new Set(files)];
}

/** Starts `npx vitest run …` in its own process group; resolves with its exit code (or signal). */
function vitest(args, { quiet }) {
  const child = spawn('npx', ['vitest', 'run', ...args], { cwd: root, detached: true, stdio: quiet ? 'ignore' : ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const keep = (chunk) => {
    tail = (tail + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const done = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, tail })));
  const stop = () => {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // the group already ended
    }
  };
  return { done, stop };
}

/** The failed tests of one JSON report: `[{ name, error }]`, plus file-level failures. */
function failuresOf(reportFile) {
  const report = JSON.parse(readFileSync(reportFile, 'utf8'));
  const out = [];
  let ran = 0;
  for (const result of report.testResults ?? []) {
    const tests = result.assertionResults ?? [];
    for (const t of tests) {
      if (t.status === 'passed' || t.status === 'failed') ran++;
      if (t.status !== 'failed') continue;
      const first = String((t.failureMessages ?? [])[0] ?? '').split('\n')[0].trim().slice(0, 300);
      out.push({ name: [...(t.ancestorTitles ?? []), t.title ?? t.fullName ?? '?'].join(' > '), error: first });
    }
    if (result.status === 'failed' && !tests.some((t) => t.status === 'failed')) {
      out.push({ name: '(outside its tests: a hook or the file itself)', error: String(result.message ?? '').split('\n')[0].trim().slice(0, 300) });
    }
  }
  if (ran === 0 && out.length === 0) out.push({ name: '(no test ran)', error: 'the report lists no executed test' });
  return out;
}

const opts = parseArgs(process.argv.slice(2));
const files = selectFiles(opts.targets);
if (files.length === 0) usage('no test file selected');
if (opts.list) {
  for (const f of files) console.log(f);
  process.exit(0);
}
mkdirSync(opts.out, { recursive: true });
const started = Date.now();
const deadline = started + opts.maxMinutes * 60_000;
const minutes = (ms) => (ms / 60_000).toFixed(1);

// The load: the other server-backed files, one vitest process at a time, for as long as we run.
let load;
let loadRounds = 0;
let stopping = false;
if (opts.load) {
  const selected = new Set(files);
  const others = TEST_ROOTS.flatMap(testFilesUnder).filter((f) => !selected.has(f) && serverBacked(f));
  if (others.length === 0) console.log('repeat-tests: --load has no other server-backed file to run; no load');
  else {
    const again = () => {
      if (stopping || Date.now() >= deadline) return;
      loadRounds++;
      load = vitest(['--reporter=dot', ...others], { quiet: true });
      load.done.then(again, again);
    };
    again();
  }
}

const runs = new Map(files.map((f) => [f, []]));
/** Runs stopped at the end of the budget (neither passed nor failed). */
const stoppedRuns = [];
/** The run in progress, stopped with the script. */
let current;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopping = true;
    load?.stop();
    current?.stop();
    process.exit(130);
  });
}

outer: for (let run = 1; run <= opts.runs; run++) {
  for (const file of files) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break outer;
    const reportFile = path.join(opts.out, `${file.replaceAll('/', '__')}.${run}.json`);
    const t0 = Date.now();
    const child = vitest([file, '--reporter=json', `--outputFile=${reportFile}`], { quiet: false });
    current = child;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.stop();
    }, remaining + opts.graceMinutes * 60_000);
    // A report left by an earlier invocation must not be read as this run's.
    const before = existsSync(reportFile) ? statSync(reportFile).mtimeMs : -1;
    const { code, signal, tail } = await child.done;
    clearTimeout(timer);
    const seconds = Math.round((Date.now() - t0) / 1000);
    let failures;
    if (timedOut) {
      // Not a failure of the file: the budget ran out. Counted apart, and not as a run.
      console.log(`[${minutes(Date.now() - started)} min] run ${run}/${opts.runs} ${file}: stopped (still running ${opts.graceMinutes} min after the budget)`);
      stoppedRuns.push(`${file} run ${run}`);
      break outer;
    } else if (!existsSync(reportFile) || statSync(reportFile).mtimeMs === before) {
      const last = tail.trim().split('\n').filter(Boolean).slice(-1)[0] ?? '';
      failures = [{ name: '(no report)', error: `vitest exited ${code ?? signal} without writing its report: ${last.slice(0, 300)}` }];
    } else failures = failuresOf(reportFile);
    runs.get(file).push({ run, seconds, failures });
    console.log(`[${minutes(Date.now() - started)} min] run ${run}/${opts.runs} ${file}: ${failures.length === 0 ? 'passed' : `FAILED (${failures.length})`} in ${seconds} s`);
  }
}
stopping = true;
load?.stop();

// The report.
const done = [...runs.values()].map((r) => r.length);
const lines = [];
lines.push('');
lines.push(`repeat-tests: ${files.length} files × ${Math.min(...done)}${Math.max(...done) !== Math.min(...done) ? `–${Math.max(...done)}` : ''} runs (asked ${opts.runs}) in ${minutes(Date.now() - started)} min${opts.load ? `, under load (${loadRounds} load rounds)` : ''}`);
const width = Math.max(...files.map((f) => f.length));
for (const [file, r] of runs) {
  const failed = r.filter((x) => x.failures.length > 0).length;
  lines.push(`  ${file.padEnd(width)}  ${r.length - failed}/${r.length} passed${failed > 0 ? `  ← ${failed} failed` : ''}`);
}
if (stoppedRuns.length > 0) lines.push(`stopped at the end of the budget, not counted: ${stoppedRuns.join(', ')}`);
const flaky = [...runs].filter(([, r]) => r.some((x) => x.failures.length > 0));
if (flaky.length === 0) lines.push('no run failed');
else {
  lines.push('');
  lines.push(`${flaky.length} file(s) failed at least once:`);
  for (const [file, r] of flaky) {
    lines.push(`  ${file}`);
    for (const x of r.filter((y) => y.failures.length > 0)) {
      for (const f of x.failures) lines.push(`    run ${x.run}: ${f.name}${f.error ? `: ${f.error}` : ''}`);
    }
  }
}
console.log(lines.join('\n'));
process.exit(flaky.length > 0 ? 1 : 0);
