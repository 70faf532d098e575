/**
 * R23 at the store (#45): the per-team claim locks only rows that can start now. A held row
 * (a `serial` task with a run, a rerun batch at its concurrency) stays unlocked while the claim
 * transaction is open, so it costs no lock; the startable row of the same team is claimed.
 */
import type { ResultSetHeader } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { withTransaction } from '../pool.js';
import { claimStartable, claimUnroutable, UNROUTABLE_SCAN_ROWS } from './claim-by-team.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

async function task(name: string, block: string, tags: readonly string[] = []): Promise<number> {
  const [r] = await db.pool.query<ResultSetHeader>(
    `INSERT INTO task (name, team, schedule, schedule_type, exec, params, tags, retry, misfire, block_strategy)
     VALUES (?, 'default', '{"type":"none"}', 'none', '{}', '{}', ?, '{}', '{}', ?)`,
    [name, JSON.stringify(tags), block],
  );
  return r.insertId;
}

async function instance(taskId: number, name: string, state: string, offsetS: number, batch: number | null = null): Promise<number> {
  const [r] = await db.pool.query<ResultSetHeader>(
    `INSERT INTO task_instance (task_id, task_name, team, expected_time, biz_date, \`trigger\`, state, due_at, params, priority, rerun_batch_id)
     VALUES (?, ?, 'default', NOW(3) - INTERVAL ? SECOND, CURDATE(), 'schedule', ?, NOW(3) - INTERVAL 1 SECOND, '{}', 9, ?)`,
    [taskId, name, offsetS, state, batch],
  );
  return r.insertId;
}

describe('claimStartable', () => {
  it('R23: held rows (serial task running, batch at its concurrency) are neither returned nor locked; the startable row is', async () => {
    const serial = await task('cbt_serial', 'serial');
    await instance(serial, 'cbt_serial', 'RUNNING', 60);
    const heldSerial = await instance(serial, 'cbt_serial', 'PENDING', 30);
    const [batch] = await db.pool.query<ResultSetHeader>(`INSERT INTO rerun_batch (mode, reason, actor, concurrency, request) VALUES ('backfill', 't', 't', 1, '{}')`);
    const parallel = await task('cbt_parallel', 'parallel');
    await instance(parallel, 'cbt_parallel', 'RUNNING', 60, batch.insertId);
    const heldBatch = await instance(parallel, 'cbt_parallel', 'PENDING', 30, batch.insertId);
    const free = await instance(parallel, 'cbt_parallel', 'PENDING', 20);

    await withTransaction(
      db.pool,
      async (conn) => {
        const claimed = await claimStartable(conn, { team: 'default', limit: 20, capabilities: [{ teams: null, tags: [] }] });
        expect(claimed.map((c) => c.id)).toEqual([String(free)]);
        // Another session can lock the held rows at once: the claim holds no lock on them.
        const other = await db.pool.getConnection();
        try {
          await other.beginTransaction();
          // By primary key (a scan would meet the claimed row and wait on it); SKIP LOCKED
          // leaves out exactly the rows someone holds.
          const [rows] = await other.query<ResultSetHeader[]>('SELECT id FROM task_instance FORCE INDEX (PRIMARY) WHERE id IN (?, ?, ?) FOR UPDATE SKIP LOCKED', [
            heldSerial,
            heldBatch,
            free,
          ]);
          expect((rows as unknown as Array<{ id: string | number }>).map((r) => Number(r.id)).sort()).toEqual([heldSerial, heldBatch].sort());
          await other.rollback();
        } finally {
          other.release();
        }
      },
      { isolationLevel: 'READ COMMITTED' },
    );
  });
});

describe('claimUnroutable', () => {
  const workers = [{ teams: ['default'], tags: ['cpu'] }];
  const claim = (limit = 20) =>
    withTransaction(db.pool, (conn) => claimUnroutable(conn, { limit, capabilities: workers }).then((rows) => rows.map((r) => Number(r.id))), {
      isolationLevel: 'READ COMMITTED',
    });

  it('R11: claims the rows no live worker could take (a tag none offers), not the routable ones', async () => {
    const gpu = await task('cbu_gpu', 'parallel', ['gpu']);
    const cpu = await task('cbu_cpu', 'parallel', ['cpu']);
    await instance(cpu, 'cbu_cpu', 'PENDING', 40);
    const held = await instance(gpu, 'cbu_gpu', 'PENDING', 30);
    await instance(cpu, 'cbu_cpu', 'PENDING', 20);
    expect(await claim()).toEqual([held]);
  });

  it(`looks at the first ${UNROUTABLE_SCAN_ROWS} due rows in the claim order only: a row behind them is claimed once they have gone`, async () => {
    await db.pool.query(`UPDATE task_instance SET state = 'CANCELED' WHERE state = 'PENDING'`);
    const cpu = await task('cbu_ahead', 'parallel', ['cpu']);
    const gpu = await task('cbu_behind', 'parallel', ['gpu']);
    // Higher priority: ahead of the unroutable row in the claim order.
    const at = Date.now() - 60_000;
    await db.pool.query(
      `INSERT INTO task_instance (task_id, task_name, team, expected_time, biz_date, \`trigger\`, state, due_at, params, priority) VALUES ?`,
      [Array.from({ length: UNROUTABLE_SCAN_ROWS }, (_, i) => [cpu, 'cbu_ahead', 'default', new Date(at - i), new Date(at), 'schedule', 'PENDING', new Date(at), '{}', 10])],
    );
    const behind = await instance(gpu, 'cbu_behind', 'PENDING', 30);
    expect(await claim()).toEqual([]);
    await db.pool.query(`UPDATE task_instance SET state = 'CANCELED' WHERE task_name = 'cbu_ahead' ORDER BY id LIMIT 1`);
    expect(await claim()).toEqual([behind]);
  });
});
