/**
 * Calendars in the scheduler (issue #22), real MariaDB and Redis, ManualClock, two schedulers:
 * a `0 2 * * *` Asia/Shanghai task whose calendar lists a date (in the calendar's zone) gets no
 * instance for that slot — not at its time, not by a re-scan, not as a misfire — the watermark
 * moves on over it, and the skip is counted exactly once on the task.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTask, putCalendar } from '@ax/store';
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

describe('calendar', () => {
  it('skips the listed date, fires the others, counts the skip once over two schedulers and re-scans', async () => {
    // 02:00 in Shanghai = 18:00 UTC the day before.
    const dec1 = Date.UTC(2026, 10, 30, 18, 0, 0); // 2026-12-01 02:00 +08:00
    await putCalendar(h.db.pool, 'cn-bank', { team: 'default', timezone: 'Asia/Shanghai', dates: ['2026-12-02'] });
    await h.task({ name: 'cn-daily', schedule: { type: 'cron', expr: '0 2 * * *', timezone: 'Asia/Shanghai' }, block: 'parallel', calendar: 'cn-bank' }, dec1 - HOUR);
    const clock = new ManualClock(dec1 - 30 * 60_000);
    const a = h.engine(clock, { horizonMs: 6 * HOUR, misfireThresholdMs: HOUR, fireLockTtlMs: 60_000 }, 'cal-a');
    const b = h.engine(clock, { horizonMs: 6 * HOUR, misfireThresholdMs: HOUR, fireLockTtlMs: 60_000 }, 'cal-b');
    await Promise.all([drive(a, clock, dec1 + 3 * 24 * HOUR, 15 * 60_000), drive(b, clock, dec1 + 3 * 24 * HOUR, 15 * 60_000)]);
    await a.refill();
    expect((await h.instances('cn-daily')).map((r) => iso(r.expected_time))).toEqual([iso(dec1), iso(dec1 + 2 * 24 * HOUR), iso(dec1 + 3 * 24 * HOUR)]);
    const task = await getTask(h.db.pool, 'cn-daily');
    expect(task?.calendarSkippedCount).toBe(1);
    expect(task?.lastFireTime?.getTime()).toBe(dec1 + 3 * 24 * HOUR);
    // A third scheduler starting later re-scans the range: it neither creates the slot nor counts it again.
    const c = h.engine(clock, { misfireThresholdMs: HOUR }, 'cal-c');
    await c.refill();
    await c.tick();
    expect(await h.instances('cn-daily')).toHaveLength(3);
    expect((await getTask(h.db.pool, 'cn-daily'))?.calendarSkippedCount).toBe(1);
    await Promise.all([a.stop(), b.stop(), c.stop()]);
  }, 60_000);
});
