/**
 * `pauseAfterFailures` (issue #22) on real MariaDB, Redis and RabbitMQ with the broker engine
 * and a scripted worker that fails everything: a task that fires every second with
 * `pauseAfterFailures: 3` disables itself after its third consecutive final failure, with
 * exactly one `TASK_PAUSED` alert and `paused_reason = 'FAILURES'`; a success in between breaks
 * the run; enabling it clears the count and resumes; a second pause is a second alert.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2';
import { enableTask, getTask, type TaskRecord } from '@ax/store';
import { startBrokerHarness, type BrokerHarness, type ProtocolPeer } from './test-support.js';

let h: BrokerHarness;
let peer: ProtocolPeer;
beforeAll(async () => {
  h = await startBrokerHarness();
  peer = await h.peer('w-pause', ['pause']);
});
afterAll(async () => {
  await h?.close();
});

async function pausedAlerts(taskName: string): Promise<Array<{ reason: string | null; severity: string; message: string }>> {
  const [rows] = await h.db.pool.query<RowDataPacket[]>(`SELECT reason, severity, message FROM alert_log WHERE kind = 'TASK_PAUSED' AND task_name = ? ORDER BY id`, [taskName]);
  return rows as Array<{ reason: string | null; severity: string; message: string }>;
}

/**
 * Plays the scheduler of a `* * * * * *` task: one instance a second while the task is enabled
 * (its definition row says so, as the R3 guard reads it), until `stop()` says enough.
 */
async function fireEverySecond(task: TaskRecord, until: () => Promise<boolean>, maxFires: number): Promise<string[]> {
  const ids: string[] = [];
  while (ids.length < maxFires && !(await until())) {
    const current = await getTask(h.db.pool, task.definition.name);
    if (current?.definition.enabled !== true) break;
    ids.push(await h.instance(task, { expectedTime: new Date(Math.floor(Date.now() / 1_000) * 1_000 + ids.length) }));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  return ids;
}

describe('pauseAfterFailures', () => {
  it('a task failing every second with N=3 disables itself after the third failure, one TASK_PAUSED; enabling resumes', async () => {
    peer.autoOutcome = 'FAILED';
    const task = await h.task('pause_every_second', { tags: ['pause'], block: 'parallel', pauseAfterFailures: 3 });
    const disabled = async (): Promise<boolean> => (await getTask(h.db.pool, 'pause_every_second'))?.definition.enabled === false;
    const fired = await fireEverySecond(task, disabled, 8);
    // Paused by the third failure. How many fires the loop made before it saw the task disabled
    // depends on how fast each round trip was (a fourth, even a fifth on a loaded machine, may be
    // in flight when the third result lands), so the pause is pinned to the failure that made
    // it: the alert names the third instance to end FAILED.
    const paused = await getTask(h.db.pool, 'pause_every_second');
    expect(paused?.definition.enabled).toBe(false);
    expect(paused?.pausedReason).toBe('FAILURES');
    expect(fired.length).toBeGreaterThanOrEqual(3);
    expect(fired.length).toBeLessThan(8);
    const states = await Promise.all(fired.slice(0, 3).map(async (id) => (await h.waitState(id, 'FAILED')).state));
    expect(states).toEqual(['FAILED', 'FAILED', 'FAILED']);
    const alerts = await pausedAlerts('pause_every_second');
    expect(alerts).toHaveLength(1);
    const [byEnd] = await h.db.pool.query<RowDataPacket[]>(
      `SELECT id FROM task_instance WHERE task_name = 'pause_every_second' AND state = 'FAILED' ORDER BY ended_at, id LIMIT 3`,
    );
    const [pausedBy] = await h.db.pool.query<RowDataPacket[]>(`SELECT instance_id FROM alert_log WHERE kind = 'TASK_PAUSED' AND task_name = 'pause_every_second'`);
    expect(String(pausedBy[0]?.instance_id)).toBe(String(byEnd[2]?.id));
    expect(alerts[0]).toMatchObject({ reason: 'FAILURES', severity: 'critical' });
    expect(alerts[0]?.message).toContain('3 consecutive failed runs');

    // A late fourth failure (if one was in flight) changes nothing: still one alert.
    for (const id of fired.slice(3)) await h.waitState(id, 'FAILED');
    expect(await pausedAlerts('pause_every_second')).toHaveLength(1);

    // Enabling clears the count and resumes: two more failures do not pause it, a third does.
    const resumed = await enableTask(h.db.pool, 'pause_every_second');
    expect(resumed?.pausedReason).toBeNull();
    expect(resumed?.definition.enabled).toBe(true);
    const again = await fireEverySecond(resumed as TaskRecord, disabled, 2);
    for (const id of again) await h.waitState(id, 'FAILED');
    expect((await getTask(h.db.pool, 'pause_every_second'))?.definition.enabled).toBe(true);
    const third = await h.instance(resumed as TaskRecord);
    await h.waitState(third, 'FAILED');
    expect((await getTask(h.db.pool, 'pause_every_second'))?.pausedReason).toBe('FAILURES');
    expect(await pausedAlerts('pause_every_second')).toHaveLength(2); // one per pause
  }, 60_000);

  it('a success breaks the run of failures, and a task without pauseAfterFailures never pauses', async () => {
    const task = await h.task('pause_broken_run', { tags: ['pause'], block: 'parallel', pauseAfterFailures: 2 });
    const plain = await h.task('pause_never', { tags: ['pause'], block: 'parallel' });
    const run = async (t: TaskRecord, outcome: 'FAILED' | 'SUCCESS'): Promise<void> => {
      peer.autoOutcome = outcome;
      const id = await h.instance(t);
      await h.waitState(id, outcome);
    };
    await run(task, 'FAILED');
    await run(task, 'SUCCESS');
    await run(task, 'FAILED');
    expect((await getTask(h.db.pool, 'pause_broken_run'))?.definition.enabled).toBe(true);
    await run(task, 'FAILED');
    expect((await getTask(h.db.pool, 'pause_broken_run'))?.pausedReason).toBe('FAILURES');
    for (let i = 0; i < 4; i++) await run(plain, 'FAILED');
    expect((await getTask(h.db.pool, 'pause_never'))?.definition.enabled).toBe(true);
    expect(await pausedAlerts('pause_never')).toHaveLength(0);
  }, 60_000);
});
