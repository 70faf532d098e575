/**
 * Error classes of @ax/store and the classification of driver errors (what is worth a retry).
 * Every error thrown by this package on purpose is a {@link StoreError}.
 */

/** Base class of the errors this package throws on purpose. */
export class StoreError extends Error {
  override name = 'StoreError';
}

/** `AX_MYSQL_URL` (or another database URL) cannot be used. */
export class InvalidDatabaseUrlError extends StoreError {
  override name = 'InvalidDatabaseUrlError';
}

/** A new connection's session set-up (`SET time_zone = '+00:00'`, R6) failed. */
export class SessionInitError extends StoreError {
  override name = 'SessionInitError';
}

/**
 * A transaction given `timeoutMs` did not finish in time (a query that never answers: a
 * half-open connection, a server that stalls). Its connection was dropped, so the server rolls
 * back whatever it holds. `code` is `ETIMEDOUT`, which the retry tables count as transient.
 */
export class TransactionTimeoutError extends StoreError {
  override name = 'TransactionTimeoutError';
  readonly code = 'ETIMEDOUT';
  constructor(readonly timeoutMs: number) {
    super(`transaction not finished within ${timeoutMs} ms: its connection was dropped (the server rolls it back)`);
  }
}

/** A JSON column held text that is not JSON, or SQL NULL where a value was required. */
export class JsonDecodeError extends StoreError {
  override name = 'JsonDecodeError';
}

/** A migration file set or a migration run is not valid (bad file name, SQL error, order). */
export class MigrationError extends StoreError {
  override name = 'MigrationError';
}

/** An applied migration's file changed since it was applied. */
export class MigrationChecksumError extends MigrationError {
  override name = 'MigrationChecksumError';
  constructor(
    readonly version: number,
    readonly fileName: string,
    readonly appliedChecksum: string,
    readonly fileChecksum: string,
  ) {
    super(
      `migration ${fileName} was changed after it was applied (checksum ${fileChecksum.slice(0, 12)}… ` +
        `≠ applied ${appliedChecksum.slice(0, 12)}…); applied migrations are immutable: add a new one`,
    );
  }
}

/** Another process held the migration lock for longer than the lock timeout. */
export class MigrationLockError extends MigrationError {
  override name = 'MigrationLockError';
}

/**
 * The database's schema version is outside the range this build supports (R22), or the
 * database has no schema at all.
 */
export class SchemaVersionError extends StoreError {
  override name = 'SchemaVersionError';
  constructor(
    message: string,
    /** Highest applied migration; `null` when the schema_migrations table is missing or empty. */
    readonly version: number | null,
  ) {
    super(message);
  }
}

/** Converts whatever was thrown into an `Error` (habit 7: at every catch). */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (typeof thrown === 'string') return new Error(thrown);
  // JSON.stringify gives undefined for undefined, functions and symbols.
  const json: string | undefined = JSON.stringify(thrown);
  return new Error(json ?? String(thrown));
}

/** The fields mysql2 puts on errors from the server or the socket. */
export interface MysqlDriverError extends Error {
  /** `ER_DUP_ENTRY`, `ECONNREFUSED`, `PROTOCOL_CONNECTION_LOST` … */
  code?: string;
  /** Server error number (1062 …); absent for socket errors. */
  errno?: number;
  sqlState?: string;
  sqlMessage?: string;
  /** True when the connection is unusable afterwards. */
  fatal?: boolean;
}

function driverError(err: unknown): MysqlDriverError | null {
  return err instanceof Error ? err : null;
}

/** Server error numbers after which the same statement or transaction may simply be retried. */
export const RETRYABLE_MYSQL_ERRNOS: ReadonlySet<number> = new Set([
  1205, // ER_LOCK_WAIT_TIMEOUT
  1213, // ER_LOCK_DEADLOCK
  1040, // ER_CON_COUNT_ERROR (too many connections)
  1053, // ER_SERVER_SHUTDOWN
  1290, // ER_OPTION_PREVENTS_STATEMENT (read-only during a failover)
  1792, // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
  1836, // ER_READ_ONLY_MODE
  1927, // ER_CONNECTION_KILLED (MariaDB)
  4031, // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8.0.24+: idle connection closed by the server)
]);

const ER_LOCK_DEADLOCK = 1213;
const ER_LOCK_WAIT_TIMEOUT = 1205;

/** True when `err`, or one of its causes (at most 8 deep), carries one of these server error numbers. */
function hasErrno(err: unknown, errnos: readonly number[]): boolean {
  for (let e: unknown = err, depth = 0; typeof e === 'object' && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const errno = (e as { errno?: unknown }).errno;
    if (typeof errno === 'number' && errnos.includes(errno)) return true;
  }
  return false;
}

/**
 * True when `err`, or one of its causes, is a deadlock (1213) or a lock wait timeout (1205): a
 * lost lock race, not an outage; the database answered.
 */
export function isLockConflict(err: unknown): boolean {
  return hasErrno(err, [ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT]);
}

/** True when `err`, or one of its causes, is a deadlock (1213): the server rolled the transaction back at once. */
export function isDeadlock(err: unknown): boolean {
  return hasErrno(err, [ER_LOCK_DEADLOCK]);
}

/** Socket / protocol error codes that mean "the link broke": reconnect and retry. */
export const RETRYABLE_CONNECTION_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
]);

/** True for deadlocks, lock wait timeouts, failovers and broken connections. */
export function isRetryableMysqlError(err: unknown): boolean {
  const e = driverError(err);
  if (e === null) return false;
  if (e.errno !== undefined && RETRYABLE_MYSQL_ERRNOS.has(e.errno)) return true;
  return e.code !== undefined && RETRYABLE_CONNECTION_CODES.has(e.code);
}

/**
 * True when the server could not be reached, refused the login or the database, or the link
 * broke: a problem of the connection rather than of a statement.
 */
export function isConnectionError(err: unknown): boolean {
  const e = driverError(err);
  if (e === null) return false;
  if (e.code !== undefined && RETRYABLE_CONNECTION_CODES.has(e.code)) return true;
  return (
    e.code === 'ENOTFOUND' ||
    e.code === 'ER_ACCESS_DENIED_ERROR' ||
    e.code === 'ER_DBACCESS_DENIED_ERROR' ||
    e.code === 'ER_BAD_DB_ERROR'
  );
}

/**
 * True for a duplicate key on INSERT/UPDATE (errno 1062): the usual way of learning that
 * "someone else did it" (habit 5).
 */
export function isDuplicateKeyError(err: unknown): boolean {
  return driverError(err)?.errno === 1062;
}

/** True when a statement names a table that does not exist (errno 1146). */
export function isNoSuchTableError(err: unknown): boolean {
  return driverError(err)?.errno === 1146;
}

/** True when a statement names a column that does not exist (errno 1054): a schema before its migration (R22). */
export function isNoSuchColumnError(err: unknown): boolean {
  return driverError(err)?.errno === 1054;
}

/** True when a statement forces an index that does not exist (errno 1176): a schema before its migration (R22). */
export function isNoSuchIndexError(err: unknown): boolean {
  return driverError(err)?.errno === 1176;
}

/**
 * `work()`, or `withoutTable` when a table it reads is not there: R22, a build runs on a range
 * of schemas, and on those before a table's migration the feature it serves answers as it did
 * before (no rolled-up days, migration 0008; no search index, 0009).
 */
export async function unlessNoSuchTable<T>(withoutTable: T, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isNoSuchTableError(err)) return withoutTable;
    throw err;
  }
}
