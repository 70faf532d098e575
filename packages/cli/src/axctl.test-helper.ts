/**
 * Test harness of the CLI: the admin API in-process on a free port against a fresh test
 * database (the admin API's own harness), and the BUILT CLI (`bin/axctl.js` → `dist/`, so
 * `pnpm build` first) spawned as a real process for its exit code, stdout and stderr.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';
import { run } from './main.js';
/* eslint-disable import-x/no-relative-packages -- test harness: the CLI's tests run the real admin API in-process
   through its own test harness; the CLI itself never imports the admin API. */
import { startTestApp, type TestApp } from '../../../services/admin-api/src/harness.test-helper.js';

export { insertInstance, startTestApp, taskDef, type TestApp } from '../../../services/admin-api/src/harness.test-helper.js';
/* eslint-enable import-x/no-relative-packages */

/** `packages/cli/bin/axctl.js`. */
export const AXCTL = fileURLToPath(new URL('../bin/axctl.js', import.meta.url));

/** How a run of the CLI ended. */
export interface AxctlResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout split into lines (no trailing empty line). */
  lines: string[];
  /** stderr split into lines. */
  errLines: string[];
  /** stdout as bytes (job output is not necessarily UTF-8). */
  stdoutBytes: Buffer;
}

/** Options of one run. */
export interface AxctlOptions {
  /** AX_TOKEN; null = unset. Default: the operator token of the test app. */
  token?: string | null;
  /** AX_URL; default the test app's. */
  url?: string | null;
  /** Bytes for stdin. */
  stdin?: string;
  /** Killed (SIGKILL) after this many ms; default 20000. */
  killAfterMs?: number;
  /** Called with each stdout chunk as it arrives. */
  onStdout?: (text: string) => void;
  /** Called with the process once started (to signal it). */
  onSpawn?: (child: ChildProcess) => void;
}

const running = new Set<ChildProcess>();

const splitLines = (text: string): string[] => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));

/** Runs `node bin/axctl.js …args` against the test app. */
export function axctl(app: TestApp | null, args: readonly string[], opts: AxctlOptions = {}): Promise<AxctlResult> {
  const env: Record<string, string | undefined> = { ...process.env, AX_URL: undefined, AX_TOKEN: undefined, NODE_OPTIONS: undefined };
  const url = opts.url === undefined ? app?.url : opts.url;
  if (url !== null && url !== undefined) env['AX_URL'] = url;
  const token = opts.token === undefined ? app?.tokens.operator : opts.token;
  if (token !== null && token !== undefined) env['AX_TOKEN'] = token;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [AXCTL, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    running.add(child);
    opts.onSpawn?.(child);
    const bytes: Buffer[] = [];
    const decoder = new StringDecoder('utf8');
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      bytes.push(d);
      opts.onStdout?.(decoder.write(d));
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin.end(opts.stdin ?? '');
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs ?? 20_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      running.delete(child);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      running.delete(child);
      const stdoutBytes = Buffer.concat(bytes);
      const stdout = stdoutBytes.toString('utf8');
      resolve({ code, stdout, stderr, lines: splitLines(stdout), errLines: splitLines(stderr), stdoutBytes });
    });
  });
}

/** Kills any CLI process still running; answers how many there were (a test should leave none). */
export function killLeftovers(): number {
  const n = running.size;
  for (const child of running) child.kill('SIGKILL');
  running.clear();
  return n;
}

/** Parses a `--json` stdout. */
export function json<T = Record<string, unknown>>(result: AxctlResult): T {
  return JSON.parse(result.stdout) as T;
}

/** Starts the test app (`overrides`: of its dependencies, e.g. quicker log stream timings). */
export function startApp(overrides: Parameters<typeof startTestApp>[0] = {}): Promise<TestApp> {
  return startTestApp(overrides);
}

/** Sum of the API's request counter for one route and method (to know a poll has happened). */
export async function requestCount(app: TestApp, method: string, route: string): Promise<number> {
  const metrics = await app.call('GET', '/metrics', { token: null });
  let total = 0;
  for (const line of String(metrics.body).split('\n')) {
    if (!line.startsWith('ax_admin_http_requests_total{')) continue;
    if (line.includes(`method="${method}"`) && line.includes(`route="${route}"`)) total += Number(line.split(' ').pop());
  }
  return total;
}

/**
 * Runs a command line in this process through the same `run` the binary calls (fast: no node
 * start-up), with the test app's URL and token in its environment.
 */
export async function axctlIn(app: TestApp | null, args: readonly string[], opts: Pick<AxctlOptions, 'token' | 'url' | 'onStdout'> & { signal?: AbortSignal } = {}): Promise<AxctlResult> {
  const env: Record<string, string> = {};
  const url = opts.url === undefined ? app?.url : opts.url;
  if (url !== null && url !== undefined) env['AX_URL'] = url;
  const token = opts.token === undefined ? app?.tokens.operator : opts.token;
  if (token !== null && token !== undefined) env['AX_TOKEN'] = token;
  const out: Buffer[] = [];
  const err: string[] = [];
  const io = {
    out: (l: string) => {
      out.push(Buffer.from(`${l}\n`));
      opts.onStdout?.(`${l}\n`);
    },
    err: (l: string) => void err.push(...l.split('\n')),
    write: (b: Uint8Array) => {
      out.push(Buffer.from(b));
      opts.onStdout?.(Buffer.from(b).toString('utf8'));
      return Promise.resolve();
    },
  };
  const code = await run(args, { env, io, ...(opts.signal === undefined ? {} : { signal: opts.signal }) });
  const stdoutBytes = Buffer.concat(out);
  const stdout = stdoutBytes.toString('utf8');
  const stderr = err.length === 0 ? '' : `${err.join('\n')}\n`;
  return { code, stdout, stderr, lines: splitLines(stdout), errLines: err, stdoutBytes };
}
