import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2';
import { disableTask, getTask, replaceTask } from '@ax/store';
import { ManualClock } from '@ax/testing';
import { createHarness, drive, iso, type Harness } from '../test/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const MIN = 60_000;

describe('scheduler engine (in-process, ManualClock)', () => {
  it('R1: cron, fixed_rate and once tasks produce their slots with the instance fields of §3', async () => {
    const t0 = Date.UTC(2026, 5, 1, 10, 0, 0);
    const clock = new ManualClock(t0);
    await h.task({ name: 'k-cron', schedule: { type: 'cron', expr: '*/20 * * * * *', timezone: 'Asia/Shanghai' }, block: 'parallel', retry: { max: 2 }, priority: 7, params: { p: 1 } }, t0);
    await h.task({ name: 'k-rate', schedule: { type: 'fixed_rate', everySeconds: 25 }, block: 'parallel' }, t0 + 3_000);
    await h.task({ name: 'k-once', schedule: { type: 'once', at: iso(t0 + 50_000) } }, t0);
    const engine = h.engine(clock);
    await drive(engine, clock, t0 + 60_000, 1_000);
    await engine.refill(); // the watermark moves over the last fire at the next refill
    expect((await h.instances('k-cron')).map((r) => iso(r.expected_time))).toEqual([iso(t0), iso(t0 + 20_000), iso(t0 + 40_000), iso(t0 + 60_000)]);
    expect((await h.instances('k-rate')).map((r) => iso(r.expected_time))).toEqual([iso(t0 + 3_000), iso(t0 + 28_000), iso(t0 + 53_000)]);
    expect((await h.instances('k-once')).map((r) => iso(r.expected_time))).toEqual([iso(t0 + 50_000)]);
    const [rows] = await h.db.pool.query<RowDataPacket[]>(
      "SELECT state, attempt, max_attempts, run_no, `trigger`, priority, params, due_at, expected_time, biz_date FROM task_instance WHERE task_name = 'k-cron' ORDER BY id LIMIT 1",
    );
    expect(rows[0]).toMatchObject({ state: 'PENDING', attempt: 1, max_attempts: 3, run_no: 1, trigger: 'schedule', priority: 7 });
    expect(iso(rows[0]?.['due_at'] as Date)).toBe(iso(t0));
    expect(iso(rows[0]?.['biz_date'] as Date).slice(0, 10)).toBe('2026-06-01'); // 18:00 in Shanghai
    const task = await getTask(h.db.pool, 'k-cron');
    expect(task?.lastFireTime?.getTime()).toBe(t0 + 60_000);
    expect(task?.nextFireTime?.getTime()).toBe(t0 + 80_000);
    for (const n of ['k-cron', 'k-rate', 'k-once']) await disableTask(h.db.pool, n);
  });

  describe('DST: slots equal core’s hand-worked table', () => {
    const cases: Array<{ zone: string; expr: string; after: string; expected: string[] }> = [
      { zone: 'America/New_York', expr: '30 2 * * *', after: '2026-03-06T12:00:00.000Z', expected: ['2026-03-07T07:30:00.000Z', '2026-03-08T07:30:00.000Z', '2026-03-09T06:30:00.000Z'] },
      { zone: 'America/New_York', expr: '30 * * * *', after: '2026-11-01T03:00:00.000Z', expected: ['2026-11-01T03:30:00.000Z', '2026-11-01T04:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z', '2026-11-01T07:30:00.000Z', '2026-11-01T08:30:00.000Z'] },
      { zone: 'America/New_York', expr: '30 1 * * *', after: '2026-10-30T12:00:00.000Z', expected: ['2026-10-31T05:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z'] },
      { zone: 'Europe/London', expr: '30 1 * * *', after: '2026-03-27T12:00:00.000Z', expected: ['2026-03-28T01:30:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-30T00:30:00.000Z'] },
      { zone: 'Europe/London', expr: '30 * * * *', after: '2026-10-24T22:00:00.000Z', expected: ['2026-10-24T22:30:00.000Z', '2026-10-24T23:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-25T01:30:00.000Z', '2026-10-25T02:30:00.000Z'] },
      { zone: 'Australia/Lord_Howe', expr: '*/15 * * * *', after: '2026-04-04T13:50:00.000Z', expected: ['2026-04-04T14:00:00.000Z', '2026-04-04T14:15:00.000Z', '2026-04-04T14:30:00.000Z', '2026-04-04T14:45:00.000Z', '2026-04-04T15:00:00.000Z', '2026-04-04T15:15:00.000Z', '2026-04-04T15:30:00.000Z'] },
      { zone: 'Australia/Lord_Howe', expr: '15 2 * * *', after: '2026-10-02T12:00:00.000Z', expected: ['2026-10-02T15:45:00.000Z', '2026-10-03T15:45:00.000Z', '2026-10-04T15:15:00.000Z'] },
    ];
    it.each(cases.map((c, i) => [`${c.zone} ${c.expr} after ${c.after}`, c, i] as const))('%s', async (_, c, i) => {
      const after = Date.parse(c.after);
      const name = `dst-${i}`;
      await h.task({ name, schedule: { type: 'cron', expr: c.expr, timezone: c.zone }, block: 'parallel' }, after + 1);
      const clock = new ManualClock(after);
      const engine = h.engine(clock, { misfireThresholdMs: 3_600_000, horizonMs: 3_600_000, fireLockTtlMs: 60_000 });
      const last = Date.parse(c.expected[c.expected.length - 1] ?? '');
      await drive(engine, clock, last + 60_000, 30 * MIN);
      const got = (await h.instances(name)).map((r) => iso(r.expected_time)).filter((t) => Date.parse(t) <= last);
      expect(got).toEqual(c.expected);
      await disableTask(h.db.pool, name);
    });
  });

  it('R1 misfire after a 5-minute stop: skip / fire_once / catch_up(3) yield exactly the promised instances, with real slot times', async () => {
    const t0 = Date.UTC(2026, 6, 1, 0, 0, 0);
    const clock = new ManualClock(t0);
    await h.task({ name: 'mf-skip', misfire: { policy: 'skip' }, block: 'parallel' }, t0);
    await h.task({ name: 'mf-once', misfire: { policy: 'fire_once' }, block: 'parallel' }, t0);
    await h.task({ name: 'mf-catch', misfire: { policy: 'catch_up', max: 3 }, block: 'parallel' }, t0);
    const first = h.engine(clock, {}, 'first');
    await drive(first, clock, t0 + 3 * MIN, 10_000);
    // Stopped for 5 minutes; a scheduler starts at +8:30. Meanwhile someone triggered mf-skip by
    // hand: a row at a non-slot time, which must not turn the missed slots into holes.
    const skipTask = await getTask(h.db.pool, 'mf-skip');
    await h.db.pool.query(
      "INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, `trigger`, state, due_at, params) VALUES (?, 'mf-skip', ?, '2026-07-01', 'manual', 'PENDING', ?, '{}')",
      [skipTask?.id, new Date(t0 + 5 * MIN + 17_123), new Date(t0 + 5 * MIN + 17_123)],
    );
    clock.set(t0 + 8 * MIN + 30_000);
    const second = h.engine(clock, {}, 'second');
    await drive(second, clock, t0 + 9 * MIN + 10_000, 10_000);
    const minutes = async (name: string) =>
      (await h.instances(name)).filter((r) => r.trigger === 'schedule').map((r) => (r.expected_time.getTime() - t0) / MIN);
    expect(await minutes('mf-skip')).toEqual([0, 1, 2, 3, 9]);
    expect(await minutes('mf-once')).toEqual([0, 1, 2, 3, 8, 9]);
    expect(await minutes('mf-catch')).toEqual([0, 1, 2, 3, 6, 7, 8, 9]);
    expect((await getTask(h.db.pool, 'mf-skip'))?.skippedCount).toBe(5);
    expect((await getTask(h.db.pool, 'mf-once'))?.coalescedCount).toBe(4);
    expect((await getTask(h.db.pool, 'mf-catch'))?.skippedCount).toBe(2);
    const [alerts] = await h.db.pool.query<RowDataPacket[]>("SELECT task_name FROM alert_log WHERE kind = 'DID_NOT_FIRE' ORDER BY task_name");
    expect(alerts.map((a) => String(a['task_name']))).toEqual(['mf-catch', 'mf-once', 'mf-skip']);
    // The same engine pausing (no restart) is a gap too.
    clock.set(t0 + 15 * MIN + 30_000);
    await second.tick();
    await second.refill();
    expect(await minutes('mf-once')).toEqual([0, 1, 2, 3, 8, 9, 15]);
    expect((await getTask(h.db.pool, 'mf-once'))?.coalescedCount).toBe(9);
    for (const n of ['mf-skip', 'mf-once', 'mf-catch']) await disableTask(h.db.pool, n);
  });

  it('R3: a scheduler with a stale definition (pub/sub cut) creates no slot of a disabled or edited task', async () => {
    const t0 = Date.UTC(2026, 7, 1, 0, 0, 0);
    const clock = new ManualClock(t0);
    await h.task({ name: 'r3-off', schedule: { type: 'cron', expr: '* * * * * *' }, block: 'parallel' }, t0);
    const edited = await h.task({ name: 'r3-edit', schedule: { type: 'cron', expr: '* * * * * *' }, block: 'parallel' }, t0);
    const stale = h.engine(clock, {}, 'stale');
    const told = h.engine(clock, {}, 'told');
    await drive(stale, clock, t0 + 2_000, 1_000);
    await told.refill();
    await told.tick();
    expect((await h.instances('r3-off')).length).toBe(3);
    await disableTask(h.db.pool, 'r3-off');
    await replaceTask(h.db.pool, { ...edited.definition, priority: 1 }, edited.version);
    await told.reloadTask('r3-off');
    await told.reloadTask('r3-edit');
    // Only the stale engine fires the next seconds.
    clock.set(t0 + 3_000);
    await stale.refill();
    expect(await stale.tick()).toBe(0);
    clock.set(t0 + 4_000);
    await stale.refill();
    expect(await stale.tick()).toBe(0);
    expect((await h.instances('r3-off')).map((r) => r.expected_time.getTime() - t0)).toEqual([0, 1_000, 2_000]);
    expect((await h.instances('r3-edit')).map((r) => r.expected_time.getTime() - t0)).toEqual([0, 1_000, 2_000]);
    // The told engine fires the edited task's next slot with its new definition.
    clock.set(t0 + 5_000);
    await told.refill();
    await told.tick();
    const [rows] = await h.db.pool.query<RowDataPacket[]>("SELECT priority FROM task_instance WHERE task_name = 'r3-edit' AND expected_time = ?", [new Date(t0 + 5_000)]);
    expect(rows[0]?.['priority']).toBe(1);
    expect((await h.instances('r3-off')).length).toBe(3);
    await disableTask(h.db.pool, 'r3-edit');
  });

  it('R4: block serial keeps one waiting instance; further fires are coalesced and counted', async () => {
    const t0 = Date.UTC(2026, 8, 1, 0, 0, 0);
    const clock = new ManualClock(t0);
    await h.task({ name: 'serial', schedule: { type: 'cron', expr: '* * * * * *' }, block: 'serial' }, t0);
    const engine = h.engine(clock);
    await drive(engine, clock, t0 + 4_000, 1_000);
    const rows = await h.instances('serial');
    expect(rows.map((r) => r.expected_time.getTime() - t0)).toEqual([0]);
    expect((await getTask(h.db.pool, 'serial'))?.coalescedCount).toBe(4);
    const [ev] = await h.db.pool.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM event_log WHERE instance_id = ? AND type = 'COALESCED'", [rows[0]?.id]);
    expect(Number(ev[0]?.['n'])).toBe(4);
    // Once the waiting instance runs, the next slot is created.
    await h.db.pool.query("UPDATE task_instance SET state = 'RUNNING' WHERE id = ?", [rows[0]?.id]);
    clock.set(t0 + 5_000);
    await engine.refill();
    await engine.tick();
    expect((await h.instances('serial')).map((r) => r.expected_time.getTime() - t0)).toEqual([0, 5_000]);
    await disableTask(h.db.pool, 'serial');
  });
});
