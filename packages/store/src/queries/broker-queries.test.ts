import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { isDispatchPaused, setDispatchPaused, startAckDeadlines } from './dispatch.js';
import { listUndeliveredAlerts, markAlertDelivered } from './alerts-delivery.js';
import { raiseAlert } from './alerts.js';
import { NOW, nowPlusMs, transitionInstance } from './transitions.js';

let db: TestDatabase;
let id: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const [r] = await db.pool.query<ResultSetHeader>(
    `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params)
     VALUES (1, 't', NOW(3), CURDATE(), 'manual', 'PENDING', NOW(3), '{}')`,
  );
  id = String(r.insertId);
});

afterAll(async () => {
  await db?.drop();
});

describe('broker queries', () => {
  it('transitions conditionally, checked against the state table, fenced by execution', async () => {
    await expect(transitionInstance(db.pool, { id, from: 'PENDING', to: 'RUNNING' })).rejects.toThrow('illegal instance state transition');
    expect(await transitionInstance(db.pool, { id, from: 'PENDING', to: 'DISPATCHED', set: { current_execution_id: 'e1', ack_deadline: nowPlusMs(60_000) } })).toBe(true);
    expect(await transitionInstance(db.pool, { id, from: 'PENDING', to: 'DISPATCHED' })).toBe(false);
    expect(await transitionInstance(db.pool, { id, from: 'DISPATCHED', to: 'RUNNING', fenceExecutionId: 'other' })).toBe(false);
    // R8: the deadline starts at the confirm: GREATEST(message deadline, NOW + ack timeout).
    const message = new Date(Date.now() - 60_000);
    expect(await startAckDeadlines(db.pool, [{ instanceId: id, executionId: 'e1' }], message, 5_000)).toBe(1);
    const [rows] = await db.pool.query<RowDataPacket[]>('SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), ack_deadline) / 1000 AS ms FROM task_instance WHERE id = ?', [id]);
    expect(Number(rows[0]?.ms)).toBeGreaterThan(4_000);
    expect(Number(rows[0]?.ms)).toBeLessThanOrEqual(5_000);
    expect(await transitionInstance(db.pool, { id, from: 'DISPATCHED', to: 'SUCCESS', fenceExecutionId: 'e1', set: { ended_at: NOW } })).toBe(true);
  });

  it('reads and sets the global pause', async () => {
    expect(await isDispatchPaused(db.pool)).toBe(false);
    await setDispatchPaused(db.pool, true, 'admin');
    expect(await isDispatchPaused(db.pool)).toBe(true);
    await setDispatchPaused(db.pool, false);
    expect(await isDispatchPaused(db.pool)).toBe(false);
  });

  it('lists undelivered alerts and marks each delivered once', async () => {
    await raiseAlert(db.pool, { kind: 'BACKLOG', severity: 'warning', subject: 'worker:w', message: 'deep' });
    const [alert] = await listUndeliveredAlerts(db.pool, 10);
    expect(alert).toMatchObject({ kind: 'BACKLOG', severity: 'warning', message: 'deep' });
    expect(await markAlertDelivered(db.pool, alert!.id)).toBe(true);
    expect(await markAlertDelivered(db.pool, alert!.id)).toBe(false);
    expect(await listUndeliveredAlerts(db.pool, 10)).toEqual([]);
  });
});
