import { mkdtemp, rm, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
// @ax/testing's index (owned by another author) does not export these fixtures yet; switch
// to `from '@ax/testing'` once it does.
// eslint-disable-next-line import-x/no-relative-packages
import { createTestDatabase } from '../../testing/src/database.js';
// eslint-disable-next-line import-x/no-relative-packages
import type { TestDatabase } from '../../testing/src/database.js';
import {
  MigrationChecksumError,
  MigrationError,
  MigrationLockError,
  SchemaVersionError,
} from './errors.js';
import { loadMigrations, migrate, readAppliedMigrations } from './migrate.js';
import { showCreateTables } from './queries/schema.js';
import {
  SCHEMA_VERSION_MAX,
  SCHEMA_VERSION_MIN,
  assertSchemaSupported,
  readSchemaVersion,
} from './schema-version.js';

/** Every table's CREATE TABLE plus the seed rows of the migration. */
async function schemaSnapshot(pool: Pool): Promise<Record<string, string>> {
  const snapshot = await showCreateTables(pool);
  const [flags] = await pool.query<RowDataPacket[]>('SELECT name, value FROM system_flag ORDER BY name');
  const [dag] = await pool.query<RowDataPacket[]>('SELECT id, dag_version FROM dag_lock');
  snapshot['#seed'] = JSON.stringify({ flags, dag });
  return snapshot;
}

async function migrationRows(pool: Pool): Promise<RowDataPacket[]> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT * FROM schema_migrations ORDER BY version');
  return rows;
}

describe('the shipped migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
  });
  afterAll(async () => {
    await db.drop();
  });

  it('end at SCHEMA_VERSION_MAX, so a new migration cannot ship without raising it', async () => {
    const files = await loadMigrations();
    expect(files.map((f) => f.fileName)[0]).toBe('0001_init.sql');
    expect(files.at(-1)?.version).toBe(SCHEMA_VERSION_MAX);
    expect(SCHEMA_VERSION_MIN).toBeLessThanOrEqual(SCHEMA_VERSION_MAX);
  });

  it('apply to an empty database once; a second run applies nothing and changes nothing', async () => {
    const first = await migrate(db.pool);
    const shipped = (await loadMigrations()).map((m) => m.fileName);
    expect(shipped.slice(0, 3)).toEqual(['0001_init.sql', '0002_lean_instance_indexes.sql', '0003_teams.sql']);
    expect(first.applied.map((m) => m.fileName)).toEqual(shipped);
    expect(first.version).toBe(SCHEMA_VERSION_MAX);
    const rowsAfterFirst = await migrationRows(db.pool);
    const schemaAfterFirst = await schemaSnapshot(db.pool);

    const second = await migrate(db.pool);
    expect(second.applied).toEqual([]);
    expect(second.version).toBe(SCHEMA_VERSION_MAX);
    expect(await migrationRows(db.pool)).toEqual(rowsAfterFirst);
    expect(await schemaSnapshot(db.pool)).toEqual(schemaAfterFirst);
    expect(rowsAfterFirst).toHaveLength(shipped.length);
  });

  it('create every table of DESIGN §2/§10 with the guard indexes', async () => {
    const snapshot = await schemaSnapshot(db.pool);
    expect(Object.keys(snapshot).filter((k) => k !== '#seed')).toEqual([
      'alert_delivery',
      'alert_log',
      'api_token',
      'audit_log',
      'calendar',
      'console_session',
      'dag_lock',
      'dead_letter',
      'event_log',
      'execution_claim',
      'instance_stats_day',
      'instance_stats_hour',
      'job_log_chunk',
      'job_log_end',
      'rerun_batch',
      'schema_migrations',
      'system_flag',
      'task',
      'task_calendar_skip',
      'task_daily_stats',
      'task_edge',
      'task_execution',
      'task_instance',
      'task_text_indexed',
      'task_text_trigram',
      'task_version',
      'team',
      'team_key_floor',
      'trigger_idempotency',
      'worker_enrollment',
    ]);
    expect(snapshot['task_instance']).toContain('UNIQUE KEY `uk_instance_slot` (`task_name`,`expected_time`)');
    expect(snapshot['task_instance']).toMatch(/KEY `idx_instance_claim` \(`state`,`priority` DESC,`due_at`\)/);
    expect(snapshot['task_execution']).toContain('UNIQUE KEY `uk_execution_id` (`execution_id`)');
    expect(snapshot['execution_claim']).toContain('PRIMARY KEY (`instance_id`,`run_no`,`shard_index`)');
    expect(snapshot['job_log_chunk']).toContain('PRIMARY KEY (`execution_id`,`stream`,`byte_offset`)');
    expect(snapshot['task_instance']).toContain('KEY `idx_instance_task_ended` (`task_id`,`ended_at`)');
    expect(snapshot['task_calendar_skip']).toContain('PRIMARY KEY (`task_id`,`expected_time`)');
    expect(snapshot['#seed']).toContain('dispatch_paused');
  });

  it('enforce one instance per slot and store DATETIME(3) with milliseconds', async () => {
    const insert = `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params)
      VALUES (1, 'etl', ?, '2026-12-01', 'schedule', 'PENDING', ?, '{}')`;
    const slot = new Date('2026-12-01T02:00:00.123Z');
    await db.pool.query(insert, [slot, slot]);
    await expect(db.pool.query(insert, [slot, slot])).rejects.toMatchObject({ errno: 1062 });
    const [rows] = await db.pool.query<Array<RowDataPacket & { id: string; expected_time: Date }>>(
      'SELECT id, expected_time FROM task_instance',
    );
    expect(rows[0]?.expected_time.toISOString()).toBe('2026-12-01T02:00:00.123Z');
    expect(typeof rows[0]?.id).toBe('string'); // BIGINT ids come back as strings
    await db.pool.query('DELETE FROM task_instance');
  });
});

describe('the migration runner', () => {
  const dirs: string[] = [];
  const dbs: TestDatabase[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
    await Promise.all(dbs.splice(0).map((d) => d.drop()));
  });

  async function scratch(files: Record<string, string>): Promise<{ dir: string; db: TestDatabase }> {
    const dir = await mkdtemp(join(tmpdir(), 'ax-migrations-'));
    dirs.push(dir);
    for (const [name, sql] of Object.entries(files)) await writeFile(join(dir, name), sql);
    const db = await createTestDatabase({ migrate: false });
    dbs.push(db);
    return { dir, db };
  }

  it('refuses to run when an applied file changed, and applies nothing', async () => {
    const { dir, db } = await scratch({
      '0001_a.sql': 'CREATE TABLE a (id INT PRIMARY KEY);\n',
      '0002_b.sql': 'CREATE TABLE b (id INT PRIMARY KEY);\n',
    });
    await migrate(db.pool, { migrationsDir: dir });
    await appendFile(join(dir, '0001_a.sql'), 'ALTER TABLE a ADD COLUMN x INT;\n');
    await writeFile(join(dir, '0003_c.sql'), 'CREATE TABLE c (id INT PRIMARY KEY);\n');
    const failure = migrate(db.pool, { migrationsDir: dir });
    await expect(failure).rejects.toBeInstanceOf(MigrationChecksumError);
    await expect(failure).rejects.toThrow(/0001_a\.sql was changed after it was applied/);
    const [tables] = await db.pool.query<RowDataPacket[]>("SHOW TABLES LIKE 'c'");
    expect(tables).toHaveLength(0);
    expect((await readAppliedMigrations(db.pool)).map((a) => a.version)).toEqual([1, 2]);
  });

  it('ignores CRLF line endings when comparing checksums', async () => {
    const { dir, db } = await scratch({ '0001_a.sql': 'CREATE TABLE a (id INT PRIMARY KEY);\n' });
    await migrate(db.pool, { migrationsDir: dir });
    await writeFile(join(dir, '0001_a.sql'), 'CREATE TABLE a (id INT PRIMARY KEY);\r\n');
    await expect(migrate(db.pool, { migrationsDir: dir })).resolves.toMatchObject({ applied: [] });
  });

  it('refuses a pending file older than the applied version, and bad file names', async () => {
    const { dir, db } = await scratch({ '0002_b.sql': 'CREATE TABLE b (id INT PRIMARY KEY);' });
    await migrate(db.pool, { migrationsDir: dir });
    await writeFile(join(dir, '0001_a.sql'), 'CREATE TABLE a (id INT PRIMARY KEY);');
    await expect(migrate(db.pool, { migrationsDir: dir })).rejects.toThrow(/0001_a\.sql is older than the applied version 2/);
    await writeFile(join(dir, '3_bad.sql'), 'SELECT 1;');
    await expect(loadMigrations(dir)).rejects.toThrow(/3_bad\.sql is not named NNNN_name\.sql/);
  });

  it('names the file and statement that failed and does not record the file', async () => {
    const { dir, db } = await scratch({
      '0001_a.sql': 'CREATE TABLE a (id INT PRIMARY KEY);\nCREATE TABLE oops (id NOTATYPE);\n',
    });
    const failure = migrate(db.pool, { migrationsDir: dir });
    await expect(failure).rejects.toBeInstanceOf(MigrationError);
    await expect(failure).rejects.toThrow(/0001_a\.sql, statement 2 \(CREATE TABLE oops/);
    expect(await readAppliedMigrations(db.pool)).toEqual([]);
  });

  it('waits for the lock another session holds, then finds its own work', async () => {
    const { dir, db } = await scratch({ '0001_a.sql': 'CREATE TABLE a (id INT PRIMARY KEY);' });
    const holder = await db.pool.getConnection();
    try {
      await holder.query('SELECT GET_LOCK(?, 0)', [`${db.name}.ax_migrate`]);
      await expect(migrate(db.pool, { migrationsDir: dir, lockTimeoutSeconds: 1 })).rejects.toBeInstanceOf(
        MigrationLockError,
      );
      const waiting = migrate(db.pool, { migrationsDir: dir, lockTimeoutSeconds: 30 });
      await new Promise((r) => setTimeout(r, 300));
      expect(await readAppliedMigrations(db.pool)).toEqual([]); // still blocked behind the lock
      await holder.query('SELECT RELEASE_LOCK(?)', [`${db.name}.ax_migrate`]);
      expect((await waiting).applied.map((m) => m.version)).toEqual([1]);
    } finally {
      holder.release();
    }
  });
});

describe('assertSchemaSupported (R22)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
  });
  afterAll(async () => {
    await db.drop();
  });

  it('refuses a database without schema, accepts the supported version, refuses one outside the range', async () => {
    await expect(assertSchemaSupported(db.pool)).rejects.toThrow(
      `database has no ax schema (no applied migrations); this build supports versions ${SCHEMA_VERSION_MIN}–${SCHEMA_VERSION_MAX}; run \`pnpm migrate\``,
    );
    await migrate(db.pool);
    await expect(assertSchemaSupported(db.pool)).resolves.toBe(SCHEMA_VERSION_MAX);

    await db.pool.query(
      "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (70, 'future', REPEAT('0', 64), NOW(3))",
    );
    const refused = assertSchemaSupported(db.pool);
    await expect(refused).rejects.toBeInstanceOf(SchemaVersionError);
    await expect(refused).rejects.toThrow(
      `database schema version 70 is outside the range ${SCHEMA_VERSION_MIN}–${SCHEMA_VERSION_MAX} this build supports; run \`pnpm migrate\` or upgrade`,
    );
    await expect(refused).rejects.toMatchObject({ version: 70 });
    // A newer build's migration does not make this build's migrate fail (expand-then-contract).
    await expect(migrate(db.pool)).resolves.toMatchObject({ applied: [], version: 70 });
    await db.pool.query('DELETE FROM schema_migrations WHERE version = 70');
    expect(await readSchemaVersion(db.pool)).toBe(SCHEMA_VERSION_MAX);
    // A schema older than the columns this build's statements name: refused at start, not at
    // the first statement that names one.
    await db.pool.query('DELETE FROM schema_migrations WHERE version >= ?', [SCHEMA_VERSION_MIN]);
    await expect(assertSchemaSupported(db.pool)).rejects.toThrow(
      `database schema version ${SCHEMA_VERSION_MIN - 1} is outside the range ${SCHEMA_VERSION_MIN}–${SCHEMA_VERSION_MAX} this build supports`,
    );
  });
});
