import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { markExecutionsAcked, perRowValue, recordExecutionOutcomes, transitionInstances } from './bulk-transitions.js';
import { insertExecutions } from './dispatch.js';
import { NOW, nowPlusMs } from './transitions.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

/** Distinct slots across the whole file (one task name). */
let slot = 0;

async function pending(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const [r] = await db.pool.query<ResultSetHeader>(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params)
       VALUES (1, 'bulk', NOW(3) + INTERVAL ? SECOND, CURDATE(), 'manual', 'PENDING', NOW(3), '{}')`,
      [slot++],
    );
    ids.push(String(r.insertId));
  }
  return ids;
}

async function rowsOf(ids: readonly string[]): Promise<Map<string, RowDataPacket>> {
  const [rows] = await db.pool.query<RowDataPacket[]>(`SELECT * FROM task_instance WHERE id IN (?)`, [ids]);
  return new Map(rows.map((r) => [String(r.id), r]));
}

describe('R10 set-based transitions', () => {
  it('moves many rows in one statement with per-row values, and reports exactly the rows that moved', async () => {
    const ids = await pending(4);
    const [a, b, c, d] = ids as [string, string, string, string];
    // d is no longer PENDING: it must not move, and must not be reported.
    await db.pool.query(`UPDATE task_instance SET state = 'CANCELED' WHERE id = ?`, [d]);
    await expect(transitionInstances(db.pool, { ids, from: 'PENDING', to: 'RUNNING' })).rejects.toThrow('illegal instance state transition');
    const moved = await transitionInstances(db.pool, {
      ids,
      from: 'PENDING',
      to: 'DISPATCHED',
      perRow: {
        worker_id: new Map(ids.map((id) => [id, `w-${id}`])),
        current_execution_id: new Map(ids.map((id) => [id, `e-${id}`])),
      },
      set: { dispatch_count: { expr: 'dispatch_count + 1' }, ack_deadline: nowPlusMs(30_000) },
    });
    expect([...moved].sort()).toEqual([a, b, c].sort());
    const rows = await rowsOf(ids);
    for (const id of [a, b, c]) {
      expect(rows.get(id)).toMatchObject({ state: 'DISPATCHED', worker_id: `w-${id}`, current_execution_id: `e-${id}`, dispatch_count: 1 });
    }
    expect(rows.get(d)).toMatchObject({ state: 'CANCELED', worker_id: null });
  });

  it('R10 groups rows sharing a value (WHEN id IN …) and keeps one branch per row only for values that differ', async () => {
    const params: unknown[] = [];
    expect(perRowValue('id', [1, 2, 3, 4, 5, 6, 7, 8], (i) => (i % 2 === 0 ? 'w1' : 'w2'), params)).toBe('CASE WHEN id IN (?) THEN ? WHEN id IN (?) THEN ? END');
    expect(params).toEqual([[1, 3, 5, 7], 'w1', [2, 4, 6, 8], 'w2']);
    const same: unknown[] = [];
    expect(perRowValue('id', [1, 2], () => new Date(5), same)).toBe('?');
    const unique: unknown[] = [];
    expect(perRowValue('id', [1, 2], (i) => `e${i}`, unique)).toBe('CASE id WHEN ? THEN ? WHEN ? THEN ? END');
    expect(unique).toEqual([1, 'e0', 2, 'e1']);

    // Against MariaDB: 300 rows, two workers (grouped), unique executions (one branch per row).
    const ids = await pending(300);
    const moved = await transitionInstances(db.pool, {
      ids,
      from: 'PENDING',
      to: 'DISPATCHED',
      perRow: {
        worker_id: new Map(ids.map((id, i) => [id, i % 2 === 0 ? 'w-even' : 'w-odd'])),
        current_execution_id: new Map(ids.map((id) => [id, `e-${id}`])),
      },
    });
    expect(moved.size).toBe(300);
    const rows = await rowsOf(ids);
    ids.forEach((id, i) => expect(rows.get(id)).toMatchObject({ state: 'DISPATCHED', worker_id: i % 2 === 0 ? 'w-even' : 'w-odd', current_execution_id: `e-${id}` }));
  });

  it('is fenced per row by current_execution_id: a superseded execution moves nothing', async () => {
    const ids = await pending(3);
    const [a, b, c] = ids as [string, string, string];
    await transitionInstances(db.pool, {
      ids,
      from: 'PENDING',
      to: 'DISPATCHED',
      perRow: { current_execution_id: new Map(ids.map((id) => [id, `x-${id}`])) },
    });
    // b was re-routed meanwhile: its current execution is another one.
    await db.pool.query(`UPDATE task_instance SET current_execution_id = 'newer' WHERE id = ?`, [b]);
    const moved = await transitionInstances(db.pool, {
      ids,
      from: ['DISPATCHED', 'RUNNING'],
      to: 'SUCCESS',
      fence: new Map(ids.map((id) => [id, `x-${id}`])),
      set: { ended_at: NOW },
    });
    expect([...moved].sort()).toEqual([a, c].sort());
    expect((await rowsOf([b])).get(b)).toMatchObject({ state: 'DISPATCHED' });
  });

  it('acks and records many executions at once; a second ACK keeps the first time', async () => {
    const ids = await pending(2);
    const executions = ids.map((id, i) => ({ executionId: `rec-${id}`, instanceId: id, attempt: 1, runNo: 1, workerId: `w${i}` }));
    await insertExecutions(db.pool, executions);
    await markExecutionsAcked(db.pool, executions.map((e) => e.executionId));
    const [first] = await db.pool.query<RowDataPacket[]>(`SELECT execution_id, acked_at, state FROM task_execution WHERE execution_id IN (?) ORDER BY execution_id`, [executions.map((e) => e.executionId)]);
    expect(first.every((r) => r.state === 'RUNNING' && r.acked_at !== null)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await markExecutionsAcked(db.pool, executions.map((e) => e.executionId));
    const [again] = await db.pool.query<RowDataPacket[]>(`SELECT acked_at FROM task_execution WHERE execution_id IN (?) ORDER BY execution_id`, [executions.map((e) => e.executionId)]);
    expect(again.map((r) => (r.acked_at as Date).getTime())).toEqual(first.map((r) => (r.acked_at as Date).getTime()));

    const ended = new Date(Date.UTC(2026, 10, 29, 12, 0, 0, 123));
    await recordExecutionOutcomes(db.pool, [
      { executionId: executions[0]!.executionId, outcome: { state: 'SUCCESS', exitCode: 200, outputTail: 'ok ✓', result: { rows: 3 }, endedAt: ended } },
      { executionId: executions[1]!.executionId, outcome: { state: 'FAILED', reason: 'JOB_FAILED', exitCode: 500, error: 'boom', outputTruncated: true } },
    ]);
    const [rows] = await db.pool.query<RowDataPacket[]>(
      `SELECT execution_id, state, reason, exit_code, output_tail, output_truncated, error, result, started_at, acked_at, ended_at FROM task_execution WHERE execution_id IN (?) ORDER BY execution_id`,
      [executions.map((e) => e.executionId)],
    );
    const byId = new Map(rows.map((r) => [String(r.execution_id), r]));
    const ok = byId.get(executions[0]!.executionId)!;
    expect(ok).toMatchObject({ state: 'SUCCESS', reason: null, exit_code: 200, output_tail: 'ok ✓', output_truncated: 0, error: null });
    expect((ok.ended_at as Date).getTime()).toBe(ended.getTime());
    expect(JSON.parse(String(ok.result))).toEqual({ rows: 3 });
    expect((ok.started_at as Date).getTime()).toBe((ok.acked_at as Date).getTime()); // no start given: the ACK time
    const failed = byId.get(executions[1]!.executionId)!;
    expect(failed).toMatchObject({ state: 'FAILED', reason: 'JOB_FAILED', exit_code: 500, error: 'boom', output_truncated: 1 });
    expect(failed.ended_at).not.toBeNull(); // no end given: the database clock
    await expect(recordExecutionOutcomes(db.pool, [{ executionId: 'x', outcome: { state: 'ASYNC', open: true } }])).rejects.toThrow('open (async)');
  });
});
