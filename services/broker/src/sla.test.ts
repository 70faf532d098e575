/**
 * `sla` (issue #22) on real MariaDB, Redis and RabbitMQ with the broker engine: an instance
 * still RUNNING `finishWithinSeconds` after its slot raises exactly one `SLA_MISSED` (warning,
 * reason FINISH) and one event, however many timer passes see it; one that never started
 * raises one with reason START; one that finished in time raises none. Found by the timers
 * scan on the database clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;
beforeAll(async () => {
  h = await startBrokerHarness();
});
afterAll(async () => {
  await h?.close();
});

async function slaAlerts(instanceId: string): Promise<Array<{ reason: string | null; severity: string; message: string; task_name: string }>> {
  const [rows] = await h.db.pool.query<RowDataPacket[]>(`SELECT reason, severity, message, task_name FROM alert_log WHERE kind = 'SLA_MISSED' AND instance_id = ?`, [instanceId]);
  return rows as Array<{ reason: string | null; severity: string; message: string; task_name: string }>;
}

/** How long after its slot the instance's SLA_MISSED alert was raised (database clock). */
async function slaAlertAfterSlotMs(instanceId: string): Promise<number> {
  const [rows] = await h.db.pool.query<RowDataPacket[]>(
    `SELECT TIMESTAMPDIFF(MICROSECOND, i.expected_time, a.at) / 1000 AS ms FROM alert_log a JOIN task_instance i ON i.id = a.instance_id WHERE a.kind = 'SLA_MISSED' AND a.instance_id = ?`,
    [instanceId],
  );
  return Number(rows[0]?.ms);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('sla', () => {
  it('an instance still running at finishWithinSeconds raises one SLA_MISSED; one finished in time raises none', async () => {
    const slow = await h.task('sla_slow', { tags: ['sla'], block: 'parallel', sla: { finishWithinSeconds: 2 } });
    // The quick one gets 4 s: its run (dispatch, ACK, result) must surely fit, on a loaded machine too.
    const quick = await h.task('sla_quick', { tags: ['sla'], block: 'parallel', sla: { finishWithinSeconds: 4 } });
    const peer = await h.peer('w-sla', ['sla']);
    const running = await h.instance(slow);
    const [item] = await peer.waitDispatches(1);
    await peer.ack([item!]);
    await h.waitState(running, 'RUNNING');
    const done = await h.instance(quick);
    const [, quickItem] = await peer.waitDispatches(2);
    await peer.ack([quickItem!]);
    await peer.result([quickItem!], 'SUCCESS');
    await h.waitState(done, 'SUCCESS');

    const alert = await waitForAlert(running, 6_000);
    // Not before 2 s after its slot, on the database clock. (Asserting "none yet" at this point
    // bet that the quick run above took under 2 s, which a loaded machine does not promise.)
    expect(await slaAlertAfterSlotMs(running)).toBeGreaterThanOrEqual(2_000);
    expect(alert).toMatchObject({ reason: 'FINISH', severity: 'warning', task_name: 'sla_slow' });
    expect(alert.message).toContain('had not finished 2 s after its slot');
    expect((await h.row(running)).state).toBe('RUNNING'); // an SLA miss is an alert, not a transition
    await sleep(1_000); // several more timer passes (every 200 ms here)
    expect(await slaAlerts(running)).toHaveLength(1);
    expect((await h.events(running)).filter((e) => e === 'SLA_MISSED')).toHaveLength(1);
    // The quick one finished in time; once its 4 s have passed (and a timer pass after them) it
    // has no alert.
    const [[quickRow]] = await h.db.pool.query<RowDataPacket[]>(
      'SELECT TIMESTAMPDIFF(MICROSECOND, expected_time, ended_at) / 1000 AS ranMs, TIMESTAMPDIFF(MICROSECOND, NOW(3), expected_time + INTERVAL 4.5 SECOND) / 1000 AS leftMs FROM task_instance WHERE id = ?',
      [done],
    );
    expect(Number(quickRow?.ranMs)).toBeLessThan(4_000);
    await sleep(Math.max(0, Number(quickRow?.leftMs)));
    expect(await slaAlerts(done)).toHaveLength(0);
    await peer.result([item!], 'SUCCESS');
    await h.waitState(running, 'SUCCESS');
  }, 30_000);

  it('an instance not started by startWithinSeconds (no worker for it) raises one SLA_MISSED with reason START', async () => {
    const task = await h.task('sla_unstarted', { tags: ['nobody-has-this'], sla: { startWithinSeconds: 1, finishWithinSeconds: 2 } });
    const id = await h.instance(task);
    const alert = await waitForAlert(id, 5_000);
    expect(alert).toMatchObject({ reason: 'START', task_name: 'sla_unstarted' });
    expect(alert.message).toContain('had not started 1 s after its slot');
    await sleep(2_000); // past finishWithinSeconds too: still the one alert per instance
    expect(await slaAlerts(id)).toHaveLength(1);
    expect((await h.row(id)).state).toBe('PENDING');
    await h.db.pool.query(`UPDATE task_instance SET state = 'CANCELED', ended_at = NOW(3) WHERE id = ?`, [id]);
  }, 30_000);
});

async function waitForAlert(instanceId: string, timeoutMs: number): Promise<{ reason: string | null; severity: string; message: string; task_name: string }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const [first] = await slaAlerts(instanceId);
    if (first !== undefined) return first;
    if (Date.now() > until) throw new Error(`no SLA_MISSED for instance ${instanceId} within ${timeoutMs} ms`);
    await sleep(100);
  }
}
