/**
 * The rollup of a past day's hourly figures (migration 0008, #24) against the live query, and
 * the one ordering that keeps it right: a change to the day's instances made and forgotten in a
 * transaction that commits while the rollup is computing is seen by it, never overwritten by a
 * rollup of the older rows (the rollup locks the day before it takes its snapshot).
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { hourlyStats } from './stats.js';
import { daysToRollUp, dueDaysOf, forgetRolledUpDays, rolledUpHourlyStats, rollUpDay } from './stats-rollup.js';

let db: TestDatabase;
const DAY = new Date('2026-10-05T00:00:00.000Z');
const NOW_MS = Date.parse('2026-10-08T00:00:00.000Z');
let movedId: string;

const kept = async (): Promise<string[]> => {
  const [rows] = await db.pool.query<RowDataPacket[]>("SELECT DATE_FORMAT(day, '%Y-%m-%d') AS d FROM instance_stats_day ORDER BY day");
  return rows.map((r) => String(r['d']));
};

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(
    `INSERT INTO task (name, schedule, schedule_type, exec, params, tags, retry, misfire, dependency_timeout_s)
     VALUES ('ru', '{"type":"none"}', 'none', '{}', '{}', '[]', '{}', '{}', 3600)`,
  );
  for (let m = 0; m < 24 * 60; m += 37) {
    const due = new Date(DAY.getTime() + m * 60_000);
    const [res] = await db.pool.query<ResultSetHeader>(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params, created_at, started_at, ended_at)
       VALUES (1, 'ru', ?, '2026-10-05', 'schedule', ?, ?, '{}', ?, ?, ?)`,
      [due, m % 3 === 0 ? 'FAILED' : 'SUCCESS', due, new Date(due.getTime() + 25), new Date(due.getTime() + 900), new Date(due.getTime() + 2_000)],
    );
    movedId = String(res.insertId);
  }
});

afterAll(async () => {
  await db.drop();
});

describe('stats rollup (#24)', () => {
  it('lists the past days not rolled up yet, oldest first, and none that ended less than a day ago', async () => {
    expect((await daysToRollUp(db.pool, NOW_MS)).map((d) => d.toISOString())).toEqual(['2026-10-05T00:00:00.000Z', '2026-10-06T00:00:00.000Z']);
    expect(await daysToRollUp(db.pool, Date.parse('2026-10-06T23:59:00Z'))).toEqual([]);
    const conn = await db.pool.getConnection();
    try {
      expect(await rollUpDay(conn, new Date('2026-10-06T00:00:00Z'), Date.parse('2026-10-07T12:00:00Z'))).toMatchObject({ rolledUp: false, reason: 'too-recent' });
    } finally {
      conn.release();
    }
  });

  it('a forget committed while the rollup computes wins: the rollup waits for it and reads the changed rows', async () => {
    const writer = await db.pool.getConnection();
    const roller = await db.pool.getConnection();
    try {
      const [day] = await dueDaysOf(writer, [movedId]);
      expect(day).toBe('2026-10-05');
      // A rerun's transaction: the instance is due again now (it leaves DAY), then DAY is forgotten.
      await writer.beginTransaction();
      await writer.query("UPDATE task_instance SET state = 'PENDING', due_at = NOW(3), ended_at = NULL WHERE id = ?", [movedId]);
      await forgetRolledUpDays(writer, [day ?? '']);
      let settled = false;
      const rolling = rollUpDay(roller, DAY, NOW_MS).finally(() => {
        settled = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(settled).toBe(false); // waiting for the writer's lock on the day
      await writer.commit();
      expect(await rolling).toMatchObject({ rolledUp: true });
      expect(await kept()).toEqual(['2026-10-05']);
      const live = await hourlyStats(db.pool, DAY);
      expect(await rolledUpHourlyStats(db.pool, DAY)).toEqual(live);
      expect(live.reduce((sum, h) => sum + h.runs, 0)).toBe(Math.ceil((24 * 60) / 37) - 1);
    } finally {
      writer.release();
      roller.release();
    }
  });

  it('a day is not rolled up while one of its instances is not final, and a forgotten day is answered live', async () => {
    await db.pool.query("UPDATE task_instance SET state = 'RUNNING', due_at = ?, ended_at = NULL WHERE id = ?", [new Date(DAY.getTime() + 3_600_000), movedId]);
    await forgetRolledUpDays(db.pool, ['2026-10-05']);
    expect(await rolledUpHourlyStats(db.pool, DAY)).toBeNull();
    const conn = await db.pool.getConnection();
    try {
      expect(await rollUpDay(conn, DAY, NOW_MS)).toMatchObject({ rolledUp: false, reason: 'open' });
      expect(await kept()).toEqual([]);
      await db.pool.query("UPDATE task_instance SET state = 'SUCCESS', ended_at = due_at WHERE id = ?", [movedId]);
      expect(await rollUpDay(conn, DAY, NOW_MS)).toMatchObject({ rolledUp: true, instances: Math.ceil((24 * 60) / 37) });
      expect(await rolledUpHourlyStats(db.pool, DAY)).toEqual(await hourlyStats(db.pool, DAY));
      expect(await rolledUpHourlyStats(db.pool, DAY, [])).toBeNull(); // no team: the live FALSE filter
      expect((await rolledUpHourlyStats(db.pool, DAY, ['other']))?.every((h) => h.runs === 0)).toBe(true);
    } finally {
      conn.release();
    }
  });
});
