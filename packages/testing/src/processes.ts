/**
 * Real processes in tests (two schedulers, a killed worker…). Each process is spawned detached
 * into its own process group, so signals reach its children too; its output is kept (last N
 * lines) to print when a test fails. Every started process is registered: a test file's
 * `afterAll` calls `stopAllProcesses()` and then `assertNoLeftoverProcesses()`, which fails
 * (after killing them) if anything is still running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.js';

/** How a process ended. */
export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** One line of output. */
export interface OutputLine {
  readonly stream: 'stdout' | 'stderr';
  readonly text: string;
  /** `Date.now()` when it was read. */
  readonly atMs: number;
}

/** Options of `startProcess`. */
export interface StartProcessOptions {
  /** Label in output dumps and errors: `scheduler-1`. */
  readonly name: string;
  /** Executable, e.g. `process.execPath` for node. */
  readonly command: string;
  readonly args?: readonly string[];
  /** Variables set over the inherited environment; `undefined` removes one. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Start from `process.env` (default true) or from an empty environment. */
  readonly inheritEnv?: boolean;
  readonly cwd?: string;
  /** Ready once a GET of this URL answers 2xx (e.g. `http://127.0.0.1:<port>/healthz`). */
  readonly readyUrl?: string;
  /** Ready once an output line contains this string or matches this pattern. */
  readonly readyLine?: string | RegExp;
  /** How long to wait for readiness; default 20000 ms. */
  readonly readyTimeoutMs?: number;
  /** Output lines kept; default 500. */
  readonly keepLines?: number;
  /** Also print output as it comes (prefixed); default when `AX_TEST_ECHO=1`. */
  readonly echo?: boolean;
}

/** Options of `ManagedProcess.stop`. */
export interface StopOptions {
  /** Time between SIGTERM and SIGKILL, in ms; default 5000. */
  readonly graceMs?: number;
  /** Signal sent first; default SIGTERM. */
  readonly signal?: NodeJS.Signals;
}

/** A started process (and its process group). */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  /** Its process group id (= pid, since it leads its own group). */
  readonly pgid: number;
  /** How it ended, once it has. */
  readonly exitInfo: ExitInfo | undefined;
  /** The kept output lines, oldest first. */
  lines(): readonly OutputLine[];
  /** The kept output as text, each line prefixed with the name and stream. */
  output(): string;
  /** Prints the kept output to stderr. */
  dump(): void;
  /** Resolves with the first line (already kept or yet to come) that matches. */
  waitForLine(match: string | RegExp, timeoutMs?: number): Promise<string>;
  /** Calls `listener` with every line from now on (kept or not); returns the unsubscribe. */
  onLine(listener: (line: OutputLine) => void): () => void;
  /** Sends `signal` (default SIGTERM) to the whole group. */
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM to the group, SIGKILL after the grace; resolves when every member is gone. */
  stop(options?: StopOptions): Promise<ExitInfo>;
  /** Resolves when the main process has exited (rejects after `timeoutMs`, if given). */
  waitExit(timeoutMs?: number): Promise<ExitInfo>;
  /** Pids of live (non-zombie) members of its process group. */
  liveGroupMembers(): number[];
}

const registry = new Set<ManagedProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort if a test file forgot its afterAll: never leave groups behind the test process.
  process.on('exit', () => {
    for (const p of registry) signalGroup(p.pgid, 'SIGKILL');
  });
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Live (not zombie) processes of a process group. Reads /proc on Linux, where an orphaned
 * zombie (whose reaper is slow or absent) would otherwise look alive; elsewhere falls back to
 * `kill(-pgid, 0)`.
 */
export function liveProcessGroupMembers(pgid: number): number[] {
  if (!existsSync('/proc/self/stat')) {
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch {
      // ESRCH (no member) or EPERM (not ours): nothing of ours is alive there.
      return [];
    }
  }
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited while we were listing
    }
    // "pid (comm) state ppid pgrp …" — comm may contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = fields[0];
    if (Number(fields[2]) === pgid && state !== 'Z' && state !== 'X') members.push(Number(entry));
  }
  return members;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

class Managed implements ManagedProcess {
  readonly pid: number;
  readonly pgid: number;
  exitInfo: ExitInfo | undefined;
  readonly #lines: OutputLine[] = [];
  readonly #keep: number;
  readonly #lineListeners = new Set<(line: OutputLine) => void>();
  readonly #exited: Promise<ExitInfo>;

  constructor(
    readonly name: string,
    child: ChildProcess,
    keep: number,
    echo: boolean,
  ) {
    if (child.pid === undefined) throw new Error(`${name}: spawn failed`);
    this.pid = child.pid;
    this.pgid = child.pid;
    this.#keep = keep;
    this.#exited = new Promise<ExitInfo>((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      const readable = child[stream];
      if (!readable) continue;
      createInterface({ input: readable, crlfDelay: Infinity }).on('line', (text) => {
        const line: OutputLine = { stream, text, atMs: Date.now() };
        this.#lines.push(line);
        if (this.#lines.length > this.#keep) this.#lines.splice(0, this.#lines.length - this.#keep);
        if (echo) process.stderr.write(`[${name} ${stream}] ${text}\n`);
        for (const listener of this.#lineListeners) listener(line);
      });
    }
  }

  lines(): readonly OutputLine[] {
    return [...this.#lines];
  }

  output(): string {
    return this.#lines.map((l) => `[${this.name} ${l.stream}] ${l.text}`).join('\n');
  }

  dump(): void {
    const exit = this.exitInfo ? ` exited code=${this.exitInfo.code} signal=${this.exitInfo.signal}` : ' running';
    process.stderr.write(`--- ${this.name} (pid ${this.pid}${exit}), last ${this.#lines.length} lines ---\n${this.output()}\n`);
  }

  onLine(listener: (line: OutputLine) => void): () => void {
    this.#lineListeners.add(listener);
    return () => this.#lineListeners.delete(listener);
  }

  waitForLine(match: string | RegExp, timeoutMs = 10_000): Promise<string> {
    const test = (text: string): boolean => (typeof match === 'string' ? text.includes(match) : match.test(text));
    const kept = this.#lines.find((l) => test(l.text));
    if (kept) return Promise.resolve(kept.text);
    return new Promise<string>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#lineListeners.delete(listener);
      };
      const listener = (line: OutputLine): void => {
        if (!test(line.text)) return;
        done();
        resolve(line.text);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.name}: no output line matching ${String(match)} within ${timeoutMs} ms\n${this.output()}`));
      }, timeoutMs);
      this.#lineListeners.add(listener);
    });
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    signalGroup(this.pgid, signal);
  }

  liveGroupMembers(): number[] {
    return liveProcessGroupMembers(this.pgid);
  }

  async waitExit(timeoutMs?: number): Promise<ExitInfo> {
    if (timeoutMs === undefined) return this.#exited;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.#exited,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`${this.name} (pid ${this.pid}) did not exit within ${timeoutMs} ms\n${this.output()}`)),
            timeoutMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits until the main process has exited and the group is empty; false on timeout. */
  async #waitGone(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.exitInfo && this.liveGroupMembers().length === 0) return true;
      if (Date.now() >= deadline) return false;
      await sleep(25);
    }
  }

  async stop(options: StopOptions = {}): Promise<ExitInfo> {
    const graceMs = options.graceMs ?? 5_000;
    if (!(await this.#waitGone(0))) {
      this.kill(options.signal ?? 'SIGTERM');
      if (!(await this.#waitGone(graceMs))) {
        this.kill('SIGKILL');
        if (!(await this.#waitGone(5_000))) {
          throw new Error(
            `${this.name}: process group ${this.pgid} still alive after SIGKILL: ${this.liveGroupMembers().join(', ')}`,
          );
        }
      }
    }
    registry.delete(this);
    return this.#exited;
  }
}

/**
 * Spawns a process in its own group and waits for its readiness (`readyUrl` and/or
 * `readyLine`). If it exits or is not ready in time, it is killed and the error carries its
 * last output lines.
 */
export async function startProcess(options: StartProcessOptions): Promise<ManagedProcess> {
  installExitHook();
  const env: Record<string, string> = {};
  if (options.inheritEnv ?? true) {
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  }
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const child = spawn(options.command, [...(options.args ?? [])], {
    env,
    cwd: options.cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const spawnError = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', resolve);
  });
  if (spawnError) throw new Error(`${options.name}: cannot start ${options.command}: ${spawnError.message}`);
  child.on('error', () => undefined); // later errors (a failed kill) surface through stop()/exitInfo
  const proc = new Managed(options.name, child, options.keepLines ?? 500, options.echo ?? process.env.AX_TEST_ECHO === '1');
  registry.add(proc);

  const timeoutMs = options.readyTimeoutMs ?? 20_000;
  try {
    const readiness: Array<Promise<unknown>> = [];
    if (options.readyUrl !== undefined) {
      const url = options.readyUrl;
      readiness.push(
        waitFor(
          async () => {
            if (proc.exitInfo) throw new Error(`exited early: code=${proc.exitInfo.code} signal=${proc.exitInfo.signal}`);
            const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
            await res.arrayBuffer();
            return res.ok;
          },
          { description: `${options.name} ready at ${url}`, timeoutMs, intervalMs: 100 },
        ),
      );
    }
    if (options.readyLine !== undefined) readiness.push(proc.waitForLine(options.readyLine, timeoutMs));
    if (readiness.length > 0) {
      const exitedEarly = proc.waitExit().then((info) => {
        throw new Error(`exited before it was ready: code=${info.code} signal=${info.signal}`);
      });
      // Marked handled now: once the process is ready, its later exit is not an error here.
      exitedEarly.catch(() => undefined);
      await Promise.race([Promise.all(readiness), exitedEarly]);
    }
  } catch (error) {
    await proc.stop({ graceMs: 0 }).catch(() => undefined); // the readiness error is the one to report
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${options.name} did not become ready: ${message.split('\n', 1)[0]}\n${proc.output()}`, {
      cause: error,
    });
  }
  return proc;
}

/** Processes started and not yet stopped. */
export function runningProcesses(): readonly ManagedProcess[] {
  return [...registry];
}

/** Stops every registered process (in parallel); for a test file's `afterAll`. */
export async function stopAllProcesses(options: StopOptions = {}): Promise<void> {
  const results = await Promise.allSettled([...registry].map((p) => p.stop(options)));
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed.length > 0) throw new AggregateError(failed.map((r) => r.reason as unknown), 'stopAllProcesses failed');
}

/** Prints the kept output of every registered process (e.g. from `onTestFailed`). */
export function dumpAllProcessOutput(): void {
  for (const p of registry) p.dump();
}

/**
 * Throws if a started process (or any member of its group) is still alive, after killing it,
 * so the next test file starts clean. Call after `stopAllProcesses()` in `afterAll`.
 */
export function assertNoLeftoverProcesses(): void {
  const leftovers: string[] = [];
  for (const p of registry) {
    const live = p.liveGroupMembers();
    if (live.length > 0) {
      leftovers.push(`${p.name} (group ${p.pgid}: ${live.join(', ')})`);
      signalGroup(p.pgid, 'SIGKILL');
    } else if (p.exitInfo) {
      registry.delete(p);
    }
  }
  if (leftovers.length > 0) throw new Error(`processes left running (now killed): ${leftovers.join('; ')}`);
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('freePort: no TCP address');
  return address.port;
}

/** Whether `port` on 127.0.0.1 can be listened on right now. */
async function isPortFree(port: number): Promise<boolean> {
  const server = net.createServer();
  const ok = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (ok) await new Promise<void>((resolve) => server.close(() => resolve()));
  return ok;
}

/** The first of `count` consecutive ports free on 127.0.0.1 right now (a stack's health ports). */
export async function freePortRange(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const base = await freePort();
    if (base + count > 65_535) continue;
    let all = true;
    for (let p = base + 1; p < base + count && all; p += 1) all = await isPortFree(p);
    if (all) return base;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

let cachedRoot: string | undefined;

/** The repository root (the directory holding `pnpm-workspace.yaml`), found from this file. */
export function repoRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'pnpm-workspace.yaml'))) return (cachedRoot = dir);
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('repoRoot: pnpm-workspace.yaml not found above @ax/testing');
    dir = parent;
  }
}

/** Name of a service under `services/`. */
export type ServiceDir = 'scheduler' | 'broker' | 'worker' | 'admin-api';

/** Absolute path of `services/<name>/dist/main.js` (built by `pnpm build`). */
export function serviceEntry(name: ServiceDir): string {
  return path.join(repoRoot(), 'services', name, 'dist', 'main.js');
}

/**
 * Starts a built service with `node` on a free port (unless `AX_HTTP_PORT` is given in `env`)
 * and waits for its `/healthz`.
 */
export async function startService(
  service: ServiceDir,
  options: {
    name?: string;
    env?: Readonly<Record<string, string | undefined>>;
    readyTimeoutMs?: number;
    echo?: boolean;
    /** Flags for `node` itself (e.g. `--cpu-prof`, which NODE_OPTIONS refuses). */
    nodeArgs?: readonly string[];
  } = {},
): Promise<ManagedProcess & { readonly port: number; readonly baseUrl: string }> {
  const entry = serviceEntry(service);
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`pnpm build\` first`);
  const port = options.env?.AX_HTTP_PORT ? Number(options.env.AX_HTTP_PORT) : await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  // R25 (#44): a worker runs jobs under its teams' uids (AX_JOB_UIDS) or refuses to start; tests
  // about other things run their jobs as the worker unless they name AX_JOB_UIDS themselves.
  const isolation = service === 'worker' && options.env?.AX_JOB_UIDS === undefined && options.env?.AX_JOB_ISOLATION === undefined ? { AX_JOB_ISOLATION: 'off' } : {};
  const proc = await startProcess({
    name: options.name ?? service,
    command: process.execPath,
    args: [...(options.nodeArgs ?? []), entry],
    env: { ...isolation, ...options.env, AX_HTTP_PORT: String(port) },
    readyUrl: `${baseUrl}/healthz`,
    ...(options.readyTimeoutMs !== undefined ? { readyTimeoutMs: options.readyTimeoutMs } : {}),
    ...(options.echo !== undefined ? { echo: options.echo } : {}),
  });
  return Object.assign(proc, { port, baseUrl });
}
