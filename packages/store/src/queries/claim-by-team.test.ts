/**
 * R23 at the store (#45): the per-team claim locks only rows that can start now. A held row
 * (a `serial` task with a run, a rerun batch at its concurrency) stays unlocked while the claim
 * transaction is open, so it costs no lock; the startable row of the same team is claimed.
 */
import type { ResultSetHeader } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { withTransaction } from '../pool.js';
import { claimStartable } from './claim-by-team.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

async function task(name: string, block: string): Promise<number> {
  const [r] = await db.pool.query<ResultSetHeader>(
    `INSERT INTO task (name, team, schedule, schedule_type, exec, params, tags, retry, misfire, block_strategy)
     VALUES (?, 'default', '{"type":"none"}', 'none', '{}', '{}', '[]', '{}', '{}', ?)`,
    [name, block],
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
