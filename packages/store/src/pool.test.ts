import mysql from 'mysql2/promise';
import type { PoolConnection, RowDataPacket } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ax/testing's index (owned by another author) does not export these fixtures yet; switch
// to `from '@ax/testing'` once it does.
// eslint-disable-next-line import-x/no-relative-packages
import { createTestDatabase } from '../../testing/src/database.js';
// eslint-disable-next-line import-x/no-relative-packages
import type { TestDatabase } from '../../testing/src/database.js';
// eslint-disable-next-line import-x/no-relative-packages
import { startMariaDb } from '../../testing/src/mariadb-server.js';
// eslint-disable-next-line import-x/no-relative-packages
import type { MariaDbServer } from '../../testing/src/mariadb-server.js';
import { SessionInitError, StoreError, TransactionTimeoutError } from './errors.js';
import { createPool, withTransaction } from './pool.js';
import type { StorePool } from './pool.js';
import { withDatabase } from './url.js';

interface ClockRow extends RowDataPacket {
  now: Date;
  utc: Date;
  now_text: string;
  utc_text: string;
  tz: string;
  global_tz: string;
}

const CLOCK_SQL = `SELECT NOW(3) AS now, UTC_TIMESTAMP(3) AS utc,
  CAST(NOW(3) AS CHAR) AS now_text, CAST(UTC_TIMESTAMP(3) AS CHAR) AS utc_text,
  @@session.time_zone AS tz, @@global.time_zone AS global_tz`;

describe('createPool on a server whose default time zone is +08:00 (R6)', () => {
  let server: MariaDbServer;
  let db: TestDatabase;
  let pool: StorePool;

  beforeAll(async () => {
    server = await startMariaDb({ args: ['--default-time-zone=+08:00'] });
    db = await createTestDatabase({ serverUrl: server.url, migrate: false });
    pool = db.pool;
  });

  afterAll(async () => {
    await db?.drop();
    await server?.cleanup();
  });

  it('a plain connection is at +08:00 there (the control: the server really is not UTC)', async () => {
    const raw = await mysql.createConnection({ host: '127.0.0.1', port: server.port, user: 'root' });
    try {
      const [rows] = await raw.query<ClockRow[]>(CLOCK_SQL);
      expect(rows[0]?.tz).toBe('+08:00');
      expect(rows[0]?.now_text).not.toBe(rows[0]?.utc_text);
    } finally {
      await raw.end();
    }
  });

  it('every pooled session is UTC: NOW(3) equals UTC_TIMESTAMP(3)', async () => {
    const [rows] = await pool.query<ClockRow[]>(CLOCK_SQL);
    const row = rows[0];
    expect(row?.global_tz).toBe('+08:00');
    expect(row?.tz).toBe('+00:00');
    expect(row?.now_text).toBe(row?.utc_text);
    expect(row?.now.getTime()).toBe(row?.utc.getTime());
    expect(Math.abs((row?.now.getTime() ?? 0) - Date.now())).toBeLessThan(5_000);
  });

  it('holds for the very first query of every connection, even when they all start at once', async () => {
    const fresh = createPool(withDatabase(server.url, db.name), { connectionLimit: 8 });
    try {
      const results = await Promise.all(
        Array.from({ length: 24 }, () => fresh.query<ClockRow[]>('SELECT @@session.time_zone AS tz, CONNECTION_ID() AS id')),
      );
      const ids = new Set(results.map(([rows]) => String(rows[0]?.['id'])));
      expect(ids.size).toBeGreaterThan(1); // several connections were really opened
      expect(results.map(([rows]) => rows[0]?.tz)).toEqual(Array(24).fill('+00:00'));
      const conn = await fresh.getConnection(); // the explicit-connection path too
      try {
        const [rows] = await conn.query<ClockRow[]>('SELECT @@session.time_zone AS tz');
        expect(rows[0]?.tz).toBe('+00:00');
      } finally {
        conn.release();
      }
    } finally {
      await fresh.end();
    }
  });

  it('a DATETIME(3) written and read back is the same instant, stored as UTC wall time', async () => {
    await pool.query(`CREATE TABLE t (
      id INT PRIMARY KEY,
      at DATETIME(3) NOT NULL,
      created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3))`);
    const instant = new Date('2026-03-08T07:30:00.123Z');
    const before = Date.now();
    await pool.query('INSERT INTO t (id, at) VALUES (?, ?)', [1, instant]);
    const after = Date.now();
    const [rows] = await pool.query<Array<RowDataPacket & { at: Date; at_text: string; created_at: Date }>>(
      'SELECT at, CAST(at AS CHAR) AS at_text, created_at FROM t WHERE id = 1',
    );
    const row = rows[0];
    expect(row?.at).toBeInstanceOf(Date);
    expect(row?.at.getTime()).toBe(instant.getTime());
    expect(row?.at_text).toBe('2026-03-08 07:30:00.123'); // UTC wall time, not +08:00
    // A CURRENT_TIMESTAMP(3) default is written on the database clock in UTC as well.
    expect(row?.created_at.getTime()).toBeGreaterThanOrEqual(before - 2_000);
    expect(row?.created_at.getTime()).toBeLessThanOrEqual(after + 2_000);
    // Comparisons in SQL against NOW(3) see the same instants the application does.
    const [cmp] = await pool.query<Array<RowDataPacket & { past: number }>>(
      'SELECT at < NOW(3) AS past FROM t WHERE id = 1',
    );
    expect(Number(cmp[0]?.past)).toBe(1);
  });

  it('a DATE (biz_date) comes back as UTC midnight of that day, whatever the server zone', async () => {
    await pool.query('CREATE TABLE d (id INT PRIMARY KEY, biz_date DATE NOT NULL)');
    await pool.query('INSERT INTO d VALUES (1, ?), (2, ?)', ['2026-12-01', new Date('2026-12-31T00:00:00.000Z')]);
    const [rows] = await pool.query<Array<RowDataPacket & { biz_date: Date }>>('SELECT biz_date FROM d ORDER BY id');
    expect(rows.map((r) => r.biz_date.toISOString())).toEqual([
      '2026-12-01T00:00:00.000Z',
      '2026-12-31T00:00:00.000Z',
    ]);
  });

  it('a connection whose session set-up fails is never used: its query fails instead', async () => {
    const errors: Error[] = [];
    const broken = createPool(withDatabase(server.url, db.name), {
      connectionLimit: 1,
      sessionVariables: { ax_no_such_variable: 1 },
      onSessionInitError: (err) => errors.push(err),
    });
    try {
      const first = broken.query('SELECT 1');
      await expect(first).rejects.toBeInstanceOf(SessionInitError);
      await expect(first).rejects.toThrow(/session set-up .* failed .*ax_no_such_variable/);
      expect(errors[0]).toBeInstanceOf(SessionInitError);
      // The broken connection left the pool: the next query opens a new one (and fails alike).
      await expect(broken.query('SELECT 1')).rejects.toBeInstanceOf(SessionInitError);
      expect(errors).toHaveLength(2);
    } finally {
      await broken.end();
    }
  });

  it('sets extra session variables and refuses to override time_zone', async () => {
    const tuned = createPool(withDatabase(server.url, db.name), {
      connectionLimit: 1,
      sessionVariables: { innodb_lock_wait_timeout: 7 },
    });
    try {
      const [rows] = await tuned.query<Array<RowDataPacket & { w: number; tz: string }>>(
        'SELECT @@session.innodb_lock_wait_timeout AS w, @@session.time_zone AS tz',
      );
      expect(rows[0]).toMatchObject({ tz: '+00:00' });
      expect(Number(rows[0]?.w)).toBe(7);
    } finally {
      await tuned.end();
    }
    expect(() => createPool(server.url, { sessionVariables: { time_zone: '+01:00' } })).toThrow(StoreError);
  });
});

describe('createPool and withTransaction on the shared server', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    await db.pool.query('CREATE TABLE k (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20) NOT NULL UNIQUE)');
  });
  afterAll(async () => {
    await db.drop();
  });

  it('exposes the database name and a redacted URL', () => {
    expect(db.pool.databaseName).toBe(db.name);
    expect(db.pool.redactedUrl).toBe(db.url);
  });

  it('returns BIGINT values as strings, also past 2^53', async () => {
    await db.pool.query('INSERT INTO k (id, v) VALUES (?, ?)', ['9007199254740993', 'big']);
    const [rows] = await db.pool.query<Array<RowDataPacket & { id: string; n: string }>>(
      "SELECT id, (SELECT COUNT(*) FROM k) AS n FROM k WHERE v = 'big'",
    );
    expect(rows[0]?.id).toBe('9007199254740993');
    expect(rows[0]?.n).toBe('1');
    await db.pool.query('DELETE FROM k');
  });

  it('commits what the function did and returns its value', async () => {
    const id = await withTransaction(db.pool, async (conn) => {
      await conn.query("INSERT INTO k (v) VALUES ('committed')");
      const [rows] = await conn.query<Array<RowDataPacket & { id: string }>>('SELECT LAST_INSERT_ID() AS id');
      return rows[0]?.id;
    });
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT id FROM k WHERE v = 'committed'");
    expect(rows.map((r) => String(r['id']))).toEqual([id]);
  });

  it('rolls back on throw, rethrows the same error and gives the connection back', async () => {
    const boom = new Error('boom');
    const pool = createPool(db.url, { connectionLimit: 1 });
    try {
      await expect(
        withTransaction(pool, async (conn) => {
          await conn.query("INSERT INTO k (v) VALUES ('rolled back')");
          throw boom;
        }),
      ).rejects.toBe(boom);
      // A duplicate key inside the transaction: the driver's error comes through unchanged.
      await expect(
        withTransaction(pool, async (conn) => {
          await conn.query("INSERT INTO k (v) VALUES ('dup')");
          await conn.query("INSERT INTO k (v) VALUES ('dup')");
        }),
      ).rejects.toMatchObject({ errno: 1062 });
      // With one connection in the pool, this would hang had the connection not been released.
      const [rows] = await pool.query<RowDataPacket[]>("SELECT v FROM k WHERE v IN ('rolled back', 'dup')");
      expect(rows).toEqual([]);
      // No transaction was left open on the reused connection: its autocommit write is
      // visible to another connection at once.
      await pool.query("INSERT INTO k (v) VALUES ('after')");
      const [seen] = await db.pool.query<RowDataPacket[]>("SELECT v FROM k WHERE v = 'after'");
      expect(seen).toHaveLength(1);
    } finally {
      await pool.end();
    }
  });

  it('timeoutMs: a transaction stuck in a query is given up, its connection dropped, its writes never committed', async () => {
    const pool = createPool(db.url, { connectionLimit: 1 });
    try {
      const startedAt = Date.now();
      const stuck = withTransaction(
        pool,
        async (conn) => {
          await conn.query("INSERT INTO k (v) VALUES ('stuck')");
          await conn.query('SELECT SLEEP(2)'); // a query that does not answer in time
        },
        { timeoutMs: 200 },
      );
      await expect(stuck).rejects.toBeInstanceOf(TransactionTimeoutError);
      await expect(stuck).rejects.toMatchObject({ code: 'ETIMEDOUT', timeoutMs: 200 });
      const gaveUpMs = Date.now() - startedAt;
      console.log(`timeoutMs 200: the caller was freed after ${gaveUpMs} ms (the query would have taken 2,000)`);
      expect(gaveUpMs).toBeLessThan(1_500);
      // The pool's only connection was destroyed, not given back busy: the next transaction
      // gets a fresh one at once and commits.
      await withTransaction(pool, async (conn) => conn.query("INSERT INTO k (v) VALUES ('next')"), { timeoutMs: 5_000 });
      // The abandoned insert never commits: once the server rolls it back (when SLEEP ends and
      // it sees the disconnect), the same unique value goes in from elsewhere.
      await db.pool.query("INSERT INTO k (v) VALUES ('stuck')");
      const [rows] = await db.pool.query<RowDataPacket[]>("SELECT v FROM k WHERE v IN ('stuck', 'next') ORDER BY v");
      expect(rows.map((r) => String(r['v']))).toEqual(['next', 'stuck']);
    } finally {
      await pool.end();
      await db.pool.query("DELETE FROM k WHERE v IN ('stuck', 'next')");
    }
  });

  it('timeoutMs: a transaction that finishes in time is unaffected; a bad limit is refused', async () => {
    const value = await withTransaction(db.pool, async (conn) => {
      await conn.query("INSERT INTO k (v) VALUES ('in time')");
      return 'done';
    }, { timeoutMs: 5_000 });
    expect(value).toBe('done');
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT v FROM k WHERE v = 'in time'");
    expect(rows).toHaveLength(1);
    await expect(withTransaction(db.pool, async () => 1, { timeoutMs: 0 })).rejects.toThrow(/timeoutMs must be a positive integer, got 0/);
  });

  /**
   * A real deadlock: another transaction, heavier (so InnoDB picks ours as the victim), holds
   * row 2 and waits for row 1, which `fn` holds; `fn` then asks for row 2. Returns how many
   * times `fn` ran and the rows afterwards, or the error `withTransaction` rejected with.
   */
  async function deadlockOnce(opts: { deadlockRetries?: number }): Promise<{ attempts: number; error?: unknown; rows: string }> {
    await db.pool.query('CREATE TABLE IF NOT EXISTS dl (id INT PRIMARY KEY, n INT NOT NULL)');
    await db.pool.query('CREATE TABLE IF NOT EXISTS dl_pad (id INT PRIMARY KEY, n INT NOT NULL)');
    await db.pool.query('DELETE FROM dl');
    await db.pool.query('INSERT INTO dl VALUES (1, 0), (2, 0)');
    await db.pool.query('INSERT IGNORE INTO dl_pad (id, n) SELECT id, 0 FROM (SELECT 1 + a.d + 10 * b.d AS id FROM (SELECT 0 d UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) a, (SELECT 0 d UNION SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 UNION SELECT 5 UNION SELECT 6 UNION SELECT 7 UNION SELECT 8 UNION SELECT 9) b) s');
    const other = await db.pool.getConnection();
    const [[who]] = await other.query<Array<RowDataPacket & { id: string }>>('SELECT CONNECTION_ID() AS id');
    await other.beginTransaction();
    await other.query('UPDATE dl_pad SET n = n + 1'); // 100 rows: the heavier side is not the victim
    await other.query('UPDATE dl SET n = n + 10 WHERE id = 2');
    let attempts = 0;
    let otherAsked!: (p: Promise<unknown>) => void;
    const otherUpdate = new Promise<Promise<unknown>>((resolve) => (otherAsked = resolve));
    const tx = withTransaction(db.pool, async (conn) => {
      attempts++;
      await conn.query('UPDATE dl SET n = n + 1 WHERE id = 1');
      if (attempts === 1) {
        otherAsked(other.query('UPDATE dl SET n = n + 10 WHERE id = 1'));
        // Row 2 is asked for only once the other side waits for row 1: a deadlock, not a wait.
        for (let waiting = false; !waiting; ) {
          const [trx] = await db.pool.query<RowDataPacket[]>("SELECT 1 FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = ? AND trx_state = 'LOCK WAIT'", [who?.id]);
          waiting = trx.length > 0;
          // innodb_trx is a cache, refreshed only when it was last read over 100 ms ago.
          if (!waiting) await new Promise((resolve) => setTimeout(resolve, 150));
        }
      }
      await conn.query('UPDATE dl SET n = n + 1 WHERE id = 2');
    }, opts);
    let error: unknown;
    const settled = tx.catch((e: unknown) => (error = e));
    await (await otherUpdate); // granted once our first attempt is rolled back
    await other.commit();
    other.release();
    await settled;
    const [rows] = await db.pool.query<RowDataPacket[]>('SELECT id, n FROM dl ORDER BY id');
    return { attempts, error, rows: rows.map((r) => `${String(r['id'])}:${String(r['n'])}`).join(' ') };
  }

  it('deadlockRetries 0 (the default): a deadlock victim fails with 1213, nothing of it committed', async () => {
    const { attempts, error, rows } = await deadlockOnce({});
    expect(error).toMatchObject({ errno: 1213, code: 'ER_LOCK_DEADLOCK' });
    expect(attempts).toBe(1);
    expect(rows).toBe('1:10 2:10');
  });

  it('deadlockRetries: a deadlock victim runs again on a fresh transaction and commits once', async () => {
    const { attempts, error, rows } = await deadlockOnce({ deadlockRetries: 2 });
    expect(error).toBeUndefined();
    expect(attempts).toBe(2);
    expect(rows).toBe('1:11 2:11'); // the other side's +10 and one +1 of ours, not two
    await expect(withTransaction(db.pool, async () => 1, { deadlockRetries: -1 })).rejects.toThrow(/deadlockRetries must be a whole number >= 0, got -1/);
  });

  it('deadlockRetries: other errors are not retried, a lock wait timeout (1205) included', async () => {
    let attempts = 0;
    await expect(
      withTransaction(db.pool, async (conn) => {
        attempts++;
        await conn.query('SELECT * FROM no_such_table');
      }, { deadlockRetries: 3 }),
    ).rejects.toMatchObject({ errno: 1146 });
    expect(attempts).toBe(1);
    const waiting = createPool(db.url, { connectionLimit: 1, sessionVariables: { innodb_lock_wait_timeout: 1 } });
    const holder = await db.pool.getConnection();
    try {
      await holder.beginTransaction();
      await holder.query("INSERT INTO k (v) VALUES ('held')");
      attempts = 0;
      await expect(
        withTransaction(waiting, async (conn) => {
          attempts++;
          await conn.query("SELECT id FROM k WHERE v = 'held' FOR UPDATE");
        }, { deadlockRetries: 3 }),
      ).rejects.toMatchObject({ errno: 1205 });
      expect(attempts).toBe(1);
    } finally {
      await holder.rollback();
      holder.release();
      await waiting.end();
    }
  });


  it('retryLockWaitTimeouts: a lock wait timeout (1205) runs again, within deadlockRetries, and commits once the lock is free', async () => {
    const waiting = createPool(db.url, { connectionLimit: 1, sessionVariables: { innodb_lock_wait_timeout: 1 } });
    const holder = await db.pool.getConnection();
    let attempts = 0;
    try {
      await holder.beginTransaction();
      await holder.query("INSERT INTO k (v) VALUES ('held-1205')");
      const work = withTransaction(waiting, async (conn) => {
        attempts++;
        // the holder lets go after the first timeout: the second attempt gets the lock
        if (attempts === 2) await holder.rollback();
        const [rows] = await conn.query<RowDataPacket[]>("SELECT id FROM k WHERE v = 'held-1205' FOR UPDATE");
        return rows.length;
      }, { deadlockRetries: 2, retryLockWaitTimeouts: true });
      await expect(work).resolves.toBe(0);
      expect(attempts).toBe(2);
    } finally {
      holder.release();
      await waiting.end();
    }
  });

  it('applies the isolation level to that transaction only', async () => {
    const pool = createPool(db.url, { connectionLimit: 1 });
    // Reads a count, lets another connection commit a row, reads again: READ COMMITTED sees
    // the new row, REPEATABLE READ (the default) keeps its snapshot.
    const secondReadSeesNewRow = (value: string) => async (conn: PoolConnection): Promise<boolean> => {
      const count = async (): Promise<number> => {
        const [rows] = await conn.query<Array<RowDataPacket & { n: string }>>('SELECT COUNT(*) AS n FROM k');
        return Number(rows[0]?.n);
      };
      const before = await count();
      await db.pool.query('INSERT INTO k (v) VALUES (?)', [value]);
      return (await count()) === before + 1;
    };
    try {
      expect(await withTransaction(pool, secondReadSeesNewRow('iso-1'), { isolationLevel: 'READ COMMITTED' })).toBe(
        true,
      );
      // Same (only) connection, next transaction: back to the server default.
      expect(await withTransaction(pool, secondReadSeesNewRow('iso-2'))).toBe(false);
    } finally {
      await pool.end();
    }
  });
});
