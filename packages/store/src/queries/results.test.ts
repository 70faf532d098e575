// lockExecutions: the instances of the executions replied to are locked, whatever the replies
// claim their instance ids are (real MariaDB).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultSetHeader } from 'mysql2';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { insertExecutions } from './dispatch.js';
import { lockExecutions } from './results.js';

let db: TestDatabase;
const instances: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  for (const name of ['a', 'b']) {
    const [r] = await db.pool.query<ResultSetHeader>(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params, current_execution_id)
       VALUES (1, ?, NOW(3), CURDATE(), 'manual', 'DISPATCHED', NOW(3), '{}', ?)`,
      [name, `exec-${name}`],
    );
    instances.push(String(r.insertId));
  }
  await insertExecutions(db.pool, [
    { executionId: 'exec-a', instanceId: instances[0] as string, attempt: 1, runNo: 1, workerId: 'w1' },
    { executionId: 'exec-b', instanceId: instances[1] as string, attempt: 1, runNo: 1, workerId: 'w1' },
  ]);
});

afterAll(async () => {
  await db?.drop();
});

/** Whether another session finds the instance row locked. */
async function lockedElsewhere(instanceId: string): Promise<boolean> {
  const other = await db.pool.getConnection();
  try {
    await other.query('SELECT id FROM task_instance WHERE id = ? FOR UPDATE NOWAIT', [instanceId]);
    return false;
  } catch {
    return true;
  } finally {
    other.release();
  }
}

describe('lockExecutions', () => {
  it.each([
    ['right hints', (ids: string[]) => ids],
    ['hints naming the wrong instance', (ids: string[]) => [ids[1] as string, ids[1] as string]],
    ['hints that are not instance ids', () => ['x', 'y']],
    ['no hints', () => undefined],
  ])('R16/R17 with %s, reads both executions and holds both instance locks', async (_label, hints) => {
    expect(await lockedElsewhere(instances[0] as string)).toBe(false); // the probe itself works
    const conn = await db.pool.getConnection();
    try {
      await conn.beginTransaction();
      const rows = await lockExecutions(conn, ['exec-a', 'exec-b', 'unknown'], hints(instances));
      expect([...rows.keys()].sort()).toEqual(['exec-a', 'exec-b']);
      expect(rows.get('exec-a')?.instanceId).toBe(instances[0]);
      expect(await lockedElsewhere(instances[0] as string)).toBe(true);
      expect(await lockedElsewhere(instances[1] as string)).toBe(true);
      await conn.rollback();
    } finally {
      conn.release();
    }
  });
});
