/**
 * #18 quotas, the store half: the per-team lock that makes "count, then claim" safe across
 * brokers. A second claim transaction for a limited team waits on the team row until the first
 * commits, and then counts the run the first one dispatched. Real MySQL.
 */
import type { PoolConnection } from 'mysql2/promise';
import type { ResultSetHeader } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { claimDuePending } from './dispatch.js';
import { insertTask } from './tasks.js';
import { activeRunsByTeam, lockTeamLimits } from './team-limits.js';
import { insertTeam } from './teams.js';

let db: TestDatabase;
const ids: Record<string, string[]> = {};

async function instances(taskId: string, taskName: string, n: number): Promise<string[]> {
  const rows = Array.from({ length: n }, (_, i) => [taskId, taskName, new Date(Date.UTC(2026, 0, 1) + i * 1000)]);
  const [r] = await db.pool.query<ResultSetHeader>(
    `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority)
     VALUES ${rows.map(() => "(?, ?, ?, '2026-01-01', 'manual', 'PENDING', 1, 1, NOW(3), '{}', 5)").join(', ')}`,
    rows.flat(),
  );
  return Array.from({ length: n }, (_, i) => String(r.insertId + i));
}

async function begin(): Promise<PoolConnection> {
  const conn = await db.pool.getConnection();
  await conn.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
  await conn.query('BEGIN');
  return conn;
}

beforeAll(async () => {
  db = await createTestDatabase();
  await insertTeam(db.pool, { name: 'a', description: '', maxRunning: 1 });
  await insertTeam(db.pool, { name: 'b', description: '', maxRunning: null });
  const ta = await insertTask(db.pool, parseTaskDefinitionOrThrow({ name: 'lim_a', team: 'a', schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] } }));
  const tb = await insertTask(db.pool, parseTaskDefinitionOrThrow({ name: 'free_b', team: 'b', schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] } }));
  ids.a = await instances(ta.id, 'lim_a', 3);
  ids.b = await instances(tb.id, 'free_b', 2);
});

afterAll(async () => {
  await db?.drop();
});

describe('team limits at claim', () => {
  it('#18 quotas: a second claim for a limited team waits for the first commit, then counts its run', async () => {
    const first = await begin();
    const second = await begin();
    try {
      expect(await lockTeamLimits(first, ['b', 'a'])).toEqual(new Map([['a', 1]])); // b has no limit
      expect(await activeRunsByTeam(first, ['a'])).toEqual(new Map());
      await first.query(`UPDATE task_instance SET state = 'DISPATCHED' WHERE id = ?`, [ids.a![0]]);
      let locked = false;
      const waiting = lockTeamLimits(second, ['a']).then((limits) => {
        locked = true;
        return limits;
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(locked).toBe(false); // the team row is the first claim's until it commits
      await first.query('COMMIT');
      expect(await waiting).toEqual(new Map([['a', 1]]));
      expect(await activeRunsByTeam(second, ['a', 'b'])).toEqual(new Map([['a', 1]]));
      await second.query('COMMIT');
    } finally {
      await first.query('ROLLBACK').catch(() => undefined);
      await second.query('ROLLBACK').catch(() => undefined);
      first.release();
      second.release();
    }
  });

  it('#18 quotas: a claim leaves out the instances of teams at their limit, and only those', async () => {
    const conn = await begin();
    try {
      const claimed = await claimDuePending(conn, 100, { skipTeams: ['a'] });
      expect(claimed.map((c) => c.taskName).sort()).toEqual(['free_b', 'free_b']);
      const all = await claimDuePending(conn, 100, { skipTeams: [] });
      expect(all.filter((c) => c.taskName === 'lim_a')).toHaveLength(2); // the two still PENDING
    } finally {
      await conn.query('ROLLBACK');
      conn.release();
    }
  });
});
