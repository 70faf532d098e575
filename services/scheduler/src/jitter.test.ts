/**
 * `jitterSeconds` (issue #22): 1,000 tasks on `0 * * * *` with a jitter of 30 s start spread
 * over the 30 s after the hour; each slot exists exactly once (the unique key), `expected_time`
 * is the slot and `due_at` carries the offset, and two schedulers (and a later re-scan) agree
 * on every offset, which is core's `slotJitterMs` of (task name, slot).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2';
import { slotJitterMs } from '@ax/core';
import { ManualClock } from '@ax/testing';
import { createHarness, type Harness } from '../test/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const TASKS = 1_000;
const JITTER_S = 30;

describe('jitterSeconds', () => {
  it('spreads 1,000 hourly tasks over 30 s, each slot once, at the same offset on every scheduler', async () => {
    const slot = Date.UTC(2026, 7, 1, 10, 0, 0);
    const created = slot - 120_000;
    const names = Array.from({ length: TASKS }, (_, i) => `hourly-${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(
        names.slice(i, i + 50).map((name) => h.task({ name, schedule: { type: 'cron', expr: '0 * * * *' }, block: 'parallel', jitterSeconds: JITTER_S }, created)),
      );
    }
    const clock = new ManualClock(slot - 30_000);
    const a = h.engine(clock, {}, 'sched-a');
    const b = h.engine(clock, {}, 'sched-b');
    await Promise.all([a.refill(), b.refill()]);
    await Promise.all([a.tick(), b.tick()]);
    clock.set(slot + 200);
    await Promise.all([a.tick(), b.tick()]);
    await Promise.all([a.refill(), b.refill()]);
    // Later, past the lock TTL: the re-scan of a third scheduler finds every slot and moves none.
    clock.set(slot + 60_000);
    const c = h.engine(clock, {}, 'sched-c');
    await c.refill();
    await Promise.all([a.refill(), b.refill(), c.refill()]);

    const [rows] = await h.db.pool.query<Array<RowDataPacket & { task_name: string; expected_time: Date; due_at: Date; n: number }>>(
      `SELECT task_name, MIN(expected_time) AS expected_time, MIN(due_at) AS due_at, COUNT(*) AS n
         FROM task_instance WHERE task_name LIKE 'hourly-%' GROUP BY task_name ORDER BY task_name`,
    );
    expect(rows).toHaveLength(TASKS);
    const offsets = new Map<number, number>();
    for (const r of rows) {
      expect(Number(r.n), r.task_name).toBe(1);
      expect(r.expected_time.getTime(), r.task_name).toBe(slot);
      const offsetMs = r.due_at.getTime() - slot;
      expect(offsetMs, r.task_name).toBe(slotJitterMs(r.task_name, slot, JITTER_S));
      offsets.set(offsetMs / 1_000, (offsets.get(offsetMs / 1_000) ?? 0) + 1);
    }
    // Spread over the whole window: every second 0…30 is used, none holds more than ~2× its share.
    expect([...offsets.keys()].sort((x, y) => x - y)).toEqual(Array.from({ length: JITTER_S + 1 }, (_, i) => i));
    expect(Math.max(...offsets.values())).toBeLessThan((2 * TASKS) / (JITTER_S + 1));
    const [events] = await h.db.pool.query<Array<RowDataPacket & { n: number }>>(
      `SELECT COUNT(*) AS n FROM event_log e JOIN task_instance i ON i.id = e.instance_id WHERE i.task_name LIKE 'hourly-%' AND e.type = 'CREATED'`,
    );
    expect(Number(events[0]?.n)).toBe(TASKS);
    await h.db.pool.query("UPDATE task SET enabled = 0 WHERE name LIKE 'hourly-%'");
    await Promise.all([a.stop(), b.stop(), c.stop()]);
  }, 120_000);
});
