/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/**
 * The dashboard's rolled-up past days (migration 0008, stats-rollup.ts, stats-rollup-loop.ts;
 * #24): `GET /stats/hourly?day=` answers a rolled-up day with exactly the figures the live query
 * gives, for every team set; a day still open or too recent is not rolled up; and each change
 * that alters a past day's live figures (a rerun, a task's move to another team, its deletion)
 * forgets the day, so the answer follows the change at once. Two passes at once: one works, the
 * other finds the lock taken.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addToken, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';
import { rollUpPastDays } from './stats-rollup-loop.js';
import { silentLogger } from '@ax/kit';

let t: TestApp;
let viewerA: string;
const DAY = '2026-11-10';
const OPEN_DAY = '2026-11-12';
/** Two days after DAY's end, as the rollup's clock. */
const NOW_MS = Date.parse('2026-11-14T06:00:00Z');
const rollupOpts = () => ({ pool: t.pool, logger: silentLogger(), now: () => NOW_MS });
const hourly = async (day: string, token?: string): Promise<any[]> => {
  const res = await t.call('GET', `/api/v1/stats/hourly?day=${day}`, { token: token ?? t.tokens.viewer });
  expect(res.status).toBe(200);
  return res.body.hours;
};
const keptDays = async (): Promise<string[]> => {
  const [rows] = await t.pool.query<any[]>("SELECT DATE_FORMAT(day, '%Y-%m-%d') AS d FROM instance_stats_day ORDER BY day");
  return rows.map((r) => String(r.d));
};
const totalRuns = (hours: any[]): number => hours.reduce((sum, h) => sum + Number(h.runs), 0);

/** A final (or running) instance due at `at`, started `delayMs` later, with its execution. */
async function instance(task: string, at: string, state: string, delayMs: number, trigger = 'schedule'): Promise<string> {
  const [rows] = await t.pool.query<any[]>('SELECT id FROM task WHERE name = ?', [task]);
  const due = new Date(at);
  const started = new Date(due.getTime() + delayMs);
  const executionId = randomUUID();
  const final = ['SUCCESS', 'FAILED', 'CANCELED'].includes(state);
  const [res] = await t.pool.query<any>(
    `INSERT INTO task_instance (task_id, task_name, expected_time, run_no, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params,
                                priority, worker_id, current_execution_id, created_at, started_at, ended_at)
     VALUES (?, ?, ?, 1, ?, ?, ?, 1, 3, ?, '{}', 5, 'w1', ?, ?, ?, ?)`,
    [rows[0].id, task, due, at.slice(0, 10), trigger, state, due, executionId, new Date(due.getTime() + 40), started, final ? new Date(started.getTime() + 500) : null],
  );
  await t.pool.query(
    `INSERT INTO task_execution (execution_id, instance_id, attempt, run_no, worker_id, state, dispatched_at, acked_at, started_at, ended_at)
     VALUES (?, ?, 1, 1, 'w1', ?, ?, ?, ?, ?)`,
    [executionId, res.insertId, final ? state : 'RUNNING', started, started, started, final ? new Date(started.getTime() + 500) : null],
  );
  return String(res.insertId);
}

let rerunTarget: string;

beforeAll(async () => {
  t = await startTestApp();
  for (const name of ['team-a', 'team-b']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  viewerA = await addToken(t.pool, 'viewer-a', 'viewer', ['team-a']);
  for (const [name, team] of [['ra_one', 'team-a'], ['ra_two', 'team-a'], ['rb_one', 'team-b'], ['r_gone', 'team-b']] as const) {
    expect((await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef(name, { team }) })).status).toBe(201);
  }
  // DAY: every hour a few final instances across both teams and triggers; OPEN_DAY: one still running.
  for (let h = 0; h < 24; h += 3) {
    const hh = String(h).padStart(2, '0');
    await instance('ra_one', `${DAY}T${hh}:00:00.000Z`, 'SUCCESS', 1_200 + h);
    await instance('ra_two', `${DAY}T${hh}:10:00.000Z`, h % 2 === 0 ? 'FAILED' : 'SUCCESS', 300);
    await instance('rb_one', `${DAY}T${hh}:20:00.000Z`, 'SUCCESS', 7_000, 'manual');
    await instance('r_gone', `${DAY}T${hh}:30:00.000Z`, 'CANCELED', 10);
  }
  rerunTarget = await instance('ra_one', `${DAY}T23:59:00.000Z`, 'FAILED', 50);
  await instance('ra_one', `${OPEN_DAY}T08:00:00.000Z`, 'SUCCESS', 20);
  await instance('ra_two', `${OPEN_DAY}T09:00:00.000Z`, 'RUNNING', 20);
});

afterAll(async () => {
  await t.close();
});

describe('rolled-up past days (#24)', () => {
  it('a pass rolls up each final past day once, answers it as the live query did for every team set, and leaves open and recent days live', async () => {
    const live = { all: await hourly(DAY), a: await hourly(DAY, viewerA), open: await hourly(OPEN_DAY) };
    expect(totalRuns(live.all)).toBe(33);
    expect(totalRuns(live.a)).toBe(17);

    const pass = await rollUpPastDays(rollupOpts(), new Map());
    expect(pass).toMatchObject({ locked: true, open: 1, instances: 33 });
    expect(await keptDays()).toContain(DAY);
    expect(await keptDays()).not.toContain(OPEN_DAY);
    expect(await keptDays()).not.toContain('2026-11-13'); // ended less than a day before NOW_MS

    expect(await hourly(DAY)).toEqual(live.all);
    expect(await hourly(DAY, viewerA)).toEqual(live.a);
    expect(await hourly(OPEN_DAY)).toEqual(live.open);
    // The kept rows, not the instances, answer: a change behind the rollup's back shows that.
    await t.pool.query("UPDATE instance_stats_hour SET runs = runs + 1000 WHERE day = ? AND hour = 0 AND team = 'team-a'", [DAY]);
    expect((await hourly(DAY))[0].runs).toBe(live.all[0].runs + 1000);
    expect((await hourly(DAY, viewerA))[0].runs).toBe(live.a[0].runs + 1000);
    await t.pool.query("UPDATE instance_stats_hour SET runs = runs - 1000 WHERE day = ? AND hour = 0 AND team = 'team-a'", [DAY]);

    const again = await rollUpPastDays(rollupOpts(), new Map([[Date.parse(`${OPEN_DAY}T00:00:00Z`), NOW_MS + 60_000]]));
    expect(again).toMatchObject({ locked: true, rolledUp: 0, open: 0 }); // the open day waits for its retry time
  });

  it('answers yesterday (and today) live without reading a rollup: none can exist yet, so a row planted by hand is never read', async () => {
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const live = await hourly(yesterday);
    await t.pool.query('INSERT INTO instance_stats_day (day, instances) VALUES (?, 1000)', [yesterday]);
    await t.pool.query(
      "INSERT INTO instance_stats_hour (day, hour, team, runs, succeeded, failed, fire_lag_us, fire_lag_n, delay_us, delay_n) VALUES (?, 0, 'team-a', 1000, 1000, 0, 0, 0, 0, 0)",
      [yesterday],
    );
    try {
      // Another team set than the call above: not the 5 s figures cache, a fresh read.
      expect(await hourly(yesterday, viewerA)).toEqual(live); // nothing ran yesterday in this database
    } finally {
      await t.pool.query('DELETE FROM instance_stats_day WHERE day = ?', [yesterday]);
      await t.pool.query('DELETE FROM instance_stats_hour WHERE day = ?', [yesterday]);
    }
  });

  it('a second pass while one holds the lock does nothing', async () => {
    const conn = await t.pool.getConnection();
    try {
      await conn.query('SELECT GET_LOCK(?, 0)', [`ax.stats-rollup.${t.pool.databaseName}`.slice(0, 64)]);
      expect(await rollUpPastDays(rollupOpts(), new Map())).toEqual({ locked: false, rolledUp: 0, open: 0, instances: 0 });
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [`ax.stats-rollup.${t.pool.databaseName}`.slice(0, 64)]);
      conn.release();
    }
  });

  it('a rerun forgets the day the instance leaves: the answer drops it at once, and the next pass rolls the day up again', async () => {
    const before = await hourly(DAY);
    const res = await t.call('POST', '/api/v1/reruns', { token: t.tokens.operator, body: { mode: 'instance', instanceId: rerunTarget, reason: 'rollup test' } });
    expect(res.status).toBe(202);
    expect(await keptDays()).not.toContain(DAY);
    const after = await hourly(DAY);
    expect(after[23]).toMatchObject({ runs: before[23].runs - 1, failed: before[23].failed - 1 });
    await rollUpPastDays(rollupOpts(), new Map());
    expect(await keptDays()).toContain(DAY);
    expect(await hourly(DAY)).toEqual(after);
  });

  it("moving a task to another team, or deleting one that ran, forgets every day from its first run; a change that keeps the team does not", async () => {
    // A day before any run of these tasks (rolled up with nothing in it) is not theirs to forget.
    await t.pool.query("INSERT INTO instance_stats_day (day, instances) VALUES ('2026-11-01', 0)");
    const task = await t.call('GET', '/api/v1/tasks/rb_one');
    const same = await t.call('PUT', '/api/v1/tasks/rb_one', { token: t.tokens.operator, body: { ...taskDef('rb_one', { team: 'team-b', priority: 6 }), version: task.body.version } });
    expect(same.status).toBe(200);
    expect(await keptDays()).toContain(DAY);

    const beforeA = await hourly(DAY, viewerA);
    const moved = await t.call('PUT', '/api/v1/tasks/rb_one', { token: t.tokens.operator, body: { ...taskDef('rb_one', { team: 'team-a' }), version: same.body.version } });
    expect(moved.status).toBe(200);
    expect(await keptDays()).toEqual(['2026-11-01']);
    const afterA = await hourly(DAY, viewerA);
    expect(totalRuns(afterA)).toBe(totalRuns(beforeA) + 8); // rb_one's 8 runs now count for team-a
    await rollUpPastDays(rollupOpts(), new Map());
    expect(await hourly(DAY, viewerA)).toEqual(afterA);

    const allBefore = await hourly(DAY);
    expect((await t.call('DELETE', '/api/v1/tasks/r_gone')).status).toBe(204);
    expect(await keptDays()).toEqual(['2026-11-01']);
    await rollUpPastDays(rollupOpts(), new Map());
    // The deleted task's runs still count for "*" tokens (instances stay, R3), as live.
    expect(await hourly(DAY)).toEqual(allBefore);
  });
});
