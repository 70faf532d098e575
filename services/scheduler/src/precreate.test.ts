/**
 * Slots created ahead of time (`precreateMs`, XXL-JOB's "pre-read"): plain tasks get their
 * PENDING instance before the slot, with `due_at` = the slot; serial tasks and DAG children
 * do not; an edit or a disable withdraws the not-yet-due ones in its own transaction (R3), and
 * a scheduler with a stale definition creates none. The ManualClock runs 30 s ahead of the
 * database clock here, so every slot of the test is "not yet due" for MySQL's NOW(3).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2';
import { disableTask, replaceTask } from '@ax/store';
import { ManualClock } from '@ax/testing';
import { createHarness, type Harness } from '../test/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const PRECREATE_MS = 5_000;

describe('slots created ahead of time', () => {
  it('R3/R4 plain slots are created PENDING ahead with due_at = their time; serial ones wait; an edit or disable withdraws them; a stale scheduler re-creates none', async () => {
    const t0 = Math.ceil(Date.now() / 1_000) * 1_000 + 30_000;
    const clock = new ManualClock(t0);
    await h.task({ name: 'pre-off', schedule: { type: 'cron', expr: '* * * * * *' }, block: 'parallel' }, t0 - 1);
    const edited = await h.task({ name: 'pre-edit', schedule: { type: 'cron', expr: '* * * * * *' }, block: 'parallel' }, t0 - 1);
    await h.task({ name: 'pre-serial', schedule: { type: 'cron', expr: '* * * * * *' }, block: 'serial' }, t0 - 1);
    const stale = h.engine(clock, { precreateMs: PRECREATE_MS }, 'stale');
    const told = h.engine(clock, { precreateMs: PRECREATE_MS }, 'told');
    await stale.refill();
    await stale.tick();
    const ahead = [0, 1_000, 2_000, 3_000, 4_000, 5_000];
    expect((await h.instances('pre-off')).map((r) => r.expected_time.getTime() - t0)).toEqual(ahead);
    expect((await h.instances('pre-edit')).map((r) => r.expected_time.getTime() - t0)).toEqual(ahead);
    expect((await h.instances('pre-serial')).map((r) => r.expected_time.getTime() - t0)).toEqual([0]);
    const [due] = await h.db.pool.query<RowDataPacket[]>(
      `SELECT COUNT(*) AS n FROM task_instance WHERE task_name IN ('pre-off', 'pre-edit') AND state = 'PENDING' AND due_at = expected_time`,
    );
    expect(Number(due[0]?.n)).toBe(12);

    await disableTask(h.db.pool, 'pre-off');
    await replaceTask(h.db.pool, { ...edited.definition, priority: 1 }, edited.version);
    expect(await h.instances('pre-off')).toEqual([]);
    expect(await h.instances('pre-edit')).toEqual([]);
    const [events] = await h.db.pool.query<RowDataPacket[]>(
      `SELECT COUNT(*) AS n FROM event_log e LEFT JOIN task_instance i ON i.id = e.instance_id WHERE i.id IS NULL`,
    );
    expect(Number(events[0]?.n)).toBe(0); // withdrawn with their CREATED events

    // The stale engine (missed the change) goes on: its version guard refuses every slot.
    clock.set(t0 + 1_000);
    await stale.refill();
    expect(await stale.tick()).toBe(0);
    expect(await h.instances('pre-off')).toEqual([]);
    expect(await h.instances('pre-edit')).toEqual([]);

    // The told engine creates the edited task's slots with the new definition, none of the disabled one.
    await told.reloadTask('pre-off');
    await told.reloadTask('pre-edit');
    clock.set(t0 + 2_000);
    await told.refill();
    await told.tick();
    const [rows] = await h.db.pool.query<RowDataPacket[]>(`SELECT priority FROM task_instance WHERE task_name = 'pre-edit'`);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.priority === 1)).toBe(true);
    expect(await h.instances('pre-off')).toEqual([]);
    await disableTask(h.db.pool, 'pre-edit');
    await disableTask(h.db.pool, 'pre-serial');
  });
});
