/**
 * A private MariaDB server for tests that must change server settings (a non-UTC
 * `default-time-zone`) or stop, kill and restart the database (fault drills), which the shared
 * server must never see.
 *
 * ```ts
 * const db = await startMariaDb({ args: ['--default-time-zone=+08:00'] });
 * // db.url = mysql://root@127.0.0.1:<port>
 * await db.stop(); await db.start();   // same datadir, same port, data kept
 * await db.cleanup();                  // stops it and removes its temp dir
 * ```
 *
 * The data directory is made by `mariadb-install-db --no-defaults
 * --auth-root-authentication-method=normal --skip-test-db`, so `root` logs in without a
 * password over TCP with the grant tables in force (no `--skip-grant-tables`: auth behaves as in
 * production and users/grants can be tested). `mariadbd` runs with `--no-defaults` so no
 * `/etc/mysql` setting leaks in, bound to 127.0.0.1 only. Nothing is printed on success; a
 * failure throws with the tail of the server's error log.
 */
import { spawn, execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';

export interface StartMariaDbOptions {
  /** TCP port on 127.0.0.1. Default: a free port chosen by binding port 0. */
  port?: number;
  /**
   * Extra `mariadbd` arguments, appended after the defaults (so they win), e.g.
   * `['--default-time-zone=+08:00']`. Default `[]`.
   */
  args?: readonly string[];
  /** Milliseconds to wait for the server to answer after each start. Default `30_000`. */
  startTimeoutMs?: number;
  /** Milliseconds `stop()` waits after SIGTERM before it sends SIGKILL. Default `30_000`. */
  stopTimeoutMs?: number;
  /** Folder in which the server's temp dir is made (e.g. a tmpfs). Default `os.tmpdir()`. */
  parentDir?: string;
  /**
   * A folder kept between runs instead of a temp dir (the bench's history database, built once):
   * the data directory is installed only when `<keepDir>/data` does not exist yet, and
   * `cleanup()` stops the server but leaves the folder. `parentDir` is then ignored.
   */
  keepDir?: string;
}

export interface MariaDbServer {
  /** `mysql://root@127.0.0.1:<port>`, no database. */
  readonly url: string;
  readonly port: number;
  /** The temp dir holding `data/`, the socket, pid file and `error.log`. */
  readonly dir: string;
  /** Pid of the running `mariadbd`, `null` while stopped. */
  readonly pid: number | null;
  /** Starts it again on the same datadir and port (after `stop()` or `kill()`). */
  start(): Promise<void>;
  /** Clean shutdown (SIGTERM, then SIGKILL after `stopTimeoutMs`); waits for the exit. */
  stop(): Promise<void>;
  /**
   * Sends `signal` (default SIGKILL: a crash). Waits for the exit, except for signals that
   * leave mariadbd alive (SIGSTOP to freeze it, SIGCONT to thaw it, SIGHUP, SIGUSR1 …).
   */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Kills the server if it runs and removes its temp dir. Safe to call twice. */
  cleanup(): Promise<void>;
  /** Last lines of the server's error log (for assertion messages). */
  logTail(lines?: number): Promise<string>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Error of a private server that could not be prepared or started. */
export class MariaDbStartError extends Error {
  override name = 'MariaDbStartError';
}

/** Signals after which mariadbd lives on (frozen, thawed, or reloading its logs). */
const NON_TERMINATING_SIGNALS: ReadonlySet<string> = new Set([
  'SIGSTOP',
  'SIGTSTP',
  'SIGCONT',
  'SIGTTIN',
  'SIGTTOU',
  'SIGHUP',
  'SIGUSR1',
  'SIGUSR2',
  'SIGWINCH',
]);

/** Looks a program up on PATH plus the sbin folders Debian keeps `mariadbd` in. */
function findProgram(names: readonly string[]): string {
  const dirs = [
    ...(process.env['PATH'] ?? '').split(delimiter),
    '/usr/sbin',
    '/usr/local/sbin',
    '/usr/bin',
    '/usr/local/bin',
    '/usr/local/mysql/bin',
  ].filter((d) => d !== '');
  for (const name of names) {
    for (const dir of dirs) {
      const candidate = join(dir, name);
      if (existsSync(candidate)) return candidate;
    }
  }
  throw new MariaDbStartError(`none of ${names.join(', ')} found on PATH or in /usr/sbin`);
}

/**
 * True when `mariadbd` and `mariadb-install-db` are installed (on PATH or in the sbin folders
 * {@link startMariaDb} looks in): a test that needs a private server checks this first and
 * skips (or, under CI, fails) with `missingRequirement` instead of failing deep in its setup.
 */
export function canRunMariaDb(): boolean {
  try {
    findProgram(['mariadbd', 'mysqld']);
    findProgram(['mariadb-install-db', 'mysql_install_db']);
    return true;
  } catch {
    return false;
  }
}

/** A TCP port nobody listens on right now (bind port 0 on 127.0.0.1, read it, close). */
export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

function runQuiet(file: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err === null) return resolve();
      const output = `${stdout}\n${stderr}`.trim().split('\n').slice(-15).join('\n');
      reject(new MariaDbStartError(`${file} failed: ${err.message}\n${output}`));
    });
  });
}

async function tail(path: string, lines: number): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no error log)';
  }
}

function waitForExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function answers(port: number): Promise<boolean> {
  let conn: mysql.Connection | null = null;
  try {
    conn = await mysql.createConnection({
      host: '127.0.0.1',
      port,
      user: 'root',
      connectTimeout: 1_000,
    });
    await conn.query('SELECT 1');
    return true;
  } catch {
    return false; // not up yet: the caller polls until its deadline
  } finally {
    if (conn !== null) conn.destroy();
  }
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Prepares a temp datadir, starts a private `mariadbd` on it and waits until it answers. */
export async function startMariaDb(opts: StartMariaDbOptions = {}): Promise<MariaDbServer> {
  const mariadbd = findProgram(['mariadbd', 'mysqld']);
  const installDb = findProgram(['mariadb-install-db', 'mysql_install_db']);
  const keep = opts.keepDir !== undefined;
  if (keep) mkdirSync(opts.keepDir as string, { recursive: true });
  const dir = keep ? (opts.keepDir as string) : await mkdtemp(join(opts.parentDir ?? tmpdir(), 'ax-mariadb-'));
  const dataDir = join(dir, 'data');
  const installed = keep && existsSync(dataDir);
  // Its own temp dir, for the bootstrap too: in the shared /tmp a file of the bootstrap's
  // temporary tables vanished under it once in CI ("Could not remove temporary table
  // '/tmp/#sql-temptable-…', error: 2" → "Unknown table 'mysql.tmp_user_sys'"), failing a drill
  // before it began. Inside the server's own folder nothing else touches them.
  const tmpDir = join(dir, 'tmp');
  await mkdir(tmpDir, { recursive: true });
  const errorLog = join(dir, 'error.log');
  const userArgs = opts.args ?? [];
  const startTimeoutMs = opts.startTimeoutMs ?? 30_000;
  const stopTimeoutMs = opts.stopTimeoutMs ?? 30_000;
  const userFlag = isRoot ? ['--user=root'] : [];

  let child: ChildProcess | null = null;
  let port = opts.port ?? 0;
  let cleaned = false;

  // Last resort if the test process exits without cleanup(): no stray server, no temp dir.
  const onExit = (): void => {
    if (child !== null && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
    }
    if (!keep) rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', onExit);

  const serverArgs = (): string[] => [
    '--no-defaults',
    `--datadir=${dataDir}`,
    `--socket=${join(dir, 'mysqld.sock')}`,
    `--pid-file=${join(dir, 'mysqld.pid')}`,
    `--tmpdir=${tmpDir}`,
    `--log-error=${errorLog}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    ...userFlag,
    // Small and container-friendly: many private servers may run side by side.
    '--innodb-buffer-pool-size=64M',
    '--innodb-use-native-aio=0',
    ...userArgs,
  ];

  /** One attempt to start on `port`; resolves when it answers, rejects if it exits first. */
  const launch = async (): Promise<void> => {
    const proc = spawn(mariadbd, serverArgs(), { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4_000);
    });
    // Only the child handle (ref'd while starting and stopping) may keep this process alive.
    (proc.stderr as (NodeJS.ReadableStream & { unref?: () => void }) | null)?.unref?.();
    child = proc;
    const exited = waitForExit(proc).then(() => 'exited' as const);
    const deadline = Date.now() + startTimeoutMs;
    while (Date.now() < deadline) {
      const outcome = await Promise.race([answers(port), exited]);
      if (outcome === true) {
        proc.unref(); // running, it must not keep the test process alive (the exit hook kills it)
        return;
      }
      if (outcome === 'exited') {
        child = null;
        const log = await tail(errorLog, 20);
        throw new MariaDbStartError(
          `mariadbd exited during start (code ${proc.exitCode ?? proc.signalCode}) on port ${port}:\n${stderr.trim()}\n${log}`,
        );
      }
      await Promise.race([sleep(50), exited]);
    }
    proc.kill('SIGKILL');
    await waitForExit(proc);
    child = null;
    throw new MariaDbStartError(
      `mariadbd did not answer on 127.0.0.1:${port} within ${startTimeoutMs} ms:\n${await tail(errorLog, 20)}`,
    );
  };

  const stopWith = async (signal: NodeJS.Signals, graceMs: number): Promise<void> => {
    const proc = child;
    if (proc === null) return;
    proc.ref(); // keep this process alive until the server has exited
    const exited = waitForExit(proc);
    proc.kill(signal);
    if (signal !== 'SIGKILL' && signal !== 'SIGCONT') proc.kill('SIGCONT'); // in case it was stopped
    const escalate = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    try {
      await exited;
    } finally {
      clearTimeout(escalate);
    }
    child = null;
  };

  const server: MariaDbServer = {
    get url() {
      return `mysql://root@127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    dir,
    get pid() {
      return child?.pid ?? null;
    },
    async start() {
      if (cleaned) throw new MariaDbStartError('this server was cleaned up');
      if (child !== null) throw new MariaDbStartError(`mariadbd already runs on port ${port}`);
      await launch();
    },
    async stop() {
      await stopWith('SIGTERM', stopTimeoutMs);
    },
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      const proc = child;
      if (proc === null) return;
      if (NON_TERMINATING_SIGNALS.has(signal)) {
        proc.kill(signal);
        return;
      }
      proc.ref(); // keep this process alive until the server has exited
      const exited = waitForExit(proc);
      proc.kill(signal);
      await exited;
      child = null;
    },
    async cleanup() {
      if (cleaned) return;
      cleaned = true;
      try {
        // A kept datadir is shut down cleanly: the next run should not start with crash recovery.
        await stopWith(keep ? 'SIGTERM' : 'SIGKILL', stopTimeoutMs);
      } finally {
        process.off('exit', onExit);
        if (!keep) await rm(dir, { recursive: true, force: true });
      }
    },
    logTail(lines = 20) {
      return tail(errorLog, lines);
    },
    [Symbol.asyncDispose]() {
      return this.cleanup();
    },
  };

  try {
    if (!installed) await runQuiet(installDb, [
      '--no-defaults',
      '--auth-root-authentication-method=normal',
      `--datadir=${dataDir}`,
      `--tmpdir=${tmpDir}`, // passed on to the bootstrap server
      '--skip-test-db',
      ...userFlag,
    ]);
    // A chosen free port can be taken between our probe and mariadbd's bind: retry on another.
    for (let attempt = 1; ; attempt += 1) {
      if (opts.port === undefined) port = await findFreePort();
      try {
        await launch();
        break;
      } catch (err) {
        const inUse = err instanceof MariaDbStartError && /already in use|bind on tcp/i.test(err.message);
        if (!inUse || opts.port !== undefined || attempt >= 3) throw err;
      }
    }
  } catch (err) {
    await server.cleanup();
    throw err;
  }
  return server;
}
