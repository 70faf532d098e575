/**
 * The mysql2 pool every service uses, and the transaction helper.
 *
 * Pool settings (DESIGN §2, R6):
 * - `timezone: 'Z'`: mysql2 reads DATETIME values as UTC and writes `Date`s as UTC.
 * - every new connection runs `SET time_zone = '+00:00'` before anything else, so `NOW(3)`,
 *   `CURRENT_TIMESTAMP(3)` defaults and deadline comparisons are UTC whatever the server's
 *   `default-time-zone` is. The statement is queued from the pool's `connection` event, which
 *   mysql2 emits synchronously before it hands the connection to its first user; mysql2 runs a
 *   connection's commands in order, so no query can overtake it. If it fails, the connection
 *   is failed with a {@link SessionInitError}: the queued query rejects with it instead of
 *   running in the wrong time zone, and the pool drops the connection.
 * - `dateStrings: false`: DATETIME and DATE columns come back as `Date` (a DATE is UTC midnight).
 * - `supportBigNumbers: true, bigNumberStrings: true`: BIGINT (ids, `COUNT(*)`) and DECIMAL
 *   values always come back as decimal *strings*. Ids are opaque strings in the API
 *   (`instanceId` is a string on the wire) and a BIGINT past 2^53 can never be silently
 *   rounded; one type per column beats "number unless it is big". Convert counts with
 *   `Number(row.n)`. `insertId` of a result header stays a number below 2^32.
 * - `jsonStrings: true`: JSON columns come back as text on MySQL too; decode with
 *   `decodeJson` (json.ts), the one place that knows.
 * - `charset: utf8mb4_unicode_ci`, the collation of the schema, available on both engines.
 * - `trace: false`: no stack captured per statement (see the option below).
 */
import mysql from 'mysql2/promise';
import type { Pool, PoolConnection } from 'mysql2/promise';
import type { PoolConnection as CorePoolConnection, QueryError } from 'mysql2';
import { isDeadlock, isLockConflict, SessionInitError, StoreError, TransactionTimeoutError } from './errors.js';
import { parseMysqlUrl, redactMysqlUrl } from './url.js';

/** Connection collation; the schema's tables use the same. */
export const CONNECTION_CHARSET = 'UTF8MB4_UNICODE_CI';

const SESSION_VARIABLE_NAME = /^[a-z_][a-z0-9_]*$/;

export interface CreatePoolOptions {
  /** Most connections open at once. Default `10`. */
  connectionLimit?: number;
  /** Requests that may wait for a free connection before failing; `0` = unlimited. Default `0`. */
  queueLimit?: number;
  /** Milliseconds allowed for TCP connect plus handshake. Default `10_000`. */
  connectTimeoutMs?: number;
  /** Milliseconds an idle connection is kept before it is closed. Default `60_000`. */
  idleTimeoutMs?: number;
  /**
   * Use this database instead of the URL's; `null` connects without a default database.
   * Default: the URL's database.
   */
  database?: string | null;
  /**
   * Extra session variables set on every new connection together with `time_zone`, e.g.
   * `{ innodb_lock_wait_timeout: 5 }`. Names must be lower-case identifiers; values are sent
   * as placeholders. Default `{}`. `time_zone` itself cannot be overridden.
   */
  sessionVariables?: Readonly<Record<string, string | number>>;
  /**
   * Called when a new connection's session set-up fails (the connection is then destroyed and
   * whatever waited on it fails). Default: none; the failing query reports the problem.
   */
  onSessionInitError?: (err: Error) => void;
}

/** A mysql2 promise pool that knows which database it points at. */
export interface StorePool extends Pool {
  /** Database of the pool's connections (`null` if none). */
  readonly databaseName: string | null;
  /** The URL it was created from, password replaced by `***`. */
  readonly redactedUrl: string;
}

function sessionInit(vars: Readonly<Record<string, string | number>>): {
  sql: string;
  values: Array<string | number>;
} {
  const assignments = ["time_zone = '+00:00'"]; // R6: the session is UTC whatever the server says
  const values: Array<string | number> = [];
  for (const [name, value] of Object.entries(vars)) {
    if (!SESSION_VARIABLE_NAME.test(name) || name === 'time_zone') {
      throw new StoreError(`session variable ${JSON.stringify(name)} cannot be set by the pool`);
    }
    assignments.push(`${name} = ?`);
    values.push(value);
  }
  return { sql: `SET ${assignments.join(', ')}`, values };
}

/**
 * Creates the pool for `url` (`mysql://user:password@host:port/database`). Nothing connects
 * until the first query. End it with `await pool.end()`.
 */
export function createPool(url: string, opts: CreatePoolOptions = {}): StorePool {
  const parts = parseMysqlUrl(url);
  const database = opts.database === undefined ? parts.database : opts.database;
  const init = sessionInit(opts.sessionVariables ?? {});
  const connectionLimit = opts.connectionLimit ?? 10;
  const pool = mysql.createPool({
    host: parts.host,
    port: parts.port,
    user: parts.user,
    password: parts.password,
    ...(database === null ? {} : { database }),
    charset: CONNECTION_CHARSET,
    timezone: 'Z',
    dateStrings: false,
    supportBigNumbers: true,
    bigNumberStrings: true,
    jsonStrings: true,
    decimalNumbers: false,
    multipleStatements: false,
    connectionLimit,
    maxIdle: connectionLimit,
    idleTimeout: opts.idleTimeoutMs ?? 60_000,
    queueLimit: opts.queueLimit ?? 0,
    waitForConnections: true,
    connectTimeout: opts.connectTimeoutMs ?? 10_000,
    enableKeepAlive: true,
    // No stack captured per query: mysql2's `trace` (default on) builds an Error stack for every
    // statement to show the caller if it fails, ~2 % of a busy broker's CPU. Failures still name
    // the statement's error and are wrapped with their context by the callers.
    trace: false,
    // ax sends every statement as text (`query`), never `execute`, so no prepared statement is
    // ever cached; mysql2's cache still allocates four arrays of its maximum (default 16,000
    // entries, 512 KB) for every connection it opens, which the soak's heap snapshots showed as
    // the largest arrays of a scheduler (#23).
    maxPreparedStatements: 32,
  });
  // Registered before the pool is returned, hence before any connection can exist.
  pool.pool.on('connection', (conn: CorePoolConnection) => {
    conn.query(init.sql, init.values, (err: QueryError | null) => {
      if (err === null) return;
      const failure = new SessionInitError(
        `session set-up of a new connection failed (${init.sql}): ${err.message}`,
        { cause: err },
      );
      opts.onSessionInitError?.(failure);
      // Failing the socket makes mysql2 fail every command queued on this connection with
      // `failure` (instead of running it outside UTC) and drop the connection from the pool.
      (conn as unknown as { stream: { destroy(e: Error): void } }).stream.destroy(failure);
    });
  });
  Object.defineProperties(pool, {
    databaseName: { value: database, enumerable: true },
    redactedUrl: { value: redactMysqlUrl(url), enumerable: true },
  });
  return pool as StorePool;
}

/** Isolation levels accepted by {@link withTransaction}. */
export type IsolationLevel =
  | 'READ UNCOMMITTED'
  | 'READ COMMITTED'
  | 'REPEATABLE READ'
  | 'SERIALIZABLE';

const ISOLATION_LEVELS: ReadonlySet<string> = new Set<IsolationLevel>([
  'READ UNCOMMITTED',
  'READ COMMITTED',
  'REPEATABLE READ',
  'SERIALIZABLE',
]);

export interface TransactionOptions {
  /** Isolation of this transaction only. Default: the server's (REPEATABLE READ on both). */
  isolationLevel?: IsolationLevel;
  /**
   * Most milliseconds from asking for a connection until COMMIT answers. Past it the call
   * rejects with {@link TransactionTimeoutError} and the connection is destroyed (the server
   * rolls back when it sees the disconnect); `fn` may still be running and its later queries
   * fail. A COMMIT already sent when the time ran out may still have taken effect, so a caller
   * that retries must be idempotent (the broker's are). Default: no limit. mysql2 has no query
   * timeout of its own, and a connection that hangs without closing (half-open TCP, a stalled
   * server) would otherwise hold its caller, with the locks it took, until the OS keepalive
   * gives up hours later.
   */
  timeoutMs?: number;
  /**
   * How many more times the whole transaction runs when the server rolls it back as the victim of
   * a deadlock (1213). Each retry waits a few random milliseconds that grow with the attempt (so
   * the two sides do not meet again in step) and calls `fn` again on a fresh transaction; the last
   * attempt's error is rethrown. `fn` must be safe to run again: everything it does outside the
   * transaction (results gathered in outer variables) starts over at its top. A lock wait timeout
   * (1205) is not retried unless `retryLockWaitTimeouts` says so: it already waited
   * `innodb_lock_wait_timeout` (50 s by default) and would wait as long again. A `timeoutMs` covers all attempts. Default `0`: callers with retry
   * loops of their own (broker, scheduler) keep them.
   */
  deadlockRetries?: number;
  /**
   * Also run the transaction again (within the same `deadlockRetries`) after a lock wait timeout
   * (1205). For callers that answer a person and would otherwise fail a request that is fine
   * (admin-api's write routes, whose sessions wait a few seconds, not 50); a loop that retries
   * on its own keeps the default. Default `false`.
   */
  retryLockWaitTimeouts?: boolean;
}

/** Longest pause before a retry after a deadlock, per attempt so far. */
const DEADLOCK_PAUSE_MS = 20;

/**
 * Runs `fn` in a transaction on one pooled connection: COMMIT when it resolves, ROLLBACK when
 * it (or the COMMIT) throws, and the error is rethrown unchanged. The connection is always
 * given back; it is destroyed instead of released when its state is unknown (BEGIN or
 * ROLLBACK failed, or `timeoutMs` passed), which makes the server roll back whatever was open.
 */
export async function withTransaction<T>(
  pool: Pool,
  fn: (conn: PoolConnection) => Promise<T>,
  opts: TransactionOptions = {},
): Promise<T> {
  if (opts.isolationLevel !== undefined && !ISOLATION_LEVELS.has(opts.isolationLevel)) {
    throw new StoreError(`unknown isolation level ${JSON.stringify(opts.isolationLevel)}`);
  }
  const retries = opts.deadlockRetries ?? 0;
  if (!Number.isInteger(retries) || retries < 0) {
    throw new StoreError(`transaction deadlockRetries must be a whole number >= 0, got ${String(retries)}`);
  }
  const { timeoutMs } = opts;
  if (timeoutMs === undefined) return runAttempts(pool, fn, opts, { expired: false });
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    throw new StoreError(`transaction timeoutMs must be a positive integer, got ${String(timeoutMs)}`);
  }
  const deadline: Deadline = { expired: false };
  const work = runAttempts(pool, fn, opts, deadline);
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      deadline.expired = true;
      // mysql2 never settles the queries of a destroyed connection: the race below is what
      // frees the caller. A connection still being handed out is destroyed when it arrives.
      dropConnection(deadline);
      reject(new TransactionTimeoutError(timeoutMs));
    }, timeoutMs);
  });
  // Whatever the abandoned work does later (its queries fail once the connection is gone) is
  // nobody's error any more.
  work.catch(() => undefined);
  try {
    return await Promise.race([work, expiry]);
  } finally {
    clearTimeout(timer);
  }
}

/** A transaction's time limit: once `expired`, its connection is destroyed, never given back. */
interface Deadline {
  expired: boolean;
  conn?: PoolConnection;
  dropped?: boolean;
}

/** Destroys the deadline's connection once (mysql2 must not see a second destroy). */
function dropConnection(deadline: Deadline): void {
  if (deadline.conn === undefined || deadline.dropped === true) return;
  deadline.dropped = true;
  deadline.conn.destroy();
}

/** {@link runTransaction}, run again after a deadlock (or lock wait timeout, when asked) while retries and time are left. */
async function runAttempts<T>(
  pool: Pool,
  fn: (conn: PoolConnection) => Promise<T>,
  opts: TransactionOptions,
  deadline: Deadline,
): Promise<T> {
  const retries = opts.deadlockRetries ?? 0;
  const retryable = opts.retryLockWaitTimeouts === true ? isLockConflict : isDeadlock;
  for (let attempt = 0; ; attempt++) {
    try {
      return await runTransaction(pool, fn, opts, deadline);
    } catch (err) {
      if (attempt >= retries || deadline.expired || !retryable(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * DEADLOCK_PAUSE_MS * (attempt + 1)));
      if (deadline.expired) throw err;
    }
  }
}

async function runTransaction<T>(
  pool: Pool,
  fn: (conn: PoolConnection) => Promise<T>,
  opts: TransactionOptions,
  deadline: Deadline,
): Promise<T> {
  const conn = await pool.getConnection();
  deadline.conn = conn;
  let healthy = false;
  try {
    if (deadline.expired) throw new TransactionTimeoutError(opts.timeoutMs ?? 0);
    if (opts.isolationLevel !== undefined) {
      await conn.query(`SET TRANSACTION ISOLATION LEVEL ${opts.isolationLevel}`);
    }
    await conn.beginTransaction();
    healthy = true;
    try {
      const result = await fn(conn);
      await conn.commit();
      return result;
    } catch (err) {
      try {
        await conn.rollback();
      } catch {
        // The original error is the one the caller must see; a connection that cannot roll
        // back is destroyed below, and the server rolls back on disconnect.
        healthy = false;
      }
      throw err;
    }
  } finally {
    if (healthy && !deadline.expired) conn.release();
    else dropConnection(deadline);
  }
}
