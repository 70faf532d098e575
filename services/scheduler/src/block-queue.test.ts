/**
 * `block: {"queue": N}` at slot creation (R4, issue #22): every fire of a task whose earlier
 * runs have not started is kept, up to N waiting; beyond N a fire is coalesced into the newest
 * waiting instance and counted, as with `serial` (whose limit is 1). Real MariaDB and Redis,
 * ManualClock, no broker: nothing starts, so the waiting instances pile up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2';
import { disableTask, getTask } from '@ax/store';
import { ManualClock } from '@ax/testing';
import { createHarness, drive, type Harness } from '../test/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

describe('block {"queue": N} when slots are created', () => {
  it('keeps up to 3 waiting fires of a task firing every second, coalesces and counts the rest; serial keeps 1', async () => {
    const t0 = Date.UTC(2026, 8, 1, 6, 0, 0);
    const clock = new ManualClock(t0 - 500);
    await h.task({ name: 'q3', schedule: { type: 'cron', expr: '* * * * * *' }, block: { queue: 3 } }, t0 - 1);
    await h.task({ name: 'q-serial', schedule: { type: 'cron', expr: '* * * * * *' }, block: 'serial' }, t0 - 1);
    const a = h.engine(clock, {}, 'qa');
    const b = h.engine(clock, {}, 'qb');
    for (let ms = t0; ms <= t0 + 7_000; ms += 1_000) {
      clock.set(ms + 10);
      await Promise.all([a.refill(), b.refill()]);
      await Promise.all([a.tick(), b.tick()]);
    }
    const q = await h.instances('q3');
    expect(q.map((r) => r.expected_time.getTime() - t0)).toEqual([0, 1_000, 2_000]);
    expect(q.every((r) => r.state === 'PENDING')).toBe(true);
    expect((await getTask(h.db.pool, 'q3'))?.coalescedCount).toBe(5);
    // The 5 coalesced fires are recorded on the newest waiting instance.
    const [events] = await h.db.pool.query<Array<RowDataPacket & { instance_id: string; message: string }>>(
      "SELECT e.instance_id, e.message FROM event_log e JOIN task_instance i ON i.id = e.instance_id WHERE i.task_name = 'q3' AND e.type = 'COALESCED'",
    );
    expect(events).toHaveLength(5);
    expect(new Set(events.map((e) => String(e.instance_id)))).toEqual(new Set([String(q[2]?.id)]));
    expect(events[0]?.message).toContain('block queue: 3 waiting');

    // One starts: a place frees, the next fire is kept again (and the watermark went on).
    await h.db.pool.query("UPDATE task_instance SET state = 'RUNNING', started_at = NOW(3) WHERE id = ?", [q[0]?.id]);
    await drive(a, clock, t0 + 9_000 + 10, 1_000);
    const after = await h.instances('q3');
    expect(after.filter((r) => r.state === 'PENDING')).toHaveLength(3);
    expect(after.map((r) => r.expected_time.getTime() - t0)).toEqual([0, 1_000, 2_000, 8_000]);

    expect((await h.instances('q-serial')).map((r) => r.expected_time.getTime() - t0)).toEqual([0]);
    await disableTask(h.db.pool, 'q3');
    await disableTask(h.db.pool, 'q-serial');
  }, 60_000);
});
