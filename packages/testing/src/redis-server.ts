/**
 * A PRIVATE Redis server for tests that must stop, kill or freeze Redis (fault drills): its own
 * port on 127.0.0.1 and its own working directory in a temp dir, so the machine's shared Redis
 * (6379) is never touched.
 *
 * ```ts
 * const redis = await startRedisServer();        // redis.url = redis://127.0.0.1:<port>
 * await redis.stop(); await redis.start();        // same port, same dir
 * await redis.cleanup();                          // stops it and removes its temp dir
 * ```
 *
 * By default nothing is persisted (`--save "" --appendonly no`): a restart comes back EMPTY,
 * like a Redis without persistence, or a failover to a replica that had not caught up. With
 * `persistence: 'aof'` every write is appended (`appendfsync always`) and survives `stop()` and
 * `kill()`.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startProcess, type ManagedProcess } from './processes.js';

/** Options of {@link startRedisServer}. */
export interface StartRedisServerOptions {
  /** TCP port on 127.0.0.1. Default: a free port. */
  readonly port?: number;
  /** `none` (default: a restart comes back empty) or `aof` (data survives a restart). */
  readonly persistence?: 'none' | 'aof';
  /** Extra `redis-server` arguments, appended last (so they win). Default `[]`. */
  readonly args?: readonly string[];
  /** How long to wait for "Ready to accept connections" on each start; default 20000 ms. */
  readonly readyTimeoutMs?: number;
}

/** A private Redis server. */
export interface PrivateRedis {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Its working directory (AOF files, if any). */
  readonly dir: string;
  /** Pid of the running server, `null` while stopped. */
  readonly pid: number | null;
  /** True while the server runs (also while frozen with SIGSTOP). */
  readonly running: boolean;
  /** Starts it again on the same port and directory (after `stop()` or `kill()`). */
  start(): Promise<void>;
  /** Clean shutdown (SIGTERM, SIGKILL after 10 s); waits until it is gone. */
  stop(): Promise<void>;
  /**
   * Sends `signal` (default SIGKILL: a crash). SIGSTOP/SIGCONT freeze and thaw it (it keeps
   * running); any other signal is waited for until the server is gone.
   */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Stops the server if it runs and removes its directory. Safe to call twice. */
  cleanup(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Debian's Redis server binary. */
export const REDIS_SERVER = '/usr/bin/redis-server';

/** True when this machine can run a private Redis. */
export function canRunRedisServer(): boolean {
  return existsSync(REDIS_SERVER);
}

/** Starts a private Redis server and waits until it accepts connections. */
export async function startRedisServer(options: StartRedisServerOptions = {}): Promise<PrivateRedis> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-redis-'));
  const port = options.port ?? (await freePort());
  const persistence =
    options.persistence === 'aof' ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  let proc: ManagedProcess | undefined;
  let cleaned = false;

  const launch = async (): Promise<void> => {
    if (cleaned) throw new Error('this Redis server was cleaned up');
    if (proc !== undefined) throw new Error(`redis-server already runs on port ${port}`);
    proc = await startProcess({
      name: `redis-private-${port}`,
      command: REDIS_SERVER,
      args: [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        ...persistence,
        '--daemonize',
        'no',
        '--protected-mode',
        'yes',
        ...(options.args ?? []),
      ],
      readyLine: /Ready to accept connections/,
      readyTimeoutMs: options.readyTimeoutMs ?? 20_000,
    });
  };

  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    if (proc === undefined) return;
    const running = proc;
    proc = undefined;
    if (signal === 'SIGKILL') {
      running.kill('SIGKILL');
      await running.stop({ graceMs: 5_000 });
      return;
    }
    running.kill('SIGCONT'); // in case it was frozen
    await running.stop({ graceMs: 10_000, signal });
  };

  await launch();
  const server: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    get pid() {
      return proc?.pid ?? null;
    },
    get running() {
      return proc !== undefined;
    },
    start: launch,
    stop: () => halt('SIGTERM'),
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (proc === undefined) return;
      if (signal === 'SIGSTOP' || signal === 'SIGCONT') {
        proc.kill(signal);
        return;
      }
      await halt(signal);
    },
    async cleanup() {
      if (cleaned) return;
      try {
        await halt('SIGKILL');
      } finally {
        cleaned = true;
        rmSync(dir, { recursive: true, force: true });
      }
    },
    [Symbol.asyncDispose]() {
      return server.cleanup();
    },
  };
  return server;
}
