/**
 * The wheel is filled only as the horizon reaches a task's next fire, and the wheel drops the
 * tasks the cache no longer schedules (refill.ts `queueUpcoming`, #24).
 *
 * Reconcile reads the task rows that may have work (refill.ts, #24): every row once per
 * `resyncIntervalMs`, in between only those of tasks whose next fire has come or whose
 * definition was reloaded. With 100,000 tasks the read of every row each second was the
 * scheduler's heap churn. Real MariaDB and Redis, ManualClock.
 */
import type { Pool } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@ax/testing';
import { createHarness, iso, type Harness } from '../test/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

/** The pool, recording the names each reconcile read of `task` asked for (null: every row). */
function countingPool(pool: Pool, reads: Array<string[] | null>): Pool {
  return new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop !== 'query') {
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      }
      return (sql: unknown, values?: unknown) => {
        if (typeof sql === 'string' && sql.startsWith('SELECT name, version, last_fire_time, next_fire_time FROM task')) {
          reads.push(sql.includes('IN (?)') ? [...((values as unknown[])[0] as string[])].sort() : null);
        }
        return target.query(sql as string, values as unknown[]);
      };
    },
  });
}

describe('reconcile reads', () => {
  it('reads every row once per resync interval, and between them only the rows of tasks that are due', async () => {
    const t0 = Date.UTC(2026, 11, 3, 10, 0, 30);
    await h.task({ name: 'rr-minutely', schedule: { type: 'cron', expr: '* * * * *', timezone: 'UTC' }, block: 'parallel' }, t0 - 3_600_000);
    await h.task({ name: 'rr-daily', schedule: { type: 'cron', expr: '0 2 * * *', timezone: 'UTC' }, block: 'parallel' }, t0 - 3_600_000);
    const clock = new ManualClock(t0);
    const reads: Array<string[] | null> = [];
    const engine = h.engine(clock, { resyncIntervalMs: 120_000, misfireThresholdMs: 5_000 }, 'rr', countingPool(h.db.pool, reads));
    await engine.refill(); // 10:00:30: the first pass reads every row
    expect(reads).toEqual([null]);

    // The minutely task had work (its slots since its creation, left to the misfire policy):
    // its row is read again at the next pass; the daily task's next fire is tomorrow.
    clock.set(t0 + 5_000);
    await engine.refill();
    expect(reads).toEqual([null, ['rr-minutely']]);

    clock.set(t0 + 6_000); // 10:00:36: nothing due, nothing read
    await engine.refill();
    expect(reads).toHaveLength(2);

    clock.set(t0 + 30_500); // 10:01:00.5: the minutely task's fire has come: its row only
    await engine.tick();
    await engine.refill();
    expect(reads.slice(2)).toEqual([['rr-minutely']]);
    expect((await h.instances('rr-minutely')).map((r) => iso(r.expected_time))).toContain(iso(t0 + 30_000));

    // That pass moved its watermark over 10:01 (work done): the next one reads it once more and
    // finds it quiet until 10:02; the one after reads nothing.
    clock.set(t0 + 31_000);
    await engine.refill();
    expect(reads.slice(3)).toEqual([['rr-minutely']]);
    clock.set(t0 + 32_000);
    await engine.refill();
    expect(reads).toHaveLength(4);

    // A definition reloaded (a task-changed message) is read at the next pass, quiet or not.
    await engine.reloadTask('rr-daily');
    clock.set(t0 + 33_000);
    await engine.refill();
    expect(reads.slice(4)).toEqual([['rr-daily']]);

    // A resync interval after the last full pass, every row again: what changed behind the cache's back.
    clock.set(t0 + 120_000);
    await engine.refill();
    expect(reads.at(-1)).toBeNull();
    await engine.stop();
  }, 30_000);
});

describe('queueUpcoming', () => {
  it('puts a daily fire on the wheel once the horizon reaches it, and drops a disabled task', async () => {
    const two = Date.UTC(2026, 11, 4, 2, 0, 0);
    await h.db.pool.query("UPDATE task SET enabled = 0 WHERE name LIKE 'rr-%'"); // the wheel holds this task's fires only
    await h.task({ name: 'qu-daily', schedule: { type: 'cron', expr: '0 2 * * *', timezone: 'UTC' }, block: 'parallel' }, two - 86_400_000);
    const clock = new ManualClock(two - 180_000);
    const engine = h.engine(clock, { horizonMs: 60_000 }, 'qu');
    const { wheel } = engine.context;
    await engine.refill(); // 01:57: 02:00 is beyond the 60 s horizon
    expect(wheel.size).toBe(0);
    for (const s of [-119, -90, -61]) {
      clock.set(two + s * 1_000);
      await engine.refill();
      expect(wheel.size).toBe(0);
    }
    clock.set(two - 59_000); // 01:59:01: within the horizon
    await engine.refill();
    expect(wheel.size).toBe(1);
    clock.set(two - 58_000); // already there: not added twice
    await engine.refill();
    expect(wheel.size).toBe(1);

    await h.db.pool.query("UPDATE task SET enabled = 0, version = version + 1 WHERE name = 'qu-daily'");
    await engine.reloadTask('qu-daily');
    clock.set(two - 57_000);
    await engine.refill();
    expect(wheel.size).toBe(0);
    await engine.stop();
  }, 30_000);
});
