/**
 * Scenario harness (I/O): every scenario is its own Node process run by `bench/run.mjs` with a
 * time budget. It registers what it creates (databases, namespaces, process groups, temporary
 * directories) in a resources file, so that the runner can still clean up after killing it,
 * and it cleans up itself on normal end, on error and on SIGTERM.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const resourcesFile = process.env.BENCH_RESOURCES;
const resources = { databases: [], namespaces: [], pgids: [], dirs: [], bullPrefixes: [] };
const cleanups = [];

/** Records a created resource (kind: databases | namespaces | pgids | dirs | bullPrefixes). */
export function track(kind, value) {
  resources[kind].push(value);
  if (resourcesFile) writeFileSync(resourcesFile, JSON.stringify(resources));
}

/** Forgets a resource already cleaned up. */
export function untrack(kind, value) {
  resources[kind] = resources[kind].filter((v) => v !== value);
  if (resourcesFile) writeFileSync(resourcesFile, JSON.stringify(resources));
}

/** Registers a cleanup, run in reverse order of registration. */
export function onCleanup(fn) {
  cleanups.push(fn);
}

let cleaning;
async function runCleanups() {
  cleaning ??= (async () => {
    while (cleanups.length > 0) {
      const fn = cleanups.pop();
      try {
        await fn();
      } catch (error) {
        process.stderr.write(`bench cleanup failed: ${error instanceof Error ? error.message : String(error)}\n`);
      }
    }
  })();
  return cleaning;
}

/** `--name value` arguments and `BENCH_*` defaults. */
export function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      out[a.slice(2)] = argv[i + 1];
      i++;
    }
  }
  return out;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Calls `fn` every `intervalMs` until it returns something truthy (returned); throws after `timeoutMs`. */
export async function pollUntil(what, timeoutMs, fn, intervalMs = 50) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Logs a progress line to stderr (the runner shows it). */
export function log(message) {
  process.stderr.write(`  [${path.basename(process.argv[1] ?? '', '.mjs')} ${new Date().toISOString().slice(11, 23)}] ${message}\n`);
}

/**
 * Runs `main()`, writes its result object as JSON to `--out` (or stdout), cleans up; on
 * SIGTERM/SIGINT cleans up and exits 143.
 */
export async function runScenario(main) {
  const { out } = args();
  const onSignal = () => {
    log('stopped by signal: cleaning up');
    void runCleanups().finally(() => process.exit(143));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  let result;
  let failed;
  try {
    result = await main();
  } catch (error) {
    failed = error instanceof Error ? error : new Error(String(error));
  } finally {
    await runCleanups();
  }
  if (failed) {
    process.stderr.write(`${failed.stack ?? failed.message}\n`);
    result = { status: 'error', error: failed.message.split('\n')[0] };
  }
  const text = `${JSON.stringify(result, null, 2)}\n`;
  if (out) {
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, text);
  } else {
    process.stdout.write(text);
  }
  process.exit(failed ? 1 : 0);
}

/** Reads a resources file written by `track` (for the runner's fallback cleanup). */
export function readResources(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null; // never written: the scenario created nothing
  }
}

/** Removes a directory tree if present. */
export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}
