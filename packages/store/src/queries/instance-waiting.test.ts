/**
 * Migration 0013 and the backlog scan's queries (#45): the reads stay on the claim's index and
 * are bounded, the write changes only rows still as the scan read them (one event each), a
 * state change rewrites no index of the new columns, and on a schema before 0013 (R22) every
 * function answers as if nothing were stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { explaining, NUMBERS, type PlanRow } from './explain.test-helper.js';
import { backlogGroups, clearStaleWaiting, readBacklog, waitingOfInstances, writeWaitingChanges } from './instance-waiting.js';

let db: TestDatabase;
const held: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(
    `INSERT INTO task (name, team, schedule, schedule_type, exec, params, tags, retry, misfire) VALUES ('w-a', 'default', '{"type":"none"}', 'none', '{}', '{}', '[]', '{}', '{}')`,
  );
  // 20,000 final rows (what a full scan would read) and 30 due PENDING rows of one team
  await db.pool.query(
    `INSERT INTO task_instance (task_id, task_name, team, expected_time, biz_date, \`trigger\`, state, due_at, params, priority, ended_at)
     SELECT 1, 'w-a', 'default', NOW(3) - INTERVAL n SECOND, CURDATE(), 'schedule', 'SUCCESS', NOW(3) - INTERVAL n SECOND, '{}', 5, NOW(3)
       FROM ${NUMBERS} x WHERE n < 20000`,
  );
  for (let i = 0; i < 30; i++) {
    const [r] = await db.pool.query<ResultSetHeader>(
      `INSERT INTO task_instance (task_id, task_name, team, expected_time, biz_date, \`trigger\`, state, due_at, params, priority)
       VALUES (1, 'w-a', 'default', NOW(3) + INTERVAL ? SECOND, CURDATE(), 'schedule', 'PENDING', NOW(3) - INTERVAL ? SECOND, '{}', ?)`,
      [i + 1, 60 + i, i % 3],
    );
    held.push(String(r.insertId));
  }
  await db.pool.query('ANALYZE TABLE task_instance');
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

async function plansOf(run: (q: ReturnType<typeof explaining>) => Promise<unknown>): Promise<PlanRow[][]> {
  const plans: PlanRow[][] = [];
  await run(explaining(db.pool, plans));
  return plans;
}

async function eventsOf(id: string): Promise<string[]> {
  const [rows] = await db.pool.query<RowDataPacket[]>(`SELECT type FROM event_log WHERE instance_id = ? ORDER BY id`, [id]);
  return rows.map((r) => String(r.type));
}

describe('0013: the backlog scan reads along the claim index', () => {
  it('groups are a scan of idx_instance_team_claim; a group read is one bounded range of it in claim order, no sort', async () => {
    const [groupPlan] = await plansOf((q) => backlogGroups(q));
    expect(groupPlan?.[0]).toMatchObject({ key: 'idx_instance_team_claim' });
    let rows: Awaited<ReturnType<typeof readBacklog>> = [];
    const [readPlan] = await plansOf(async (q) => {
      rows = await readBacklog(q, { state: 'PENDING', team: 'default' }, 10);
    });
    const instanceRow = readPlan?.find((p) => p.table === 'i');
    expect(instanceRow).toMatchObject({ key: 'idx_instance_team_claim' });
    expect(instanceRow?.extra).not.toContain('filesort');
    expect(rows).toHaveLength(10);
    expect(rows.map((r) => r.priority)).toEqual([2, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
    expect(rows[0]).toMatchObject({ team: 'default', state: 'PENDING', waitingReason: null });
    expect(rows[0]?.dueForMs).toBeGreaterThanOrEqual(60_000);
  });

  it('a state change rewrites no index of the new columns; idx_instance_waiting holds waiting_reason alone', async () => {
    const [rows] = await db.pool.query<RowDataPacket[]>('SHOW INDEX FROM task_instance');
    const columns = new Map<string, string[]>();
    for (const r of rows) columns.set(String(r['Key_name']), [...(columns.get(String(r['Key_name'])) ?? []), String(r['Column_name'])]);
    expect(columns.get('idx_instance_waiting')).toEqual(['waiting_reason']);
    expect([...columns.values()].some((cols) => cols.includes('state') && cols.some((c) => c.startsWith('waiting_')))).toBe(false);
  });
});

describe('0013: writeWaitingChanges', () => {
  it('writes only rows still as the scan read them, one WAITING event per new reason, none for a cleared one', async () => {
    const [a, b, c] = held as [string, string, string];
    await db.pool.query(`UPDATE task_instance SET state = 'DISPATCHED' WHERE id = ?`, [c]);
    const conn = await db.pool.getConnection();
    try {
      await conn.beginTransaction();
      const written = await writeWaitingChanges(conn, [
        { id: a, state: 'PENDING', from: null, to: 'NO_WORKER', message: 'no live worker serves team default' },
        { id: b, state: 'PENDING', from: 'TEAM_LIMIT', to: 'NO_WORKER', message: 'stale read' }, // it has no reason: someone else's view
        { id: c, state: 'PENDING', from: null, to: 'NO_WORKER', message: 'dispatched meanwhile' },
      ]);
      await conn.commit();
      expect(written).toEqual([a]);
    } finally {
      conn.release();
    }
    expect(await eventsOf(a)).toEqual(['WAITING']);
    expect(await eventsOf(b)).toEqual([]);
    expect(await eventsOf(c)).toEqual([]);
    const waits = await waitingOfInstances(db.pool, [a, b, c]);
    expect([...waits.keys()]).toEqual([a]);
    const [[due]] = (await db.pool.query<RowDataPacket[]>(`SELECT due_at FROM task_instance WHERE id = ?`, [a])) as unknown as [[{ due_at: Date }]];
    expect(waits.get(a)).toEqual({ reason: 'NO_WORKER', since: due.due_at, message: 'no live worker serves team default' });

    // the reason ends: cleared without an event
    expect(await writeWaitingChanges(db.pool, [{ id: a, state: 'PENDING', from: 'NO_WORKER', to: null, message: null }])).toEqual([a]);
    expect(await eventsOf(a)).toEqual(['WAITING']);
    expect((await waitingOfInstances(db.pool, [a])).size).toBe(0);
  });

  it('clearStaleWaiting clears reasons of rows that moved on, through idx_instance_waiting', async () => {
    const d = held[3] as string;
    await writeWaitingChanges(db.pool, [{ id: d, state: 'PENDING', from: null, to: 'SERIAL_BUSY', message: 'x' }]);
    await db.pool.query(`UPDATE task_instance SET state = 'RUNNING' WHERE id = ?`, [d]);
    let cleared = 0;
    const plans = await plansOf(async (q) => {
      cleared = await clearStaleWaiting(q, 100);
    });
    expect(cleared).toBe(1);
    expect(plans[0]?.[0]).toMatchObject({ key: 'idx_instance_waiting' });
    const [rows] = await db.pool.query<RowDataPacket[]>(`SELECT waiting_reason, waiting_since, waiting_message FROM task_instance WHERE id = ?`, [d]);
    expect(rows[0]).toEqual({ waiting_reason: null, waiting_since: null, waiting_message: null });
  });
});

describe('R22: on a schema before 0013', () => {
  it('reads find no reason, the write and the clear do nothing, and nothing throws', async () => {
    await db.pool.query(`ALTER TABLE task_instance DROP INDEX idx_instance_waiting, DROP COLUMN waiting_reason, DROP COLUMN waiting_since, DROP COLUMN waiting_message`);
    const rows = await readBacklog(db.pool, { state: 'PENDING', team: 'default' }, 5);
    expect(rows).toHaveLength(5);
    expect(rows.every((r) => r.waitingReason === null)).toBe(true);
    const id = held[5] as string;
    expect(await writeWaitingChanges(db.pool, [{ id, state: 'PENDING', from: null, to: 'NO_WORKER', message: 'x' }])).toEqual([]);
    expect(await eventsOf(id)).toEqual([]);
    expect((await waitingOfInstances(db.pool, [id])).size).toBe(0);
    expect(await clearStaleWaiting(db.pool, 10)).toBe(0);
  });
});
