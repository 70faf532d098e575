/**
 * A fresh MySQL database per test file (CONVENTIONS: "own database ax_test_<random>").
 *
 * ```ts
 * let db: TestDatabase;
 * beforeAll(async () => { db = await createTestDatabase(); });
 * afterAll(async () => { await db.drop(); });
 * ```
 */
import { randomBytes } from 'node:crypto';
import { createPool, migrate, withDatabase } from '@ax/store';
import type { CreatePoolOptions, MigrateOptions, StorePool } from '@ax/store';

/** Server used when neither `opts.serverUrl` nor `AX_TEST_MYSQL_URL` says otherwise. */
export const DEFAULT_TEST_MYSQL_URL = 'mysql://root@127.0.0.1:3306';

/** Prefix of every database this helper creates (and may drop). */
export const TEST_DATABASE_PREFIX = 'ax_test_';

export interface CreateTestDatabaseOptions {
  /**
   * Server URL without a database (a database in it is ignored). Default: env
   * `AX_TEST_MYSQL_URL`, else `mysql://root@127.0.0.1:3306`.
   */
  serverUrl?: string;
  /** Apply the shipped migrations. Default `true`. */
  migrate?: boolean;
  /** Passed to `migrate` (e.g. another `migrationsDir`). Default `{}`. */
  migrateOptions?: MigrateOptions;
  /** Options of the returned pool. Default `{ connectionLimit: 5 }`. */
  poolOptions?: CreatePoolOptions;
}

export interface TestDatabase {
  /** `ax_test_<16 hex digits>`. */
  readonly name: string;
  /** URL of the database (for `AX_MYSQL_URL` of spawned services). */
  readonly url: string;
  /** Pool on the database, made with `createPool` (UTC sessions). Ended by `drop()`. */
  readonly pool: StorePool;
  /** Ends the pool and drops the database. Safe to call twice. */
  drop(): Promise<void>;
}

/** The server URL tests use: `AX_TEST_MYSQL_URL` or the local default. */
export function testServerUrl(): string {
  const env = process.env['AX_TEST_MYSQL_URL'];
  return env === undefined || env.trim() === '' ? DEFAULT_TEST_MYSQL_URL : env.trim();
}

/** Runs one statement on the server without a default database. */
async function onServer(serverUrl: string, sql: string): Promise<void> {
  const admin = createPool(serverUrl, { database: null, connectionLimit: 1 });
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** Creates `ax_test_<random>` on the test server, migrated unless `migrate: false`. */
export async function createTestDatabase(
  opts: CreateTestDatabaseOptions = {},
): Promise<TestDatabase> {
  const serverUrl = withDatabase(opts.serverUrl ?? testServerUrl(), null);
  const name = `${TEST_DATABASE_PREFIX}${randomBytes(8).toString('hex')}`;
  const url = withDatabase(serverUrl, name);
  // `name` is [a-z0-9_] only, so quoting with backticks is enough.
  await onServer(
    serverUrl,
    `CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
  );
  const pool = createPool(url, { connectionLimit: 5, ...opts.poolOptions });
  let dropped = false;
  const drop = async (): Promise<void> => {
    if (dropped) return;
    dropped = true;
    try {
      await pool.end();
    } finally {
      await onServer(serverUrl, `DROP DATABASE IF EXISTS \`${name}\``);
    }
  };
  try {
    if (opts.migrate ?? true) await migrate(pool, opts.migrateOptions);
  } catch (err) {
    await drop();
    throw err;
  }
  return { name, url, pool, drop };
}
