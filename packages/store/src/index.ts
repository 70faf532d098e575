/**
 * @ax/store: the MySQL layer of ax. A mysql2 pool that is UTC on every connection, a
 * transaction helper, JSON column codecs, the migration runner and the schema-version guard
 * (R22). Named queries per table live in their own modules as the services add them.
 */
export { createPool, withTransaction, CONNECTION_CHARSET } from './pool.js';
export type { CreatePoolOptions, StorePool, IsolationLevel, TransactionOptions } from './pool.js';

export { decodeJson, decodeJsonNullable, encodeJson, encodeJsonNullable } from './json.js';
export type { JsonParser } from './json.js';

export {
  DEFAULT_MIGRATIONS_DIR,
  ensureDatabase,
  loadMigrations,
  migrate,
  migrateDatabase,
  migrationChecksum,
  migrationStatus,
  readAppliedMigrations,
} from './migrate.js';
export type {
  AppliedMigration,
  MigrateDatabaseOptions,
  MigrateOptions,
  MigrateResult,
  MigrationFile,
  MigrationStatus,
} from './migrate.js';
export { splitSqlStatements } from './sql-split.js';

export {
  SCHEMA_VERSION_MAX,
  SCHEMA_VERSION_MIN,
  assertSchemaSupported,
  readSchemaVersion,
} from './schema-version.js';
export type { Queryable, SchemaVersionRange } from './schema-version.js';

export { assertDatabaseName, parseMysqlUrl, redactMysqlUrl, withDatabase } from './url.js';
export type { MysqlUrl } from './url.js';

export {
  InvalidDatabaseUrlError,
  JsonDecodeError,
  MigrationChecksumError,
  MigrationError,
  MigrationLockError,
  RETRYABLE_CONNECTION_CODES,
  RETRYABLE_MYSQL_ERRNOS,
  SchemaVersionError,
  SessionInitError,
  StoreError,
  isConnectionError,
  isDuplicateKeyError,
  isNoSuchTableError,
  isRetryableMysqlError,
  toError,
} from './errors.js';
export type { MysqlDriverError } from './errors.js';

export { listTables, showCreateTables } from './queries/schema.js';
export { appendEvents } from './queries/events.js';
export type { NewEvent } from './queries/events.js';
export { alertDedupKey, raiseAlert } from './queries/alerts.js';
export type { AlertKind, NewAlert } from './queries/alerts.js';
