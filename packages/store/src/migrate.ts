/**
 * The migration runner: forward-only numbered SQL files (`NNNN_name.sql`) applied in order and
 * recorded in `schema_migrations` with a SHA-256 checksum.
 *
 * Concurrency: every run takes the server-wide named lock `GET_LOCK('<db>.ax_migrate')` on its
 * own connection (works on MySQL and MariaDB), re-reads what is applied once it holds the lock,
 * and releases it in `finally` (the server also drops it if the connection dies). Two processes
 * migrating at once therefore apply each file exactly once; the second finds nothing to do.
 *
 * MySQL auto-commits DDL, so a file is not atomic: statements are sent one by one (see
 * sql-split.ts) and the file is recorded after its last statement. A file that failed halfway
 * is re-run from the top next time, which is why migrations use IF NOT EXISTS / INSERT IGNORE
 * where that is cheap.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from 'mysql2/promise';
import {
  MigrationChecksumError,
  MigrationError,
  MigrationLockError,
  isNoSuchTableError,
  toError,
} from './errors.js';
import { createPool } from './pool.js';
import type { CreatePoolOptions } from './pool.js';
import { readSchemaVersion } from './schema-version.js';
import { splitSqlStatements } from './sql-split.js';
import { assertDatabaseName, parseMysqlUrl } from './url.js';

/**
 * The migrations shipped with this package. Resolved from the running file, so both
 * `src/migrate.ts` (tests) and `dist/migrate.js` (built) find `packages/store/migrations/`.
 */
export const DEFAULT_MIGRATIONS_DIR: URL = new URL('../migrations/', import.meta.url);

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** One migration file as found on disk. */
export interface MigrationFile {
  /** The number in front of the name (`1` for `0001_init.sql`). */
  readonly version: number;
  /** The name without number and extension (`init`). */
  readonly name: string;
  readonly fileName: string;
  /** Hex SHA-256 of the file with line endings normalised to `\n`. */
  readonly checksum: string;
  readonly sql: string;
}

/** One row of `schema_migrations`. */
export interface AppliedMigration {
  readonly version: number;
  readonly name: string;
  readonly checksum: string;
  readonly appliedAt: Date;
  readonly executionMs: number;
}

export interface MigrateOptions {
  /** Folder of `NNNN_name.sql` files. Default {@link DEFAULT_MIGRATIONS_DIR}. */
  migrationsDir?: string | URL;
  /** Seconds to wait for another process's migration to finish. Default `60`. */
  lockTimeoutSeconds?: number;
  /** Called after each migration is applied and recorded. Default: none. */
  onApplied?: (migration: MigrationFile, executionMs: number) => void;
}

export interface MigrateResult {
  /** What this call applied, in order (empty when the database was up to date). */
  readonly applied: readonly MigrationFile[];
  /** Highest applied version afterwards. */
  readonly version: number | null;
}

export interface MigrationStatus {
  readonly applied: readonly AppliedMigration[];
  readonly pending: readonly MigrationFile[];
  /** Applied files whose content changed since (migrate refuses to run while any exist). */
  readonly changed: readonly MigrationFile[];
  readonly version: number | null;
}

/** Hex SHA-256 of a migration's text, insensitive to CRLF checkouts. */
export function migrationChecksum(sql: string): string {
  return createHash('sha256').update(sql.replace(/\r\n/g, '\n'), 'utf8').digest('hex');
}

function dirPath(dir: string | URL): string {
  return dir instanceof URL ? fileURLToPath(dir) : dir;
}

/**
 * Reads and validates the migration files of `dir`, sorted by version. Files not ending in
 * `.sql` are ignored; a `.sql` file with a bad name or a duplicate version is an error.
 */
export async function loadMigrations(
  dir: string | URL = DEFAULT_MIGRATIONS_DIR,
): Promise<MigrationFile[]> {
  const path = dirPath(dir);
  let names: string[];
  try {
    names = await readdir(path);
  } catch (err) {
    throw new MigrationError(`cannot read migrations folder ${path}: ${toError(err).message}`, {
      cause: err,
    });
  }
  const files: MigrationFile[] = [];
  const byVersion = new Map<number, string>();
  for (const fileName of names.filter((n) => n.endsWith('.sql')).sort()) {
    const match = FILE_NAME.exec(fileName);
    if (match === null) {
      throw new MigrationError(`migration file ${fileName} is not named NNNN_name.sql`);
    }
    const version = Number(match[1]);
    const other = byVersion.get(version);
    if (other !== undefined) {
      throw new MigrationError(`migrations ${other} and ${fileName} share version ${version}`);
    }
    if (version === 0) throw new MigrationError(`migration ${fileName}: versions start at 0001`);
    byVersion.set(version, fileName);
    const sql = await readFile(join(path, fileName), 'utf8');
    files.push({ version, name: match[2] as string, fileName, checksum: migrationChecksum(sql), sql });
  }
  return files.sort((a, b) => a.version - b.version);
}

const CREATE_SCHEMA_MIGRATIONS = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  version      INT UNSIGNED NOT NULL,
  name         VARCHAR(255) NOT NULL,
  checksum     CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  applied_at   DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  execution_ms INT UNSIGNED NOT NULL DEFAULT 0,
  PRIMARY KEY (version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`;

interface AppliedRow extends RowDataPacket {
  version: number;
  name: string;
  checksum: string;
  applied_at: Date;
  execution_ms: number;
}

/** Rows of `schema_migrations` in version order; empty when the table does not exist. */
export async function readAppliedMigrations(
  db: Pick<PoolConnection, 'query'>,
): Promise<AppliedMigration[]> {
  try {
    const [rows] = await db.query<AppliedRow[]>(
      'SELECT version, name, checksum, applied_at, execution_ms FROM schema_migrations ORDER BY version',
    );
    return rows.map((r) => ({
      version: Number(r.version),
      name: r.name,
      checksum: r.checksum,
      appliedAt: r.applied_at,
      executionMs: Number(r.execution_ms),
    }));
  } catch (err) {
    if (isNoSuchTableError(err)) return [];
    throw err;
  }
}

interface Plan {
  pending: MigrationFile[];
  changed: MigrationFile[];
}

/** Compares files with what is applied; throws on gaps that cannot be resolved by applying. */
function plan(files: readonly MigrationFile[], applied: readonly AppliedMigration[]): Plan {
  const appliedByVersion = new Map(applied.map((a) => [a.version, a]));
  const fileVersions = new Set(files.map((f) => f.version));
  const maxFile = files.at(-1)?.version ?? 0;
  for (const a of applied) {
    // Versions above every file are a newer build's migrations (R22): fine. A hole below the
    // newest file means this build's folder is not the one the database was migrated with.
    if (!fileVersions.has(a.version) && a.version < maxFile) {
      throw new MigrationError(
        `applied migration ${String(a.version).padStart(4, '0')}_${a.name} is missing from the migrations folder`,
      );
    }
  }
  const changed = files.filter((f) => {
    const a = appliedByVersion.get(f.version);
    return a !== undefined && a.checksum !== f.checksum;
  });
  const pending = files.filter((f) => !appliedByVersion.has(f.version));
  const maxApplied = applied.at(-1)?.version ?? 0;
  const late = pending.find((f) => f.version < maxApplied);
  if (late !== undefined) {
    throw new MigrationError(
      `migration ${late.fileName} is older than the applied version ${maxApplied}; ` +
        `migrations are applied in order only (renumber it)`,
    );
  }
  return { pending, changed };
}

function lockName(database: string): string {
  const name = `${database}.ax_migrate`;
  // MySQL limits lock names to 64 characters.
  return name.length <= 64
    ? name
    : `ax_migrate.${createHash('sha256').update(database).digest('hex').slice(0, 40)}`;
}

async function currentDatabase(conn: PoolConnection): Promise<string> {
  const [rows] = await conn.query<Array<RowDataPacket & { db: string | null }>>(
    'SELECT DATABASE() AS db',
  );
  const db = rows[0]?.db ?? null;
  if (db === null) throw new MigrationError('the pool has no database selected');
  return db;
}

/**
 * Applies every pending migration of `opts.migrationsDir` to the pool's database, holding the
 * migration lock. Refuses (MigrationChecksumError) if an applied file changed, and
 * (MigrationError) if a pending file is older than what is applied.
 */
export async function migrate(pool: Pool, opts: MigrateOptions = {}): Promise<MigrateResult> {
  const files = await loadMigrations(opts.migrationsDir);
  const lockTimeoutSeconds = opts.lockTimeoutSeconds ?? 60;
  const conn = await pool.getConnection();
  let lock: string | null = null;
  let reusable = true;
  try {
    lock = lockName(await currentDatabase(conn));
    const [got] = await conn.query<Array<RowDataPacket & { got: number | string | null }>>(
      'SELECT GET_LOCK(?, ?) AS got',
      [lock, lockTimeoutSeconds],
    );
    const status = got[0]?.got;
    if (status === null || status === undefined) {
      const name = lock;
      lock = null;
      throw new MigrationError(`GET_LOCK('${name}') failed`);
    }
    if (Number(status) !== 1) {
      lock = null;
      throw new MigrationLockError(
        `another process held the migration lock for more than ${lockTimeoutSeconds} s`,
      );
    }
    await conn.query(CREATE_SCHEMA_MIGRATIONS);
    // Read only now: whoever held the lock before us may have applied everything.
    const applied = await readAppliedMigrations(conn);
    const { pending, changed } = plan(files, applied);
    const first = changed[0];
    if (first !== undefined) {
      const a = applied.find((x) => x.version === first.version);
      throw new MigrationChecksumError(first.version, first.fileName, a?.checksum ?? '', first.checksum);
    }
    const done: MigrationFile[] = [];
    for (const m of pending) {
      const started = performance.now();
      const statements = splitSqlStatements(m.sql);
      for (const [index, statement] of statements.entries()) {
        try {
          await conn.query(statement);
        } catch (err) {
          // A file may change session settings for its statements (0009 turns foreign key
          // checks off): a connection left halfway through one is not handed out again.
          reusable = false;
          const firstLine = statement.split('\n', 1)[0] ?? '';
          throw new MigrationError(
            `${m.fileName}, statement ${index + 1} (${firstLine.slice(0, 80)}): ${toError(err).message}`,
            { cause: err },
          );
        }
      }
      const ms = Math.round(performance.now() - started);
      await conn.query<ResultSetHeader>(
        'INSERT INTO schema_migrations (version, name, checksum, applied_at, execution_ms) VALUES (?, ?, ?, NOW(3), ?)',
        [m.version, m.name, m.checksum, ms],
      );
      done.push(m);
      opts.onApplied?.(m, ms);
    }
    return { applied: done, version: await readSchemaVersion(conn) };
  } finally {
    if (lock !== null) {
      try {
        await conn.query('SELECT RELEASE_LOCK(?)', [lock]);
      } catch {
        // Closing the session releases the lock too.
        reusable = false;
      }
    }
    if (reusable) conn.release();
    else conn.destroy();
  }
}

/** What is applied, pending and changed, without taking the lock or changing anything. */
export async function migrationStatus(
  pool: Pool,
  opts: Pick<MigrateOptions, 'migrationsDir'> = {},
): Promise<MigrationStatus> {
  const files = await loadMigrations(opts.migrationsDir);
  const applied = await readAppliedMigrations(pool);
  const appliedVersions = new Set(applied.map((a) => a.version));
  const byVersion = new Map(applied.map((a) => [a.version, a]));
  return {
    applied,
    pending: files.filter((f) => !appliedVersions.has(f.version)),
    changed: files.filter((f) => {
      const a = byVersion.get(f.version);
      return a !== undefined && a.checksum !== f.checksum;
    }),
    version: applied.at(-1)?.version ?? null,
  };
}

/**
 * Creates the URL's database if it is missing (utf8mb4, utf8mb4_unicode_ci), over a connection
 * without a default database. Safe to run from several processes at once.
 * @returns whether this call created it.
 */
export async function ensureDatabase(
  url: string,
  opts: Pick<CreatePoolOptions, 'connectTimeoutMs'> = {},
): Promise<{ created: boolean; database: string }> {
  const { database } = parseMysqlUrl(url);
  if (database === null) {
    throw new MigrationError('the database URL names no database');
  }
  assertDatabaseName(database);
  const pool = createPool(url, { ...opts, database: null, connectionLimit: 1 });
  try {
    const [result] = await pool.query<ResultSetHeader>(
      `CREATE DATABASE IF NOT EXISTS ${pool.escapeId(database)} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
    );
    // An existing database gives warning 1007 instead of an error.
    return { created: result.warningStatus === 0, database };
  } finally {
    await pool.end();
  }
}

export interface MigrateDatabaseOptions extends MigrateOptions {
  /** Passed to the pool used for migrating. */
  connectTimeoutMs?: number;
}

/** `ensureDatabase(url)` then `migrate` on a short-lived pool: what `pnpm migrate` does. */
export async function migrateDatabase(
  url: string,
  opts: MigrateDatabaseOptions = {},
): Promise<MigrateResult & { created: boolean }> {
  const poolOpts = opts.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: opts.connectTimeoutMs };
  const { created } = await ensureDatabase(url, poolOpts);
  const pool = createPool(url, { ...poolOpts, connectionLimit: 1 });
  try {
    return { ...(await migrate(pool, opts)), created };
  } finally {
    await pool.end();
  }
}
