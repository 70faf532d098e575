/** The dependency timeout (R19) as R6/R7 want it: on the database clock, instances matched to their task by `task_id`. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { deleteTask, getTask, type TaskRecord } from '@ax/store';
import { ManualClock } from '@ax/testing';
import { createHarness, type Harness } from '../test/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const YEAR_MS = 365 * 86_400_000;

/** A WAITING instance of `task` due `ageSeconds` before the database's NOW(3); returns its id. */
async function waiting(task: TaskRecord, ageSeconds: number): Promise<string> {
  const [res] = await h.db.pool.query<ResultSetHeader>(
    `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params, priority)
     VALUES (?, ?, NOW(3) - INTERVAL ? SECOND, CURDATE(), 'dependency', 'WAITING', NOW(3) - INTERVAL ? SECOND, '{}', 5)`,
    [task.id, task.definition.name, ageSeconds, ageSeconds],
  );
  return String(res.insertId);
}

async function stateOf(id: string): Promise<string> {
  const [rows] = await h.db.pool.query<Array<RowDataPacket & { state: string; reason: string | null }>>('SELECT state, reason FROM task_instance WHERE id = ?', [id]);
  const r = rows[0];
  return r === undefined ? 'missing' : `${r.state}${r.reason === null ? '' : `:${r.reason}`}`;
}

describe('dependency timeout (R19) on the database clock', () => {
  it('R6/R7 the database clock decides the dependency timeout: a scheduler a year ahead cancels nothing early, one a year behind still cancels', async () => {
    const task = await h.task({ name: 'dt_clock', schedule: { type: 'none' }, dependencyTimeoutSeconds: 3_600 }, Date.now() - 2 * YEAR_MS);
    const early = await waiting(task, 30 * 60); // 30 min of its hour
    const ahead = h.engine(new ManualClock(Date.now() + YEAR_MS), {}, 'ahead');
    expect((await ahead.evaluateDag()).timedOut).toBe(0);
    expect(await stateOf(early)).toBe('WAITING');

    const late = await waiting(task, 2 * 3_600); // an hour past its timeout
    const behind = h.engine(new ManualClock(Date.now() - YEAR_MS), {}, 'behind');
    expect((await behind.evaluateDag()).timedOut).toBe(1);
    expect(await stateOf(late)).toBe('CANCELED:UPSTREAM_MISSING');
    expect(await stateOf(early)).toBe('WAITING');
  });

  it("R6/R7 instances meet their task by task_id: a task re-created under the same name does not lend its timeout to the old one's instances", async () => {
    const clock = new ManualClock(Date.now());
    const old = await h.task({ name: 'dt_same', schedule: { type: 'none' }, dependencyTimeoutSeconds: 7 * 86_400 }, clock.nowMs());
    const oldInstance = await waiting(old, 2 * 3_600);
    const gone = await h.task({ name: 'dt_gone', schedule: { type: 'none' }, dependencyTimeoutSeconds: 7 * 86_400 }, clock.nowMs());
    const orphan = await waiting(gone, 2 * 86_400);
    expect(await deleteTask(h.db.pool, 'dt_same')).toBe(true);
    expect(await deleteTask(h.db.pool, 'dt_gone')).toBe(true);
    const recreated = await h.task({ name: 'dt_same', schedule: { type: 'none' }, dependencyTimeoutSeconds: 3_600 }, clock.nowMs());
    const newInstance = await waiting(recreated, 2 * 3_600 + 1);

    const engine = h.engine(clock, { dependencyTimeoutSeconds: 86_400 }, 'same-name');
    expect((await engine.evaluateDag()).timedOut).toBe(2);
    expect(await stateOf(newInstance)).toBe('CANCELED:UPSTREAM_MISSING'); // its own task's hour
    expect(await stateOf(oldInstance)).toBe('WAITING'); // not the new task's hour: its task is gone, so AX_DEPENDENCY_TIMEOUT_S (a day)
    expect(await stateOf(orphan)).toBe('CANCELED:UPSTREAM_MISSING'); // a task gone for good strands nothing
  });

  it('#47 AX_DEPENDENCY_TIMEOUT_S applies to every task that sets no dependencyTimeoutSeconds (absence is stored, not 86400); a task that sets one keeps it', async () => {
    const clock = new ManualClock(Date.now());
    const unset = await h.task({ name: 'dt_unset', schedule: { type: 'none' } }, clock.nowMs());
    const own = await h.task({ name: 'dt_own_day', schedule: { type: 'none' }, dependencyTimeoutSeconds: 86_400 }, clock.nowMs());
    expect((await getTask(h.db.pool, 'dt_unset'))?.definition.dependencyTimeoutSeconds).toBeNull();
    expect((await getTask(h.db.pool, 'dt_own_day'))?.definition.dependencyTimeoutSeconds).toBe(86_400);
    const unsetInstance = await waiting(unset, 2 * 3_600);
    const ownInstance = await waiting(own, 2 * 3_600);

    // The default configuration (a day): two hours of waiting cancel neither.
    expect((await h.engine(clock, {}, 'default-timeout').evaluateDag()).timedOut).toBe(0);
    expect(await stateOf(unsetInstance)).toBe('WAITING');
    // AX_DEPENDENCY_TIMEOUT_S=3600: the task without its own timeout waits an hour; the other its day.
    // (the count also holds the test above's instance of a deleted task, which waits the same fallback)
    expect((await h.engine(clock, { dependencyTimeoutSeconds: 3_600 }, 'hour-timeout').evaluateDag()).timedOut).toBeGreaterThanOrEqual(1);
    expect(await stateOf(unsetInstance)).toBe('CANCELED:UPSTREAM_MISSING');
    expect(await stateOf(ownInstance)).toBe('WAITING');
  });
});
