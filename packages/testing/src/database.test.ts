import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RowDataPacket } from 'mysql2/promise';
import { afterAll, describe, expect, it } from 'vitest';
import { createPool, SCHEMA_VERSION_MAX, withDatabase } from '@ax/store';
import { createTestDatabase, testServerUrl } from './database.js';
import type { TestDatabase } from './database.js';

async function databaseExists(name: string): Promise<boolean> {
  const admin = createPool(testServerUrl(), { database: null, connectionLimit: 1 });
  try {
    const [rows] = await admin.query<RowDataPacket[]>(
      'SELECT schema_name FROM information_schema.schemata WHERE schema_name = ?',
      [name],
    );
    return rows.length === 1;
  } finally {
    await admin.end();
  }
}

describe('createTestDatabase', () => {
  const made: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.all(made.map((d) => d.drop()));
  });

  it('creates a migrated ax_test_<hex> database with a UTC pool and drops it again', async () => {
    const db = await createTestDatabase();
    made.push(db);
    expect(db.name).toMatch(/^ax_test_[0-9a-f]{16}$/);
    expect(db.url).toBe(withDatabase(testServerUrl(), db.name));
    expect(await databaseExists(db.name)).toBe(true);
    const [rows] = await db.pool.query<Array<RowDataPacket & { v: number; tz: string; db: string }>>(
      'SELECT MAX(version) AS v, @@session.time_zone AS tz, DATABASE() AS db FROM schema_migrations',
    );
    expect(rows[0]).toMatchObject({ v: SCHEMA_VERSION_MAX, tz: '+00:00', db: db.name });

    await db.drop();
    expect(await databaseExists(db.name)).toBe(false);
    await expect(db.pool.query('SELECT 1')).rejects.toThrow(/closed/i); // the pool was ended
    await expect(db.drop()).resolves.toBeUndefined(); // a second drop is harmless
  });

  it('can leave the database unmigrated, and gives each caller its own database', async () => {
    const [a, b] = await Promise.all([createTestDatabase({ migrate: false }), createTestDatabase({ migrate: false })]);
    made.push(a, b);
    expect(a.name).not.toBe(b.name);
    const [tables] = await a.pool.query<RowDataPacket[]>('SHOW TABLES');
    expect(tables).toEqual([]);
  });

  it('drops the database when migrating it fails', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ax-migrations-'));
    try {
      // The server names the database in its error: that is how we learn which one was made.
      await writeFile(join(dir, '0001_broken.sql'), 'SELECT * FROM no_such_table;\n');
      const error = await createTestDatabase({ migrateOptions: { migrationsDir: dir } }).then(
        async (db) => {
          await db.drop();
          throw new Error('migration should have failed');
        },
        (err: unknown) => err as Error,
      );
      const name = /(ax_test_[0-9a-f]{16})\.no_such_table/.exec(error.message)?.[1];
      expect(name, error.message).toBeDefined();
      expect(await databaseExists(name as string)).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
