import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2';
import { ManualClock } from '@ax/testing';
import { createHarness, drive, iso, type Harness } from '../test/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('DAG (R19) in-process', () => {
  it('R19: A→C, B→C ALL_SUCCESS promotes after both succeed; a failed parent cancels with UPSTREAM_FAILED; ALL_DONE runs anyway; a none-child is created; a timeout gives UPSTREAM_MISSING + alert', async () => {
    // Dependency timeouts are decided on the database clock (R6/R7): day 1 is two days before
    // the database's today, c and d wait up to three days, oc one hour.
    const [today] = await h.db.pool.query<RowDataPacket[]>('SELECT UNIX_TIMESTAMP(CURDATE()) * 1000 AS ms');
    const t0 = Number(today[0]?.['ms']) - 2 * DAY;
    const day1 = iso(t0).slice(0, 10);
    const day2 = iso(t0 + DAY).slice(0, 10);
    const clock = new ManualClock(t0);
    const daily = (expr: string) => ({ type: 'cron' as const, expr });
    await h.task({ name: 'pa', schedule: daily('0 1 * * *'), block: 'parallel' }, t0);
    await h.task({ name: 'pb', schedule: daily('0 1 * * *'), block: 'parallel' }, t0);
    await h.task({ name: 'c', schedule: daily('0 2 * * *'), block: 'parallel', dependencyTimeoutSeconds: 3 * 86_400 }, t0);
    await h.task({ name: 'd', schedule: daily('0 2 * * *'), block: 'parallel', dependencyTimeoutSeconds: 3 * 86_400 }, t0);
    await h.task({ name: 'n', schedule: { type: 'none' } }, t0);
    await h.task({ name: 'op', schedule: daily('0 1 * * *'), enabled: false }, t0);
    await h.task({ name: 'oc', schedule: daily('0 2 * * *'), block: 'parallel', dependencyTimeoutSeconds: 3_600 }, t0);
    await h.db.pool.query(
      `INSERT INTO task_edge (parent_task, child_task, rule) VALUES
        ('pa','c','ALL_SUCCESS'), ('pb','c','ALL_SUCCESS'), ('pa','d','ALL_DONE'), ('pa','n','ALL_SUCCESS'), ('pb','n','ALL_SUCCESS'), ('op','oc','ALL_SUCCESS')`,
    );
    const engine = h.engine(clock, { misfireThresholdMs: HOUR, horizonMs: HOUR, fireLockTtlMs: 60_000 });
    await drive(engine, clock, t0 + 3 * HOUR, HOUR / 2);
    const states = async (name: string) => (await h.instances(name)).map((r) => `${iso(r.biz_date).slice(0, 10)}:${r.state}${r.reason ? `:${r.reason}` : ''}`);
    expect(await states('c')).toEqual([`${day1}:WAITING`]);
    expect(await states('pa')).toEqual([`${day1}:PENDING`]);

    let r = await engine.evaluateDag();
    expect(r).toMatchObject({ promoted: 0, canceled: 0, created: 0, timedOut: 1 });
    expect(await states('c')).toEqual([`${day1}:WAITING`]);
    expect(await states('oc')).toEqual([`${day1}:CANCELED:UPSTREAM_MISSING`]);
    const [alerts] = await h.db.pool.query<RowDataPacket[]>("SELECT kind, task_name FROM alert_log WHERE kind = 'UPSTREAM_MISSING'");
    expect(alerts).toEqual([expect.objectContaining({ kind: 'UPSTREAM_MISSING', task_name: 'oc' })]);

    await h.db.pool.query("UPDATE task_instance SET state = 'SUCCESS' WHERE task_name = 'pa'");
    r = await engine.evaluateDag({ taskNames: ['pa'], bizDates: [day1] });
    expect(r.promoted).toBe(1); // d (ALL_DONE on pa); c still waits for pb
    expect(await states('c')).toEqual([`${day1}:WAITING`]);
    await h.db.pool.query("UPDATE task_instance SET state = 'SUCCESS' WHERE task_name = 'pb'");
    r = await engine.evaluateDag({ taskNames: ['pb'], bizDates: [day1] });
    expect(r).toMatchObject({ promoted: 1, created: 1 });
    expect(await states('c')).toEqual([`${day1}:PENDING`]);
    expect(await states('d')).toEqual([`${day1}:PENDING`]);
    const nRows = await h.instances('n');
    expect(nRows.map((x) => [iso(x.expected_time), x.trigger, x.state])).toEqual([[iso(t0), 'dependency', 'PENDING']]);
    const [ev] = await h.db.pool.query<RowDataPacket[]>(
      "SELECT e.type FROM event_log e JOIN task_instance i ON i.id = e.instance_id WHERE i.task_name = 'c' ORDER BY e.id",
    );
    expect(ev.map((e) => String(e['type']))).toEqual(['CREATED', 'DEPS_MET']);
    // The promotion stamps promoted_at (migration 0006) beside its event: the dashboard counts
    // the instance as due from then, through idx_instance_due_time.
    const [promoted] = await h.db.pool.query<RowDataPacket[]>(
      `SELECT i.promoted_at, i.due_time, e.at FROM task_instance i JOIN event_log e ON e.instance_id = i.id AND e.type = 'DEPS_MET'
        WHERE i.task_name = 'c'`,
    );
    expect(promoted).toHaveLength(1);
    const p = promoted[0] as RowDataPacket;
    expect(p['promoted_at']).toBeInstanceOf(Date);
    expect(Math.abs((p['promoted_at'] as Date).getTime() - (p['at'] as Date).getTime())).toBeLessThan(1_000);
    expect(p['due_time']).toEqual(p['promoted_at']);

    // Day 2: pa fails.
    await drive(engine, clock, t0 + 27 * HOUR, HOUR / 2);
    await h.db.pool.query("UPDATE task_instance SET state = 'FAILED' WHERE task_name = 'pa' AND biz_date = ?", [day2]);
    await h.db.pool.query("UPDATE task_instance SET state = 'SUCCESS' WHERE task_name = 'pb' AND biz_date = ?", [day2]);
    r = await engine.evaluateDag();
    expect(r).toMatchObject({ canceled: 1, promoted: 1 });
    expect(await states('c')).toEqual([`${day1}:PENDING`, `${day2}:CANCELED:UPSTREAM_FAILED`]);
    expect(await states('d')).toEqual([`${day1}:PENDING`, `${day2}:PENDING`]);
    expect((await h.instances('n')).length).toBe(1);
  });
});
