/* eslint-disable @typescript-eslint/no-explicit-any --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/** execution_claim (R18): one live holder per (instance, run); a fenced-out or failed holder passes it on. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { withTransaction } from '../pool.js';
import { claimRun, isExecutionLive } from './claims.js';

let db: TestDatabase;
const A = '0190a0a0-0000-7000-8000-0000000000a1';
const B = '0190a0a0-0000-7000-8000-0000000000b2';

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(
    `INSERT INTO task_instance (id, task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params, current_execution_id)
     VALUES (1, 1, 't', '2026-11-01 00:00:00', '2026-11-01', 'schedule', 'RUNNING', '2026-11-01 00:00:00', '{}', ?)`,
    [A],
  );
  await db.pool.query(
    "INSERT INTO task_execution (execution_id, instance_id, attempt, run_no, worker_id, state) VALUES (?, 1, 1, 1, 'w1', 'RUNNING'), (?, 1, 2, 1, 'w2', 'DISPATCHED')",
    [A, B],
  );
});
afterAll(async () => {
  await db?.drop();
});

const claim = (executionId: string) =>
  withTransaction(db.pool, (tx) => claimRun(tx, { executionId, instanceId: '1', runNo: 1, shardIndex: null }));

it('R18 grants the current execution, refuses a fenced-out one, and hands over once the holder is fenced out', async () => {
  expect(await isExecutionLive(db.pool, A)).toBe(true);
  expect(await isExecutionLive(db.pool, B)).toBe(false);
  expect(await claim(A)).toEqual({ granted: true });
  expect(await claim(A)).toEqual({ granted: true });
  expect(await claim(B)).toMatchObject({ granted: false, why: 'NOT_LIVE' });
  // the broker fences A out (re-dispatch): B becomes current
  await db.pool.query("UPDATE task_execution SET state = 'SUPERSEDED' WHERE execution_id = ?", [A]);
  await db.pool.query('UPDATE task_instance SET current_execution_id = ? WHERE id = 1', [B]);
  expect(await claim(B)).toEqual({ granted: true });
  expect(await claim(A)).toMatchObject({ granted: false });
  const [rows] = await db.pool.query<any[]>('SELECT execution_id FROM execution_claim');
  expect(rows.map((r: { execution_id: string }) => r.execution_id)).toEqual([B]);
});

it('R18 a rerun (run_no + 1) is a new claim', async () => {
  await db.pool.query('UPDATE task_instance SET run_no = 2 WHERE id = 1');
  await db.pool.query("INSERT INTO task_execution (execution_id, instance_id, attempt, run_no, worker_id, state) VALUES ('0190a0a0-0000-7000-8000-0000000000c3', 1, 1, 2, 'w1', 'RUNNING')");
  await db.pool.query("UPDATE task_instance SET current_execution_id = '0190a0a0-0000-7000-8000-0000000000c3' WHERE id = 1");
  expect(await claim('0190a0a0-0000-7000-8000-0000000000c3')).toEqual({ granted: true });
});
