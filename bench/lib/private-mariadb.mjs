/**
 * A private MariaDB for one bench run (ax-history, ax-purge, the soak): `startMariaDb` of
 * @ax/testing with the sizing those runs share — an InnoDB buffer pool of the caller's size, a
 * 1 GB redo log and 300 connections — registered for cleanup (harness.mjs). A temporary folder
 * is also registered with the runner, so that a killed run leaves nothing behind; a kept one
 * (`keepDir`, the history built once) is only stopped. The size check is pure; types:
 * `private-mariadb.d.mts`.
 */
import { startMariaDb } from '../../packages/testing/dist/index.js';
import { renameSync } from 'node:fs';
import path from 'node:path';
import { log, onCleanup, track, untrack } from './harness.mjs';

/**
 * The buffer pool size of `--<flag>` in mariadbd's units (`512M`, `2G`: digits and one of K, M,
 * G; a bare number would be bytes, `--buffer-pool 2` two of them); throws one line naming the
 * flag and the value otherwise.
 */
export function checkBufferPool(value, flag = 'buffer-pool') {
  const text = String(value);
  if (!/^[1-9]\d*[KMG]$/i.test(text)) throw new Error(`--${flag} takes a size such as 2G or 512M, got ${value === '' ? "''" : text}`);
  return text.toUpperCase();
}

/** The mariadbd arguments of a private bench server with that buffer pool. */
export function privateMariaDbArgs(bufferPool) {
  return [`--innodb-buffer-pool-size=${checkBufferPool(bufferPool)}`, '--innodb-log-file-size=1G', '--max-connections=300'];
}

/**
 * Starts the server and registers its cleanup; returns @ax/testing's `MariaDbServer`.
 * `keepDir` keeps the folder between runs; the timeouts (ms, default 30,000 each) give a
 * server with a big kept database time to recover and to shut down cleanly; `extraArgs` go to
 * mariadbd after the sizing (a slow log, say).
 */
export async function startPrivateMariaDb({ bufferPool, keepDir, startTimeoutMs, stopTimeoutMs, extraArgs = [] } = {}) {
  const server = await startMariaDb({
    ...(keepDir === undefined ? {} : { keepDir }),
    ...(startTimeoutMs === undefined ? {} : { startTimeoutMs }),
    ...(stopTimeoutMs === undefined ? {} : { stopTimeoutMs }),
    args: [...privateMariaDbArgs(bufferPool), ...extraArgs],
  });
  if (keepDir === undefined) track('dirs', server.dir);
  onCleanup(async () => {
    await server.cleanup();
    if (keepDir === undefined) untrack('dirs', server.dir);
  });
  log(`private MariaDB on port ${server.port}, ${keepDir === undefined ? 'temporary ' : 'kept '}folder ${server.dir}, buffer pool ${checkBufferPool(bufferPool)}, redo log 1G`);
  return server;
}

/** The mariadbd arguments that log every statement to `file` (in the server's datadir). */
export function slowLogArgs(file) {
  return ['--slow-query-log=1', '--long-query-time=0', `--slow-query-log-file=${file}`];
}

/**
 * Opens a window on the slow log `file` of the server `pool` talks to: what was logged so far
 * is moved aside and the server reopens the file (FLUSH SLOW LOGS; each session copies the
 * switch when it connects, so pooled sessions log from their start). `end()` moves the
 * window's statements to `<file>.window` and returns that path: only the rename, so that
 * reading it (~150 MB at 4,000 jobs/s for 30 s) can wait until the stack has stopped.
 */
export async function openSlowLogWindow(pool, file) {
  const [[{ dir }]] = await pool.query('SELECT @@datadir AS dir');
  const at = path.join(dir, file);
  const rotate = async (to) => {
    renameSync(at, to);
    await pool.query('FLUSH SLOW LOGS');
    return to;
  };
  await rotate(`${at}.before`);
  return { end: () => rotate(`${at}.window`) };
}
