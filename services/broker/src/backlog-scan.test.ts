/**
 * #45 "Why it waits" (ADMIN-API.md "Waiting instances", R23): the broker's backlog scan stores
 * why each due instance is not dispatched, writes one WAITING event per change of reason,
 * exports the backlog by team and reason, and raises a team's BACKLOG alert over the threshold.
 * The test drives the passes itself (the dispatch poll and the scan loop are off), so nothing
 * here depends on timing.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { insertTeam, listAlerts, setDispatchPaused, setTeamAlertRoutes, type TaskRecord } from '@ax/store';
import { waitFor } from '@ax/testing';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { scanBacklogOnce } from './backlog-scan.js';
import { dispatchOnce } from './dispatch.js';
import type { Broker } from './broker.js';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;
let second: Broker;

/** The flood team's own alert webhook: what it is sent. */
const floodHook: Array<Record<string, unknown>> = [];
const hookServer = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    floodHook.push(JSON.parse(body) as Record<string, unknown>);
    res.writeHead(200).end('{}');
  });
});

beforeAll(async () => {
  h = await startBrokerHarness({ dispatchPollMs: 600_000, backlogAlertInstances: 3 });
  (h.broker.context as { wakeDispatch: () => void }).wakeDispatch = () => undefined;
  await insertTeam(h.db.pool, { name: 'capped', description: 'maxRunning 1', maxRunning: 1 });
  await insertTeam(h.db.pool, { name: 'flood', description: 'the noisy one', maxRunning: null });
  await insertTeam(h.db.pool, { name: 'small', description: 'a few held', maxRunning: null });
  await new Promise<void>((resolve) => hookServer.listen(0, '127.0.0.1', resolve));
  await setTeamAlertRoutes(h.db.pool, 'flood', [{ url: `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/hook`, format: 'generic', kinds: ['BACKLOG'] }]);
  await h.broker.context.teams.refresh(h.db.pool);
  // one worker of every team with tag etl and free slots: only what is held waits
  await h.peer('w-scan', ['etl'], 4);
  second = await h.extraBroker('second-broker');
  (second.context as { wakeDispatch: () => void }).wakeDispatch = () => undefined;
  await second.context.teams.refresh(h.db.pool);
});

afterAll(async () => {
  await h?.close();
  await new Promise<void>((resolve) => hookServer.close(() => resolve()));
});

beforeEach(async () => {
  await setDispatchPaused(h.db.pool, false);
  await h.db.pool.query(`DELETE FROM task_instance`);
  await h.db.pool.query(`DELETE FROM alert_log`);
});

let seq = 0;
async function task(prefix: string, fields: Record<string, unknown>): Promise<TaskRecord> {
  return h.task(`${prefix}_${++seq}`, { tags: ['etl'], ...fields });
}

/** An instance made DISPATCHED/RUNNING elsewhere (the scripted worker does not hold it). */
async function running(t: TaskRecord, fields: { rerunBatchId?: number } = {}): Promise<string> {
  const id = await h.instance(t, { expectedTime: new Date(Date.now() - 60_000 - seq), quiet: true, ...fields });
  await h.db.pool.query(`UPDATE task_instance SET state = 'RUNNING', worker_id = 'elsewhere' WHERE id = ?`, [id]);
  return id;
}

async function waiting(id: string): Promise<{ reason: string | null; message: string | null; since: Date | null }> {
  const row = await h.row(id);
  return { reason: (row.waiting_reason as string | null) ?? null, message: (row.waiting_message as string | null) ?? null, since: (row.waiting_since as Date | null) ?? null };
}

async function waitingEvents(id: string): Promise<Array<{ reason: unknown; message: unknown }>> {
  const [rows] = await h.db.pool.query<RowDataPacket[]>(`SELECT data FROM event_log WHERE instance_id = ? AND type = 'WAITING' ORDER BY id`, [id]);
  return rows.map((r) => {
    const data = (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as { reason: unknown; message: unknown };
    return { reason: data.reason, message: data.message };
  });
}

describe('#45 R23 waiting.reason from the backlog scan', () => {
  it('SERIAL_BUSY, QUEUE_POSITION, BATCH_CONCURRENCY, TEAM_LIMIT, NO_WORKER and UPSTREAM, each with its concrete cause; a startable instance is not held', async () => {
    const serial = await task('serial', { block: 'serial' });
    const serialRun = await running(serial);
    const serialHeld = await h.instance(serial, { quiet: true });

    const queue = await task('queue', { block: { queue: 3 } });
    const queueHead = await h.instance(queue, { expectedTime: new Date(Date.now() - 30_000), quiet: true });
    const queueNext = await h.instance(queue, { expectedTime: new Date(Date.now() - 20_000), quiet: true });

    const batchTask = await task('batch', { block: 'parallel' });
    const [batch] = await h.db.pool.query<ResultSetHeader>(`INSERT INTO rerun_batch (mode, reason, actor, concurrency, request) VALUES ('backfill', 'test', 'tester', 1, '{}')`);
    await running(batchTask, { rerunBatchId: batch.insertId });
    const batchHeld = await h.instance(batchTask, { trigger: 'rerun', rerunBatchId: batch.insertId, quiet: true });

    const capped = await task('capped', { team: 'capped', block: 'parallel' });
    await running(capped);
    const cappedHeld = await h.instance(capped, { quiet: true });

    const gpu = await task('gpu', { block: 'parallel', tags: ['etl', 'gpu'] });
    const gpuHeld = await h.instance(gpu, { quiet: true });

    const child = await task('child', { block: 'parallel' });
    const childHeld = await h.instance(child, { quiet: true });
    await h.db.pool.query(`UPDATE task_instance SET state = 'WAITING' WHERE id = ?`, [childHeld]);

    const free = await task('free', { block: 'parallel' });
    const startable = await h.instance(free, { quiet: true });

    const outcome = await scanBacklogOnce(h.broker.context);
    expect(outcome.changed).toBe(6);

    expect(await waiting(serialHeld)).toMatchObject({ reason: 'SERIAL_BUSY', message: `task ${serial.definition.name} (block serial) already has instance ${serialRun} RUNNING on worker elsewhere` });
    expect(await waiting(queueNext)).toMatchObject({ reason: 'QUEUE_POSITION', message: `task ${queue.definition.name} runs its slots in order: instance ${queueHead} goes first` });
    expect((await waiting(queueHead)).reason).toBeNull();
    expect(await waiting(batchHeld)).toMatchObject({ reason: 'BATCH_CONCURRENCY', message: `rerun batch ${batch.insertId} runs 1 of its concurrency 1` });
    expect(await waiting(cappedHeld)).toMatchObject({ reason: 'TEAM_LIMIT', message: 'team capped has 1/1 instances DISPATCHED or RUNNING (its maxRunning)' });
    expect(await waiting(gpuHeld)).toMatchObject({ reason: 'NO_WORKER', message: 'no live worker of team default offers tag(s) gpu of its tags [etl, gpu]' });
    expect((await waiting(childHeld)).reason).toBe('UPSTREAM');
    expect(await waiting(startable)).toEqual({ reason: null, message: null, since: null });
    // `since` is when it became due (its first reason), on the database clock
    const [dueRows] = await h.db.pool.query<RowDataPacket[]>(`SELECT due_at FROM task_instance WHERE id = ?`, [serialHeld]);
    expect((await waiting(serialHeld)).since).toEqual(dueRows[0]?.due_at);
    for (const id of [serialHeld, queueNext, batchHeld, cappedHeld, gpuHeld, childHeld]) expect(await waitingEvents(id)).toHaveLength(1);
    expect(await waitingEvents(startable)).toHaveLength(0);
  });

  it('one WAITING event per change of reason: none while it stays, one for each new reason, none when the wait ends', async () => {
    const serial = await task('serial', { block: 'serial' });
    const run = await running(serial);
    const held = await h.instance(serial, { quiet: true });

    await scanBacklogOnce(h.broker.context);
    await scanBacklogOnce(h.broker.context);
    await scanBacklogOnce(h.broker.context);
    const first = await waitingEvents(held);
    expect(first.map((e) => e.reason)).toEqual(['SERIAL_BUSY']);
    expect(String(first[0]?.message)).toContain(`instance ${run} RUNNING`);

    await setDispatchPaused(h.db.pool, true);
    await scanBacklogOnce(h.broker.context);
    await scanBacklogOnce(h.broker.context);
    expect((await waiting(held)).reason).toBe('DISPATCH_PAUSED');
    await setDispatchPaused(h.db.pool, false);
    await scanBacklogOnce(h.broker.context);
    expect((await waitingEvents(held)).map((e) => e.reason)).toEqual(['SERIAL_BUSY', 'DISPATCH_PAUSED', 'SERIAL_BUSY']);

    // the run ends: the instance could start now; its reason is cleared without an event
    await h.db.pool.query(`UPDATE task_instance SET state = 'SUCCESS' WHERE id = ?`, [run]);
    await scanBacklogOnce(h.broker.context);
    expect((await waiting(held)).reason).toBeNull();
    expect(await waitingEvents(held)).toHaveLength(3);
  });

  it('two brokers scanning at once write each change and its event once', async () => {
    const gpu = await task('gpu', { block: 'parallel', tags: ['gpu'] });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await h.instance(gpu, { quiet: true }));
    const [a, b] = await Promise.all([scanBacklogOnce(h.broker.context), scanBacklogOnce(second.context)]);
    expect(a.changed + b.changed).toBe(20);
    for (const id of ids) expect(await waitingEvents(id)).toHaveLength(1);
  });

  it('a reason left on a row that was dispatched is cleared, so its next wait gets its event again', async () => {
    const gpu = await task('gpu', { block: 'parallel', tags: ['gpu'] });
    const id = await h.instance(gpu, { quiet: true });
    await scanBacklogOnce(h.broker.context);
    expect((await waiting(id)).reason).toBe('NO_WORKER');
    await h.db.pool.query(`UPDATE task_instance SET state = 'DISPATCHED' WHERE id = ?`, [id]);
    await scanBacklogOnce(h.broker.context);
    expect((await waiting(id)).reason).toBeNull();
    await h.db.pool.query(`UPDATE task_instance SET state = 'PENDING' WHERE id = ?`, [id]); // re-routed
    await scanBacklogOnce(h.broker.context);
    expect((await waitingEvents(id)).map((e) => e.reason)).toEqual(['NO_WORKER', 'NO_WORKER']);
  });
  it('the dispatch that moves a held row clears its reason in the same write: nothing is left for the scan to clear', async () => {
    const serial = await task('serial', { block: 'serial' });
    const run = await running(serial);
    const held = await h.instance(serial, { quiet: true });
    await scanBacklogOnce(h.broker.context);
    expect((await waiting(held)).reason).toBe('SERIAL_BUSY');
    await h.db.pool.query(`UPDATE task_instance SET state = 'SUCCESS' WHERE id = ?`, [run]);
    await dispatchOnce(h.broker.context);
    expect((await h.row(held)).state).toBe('DISPATCHED');
    expect(await waiting(held)).toEqual({ reason: null, message: null, since: null });
  });

  it('a stale reason on a row another transaction holds is skipped, not waited for, and cleared by a later pass', async () => {
    const gpu = await task('gpu', { block: 'parallel', tags: ['gpu'] });
    const id = await h.instance(gpu, { quiet: true });
    await scanBacklogOnce(h.broker.context);
    expect((await waiting(id)).reason).toBe('NO_WORKER');
    await h.db.pool.query(`UPDATE task_instance SET state = 'CANCELED' WHERE id = ?`, [id]);
    const holder = await h.db.pool.getConnection();
    try {
      await holder.beginTransaction();
      await holder.query(`SELECT id FROM task_instance WHERE id = ? FOR UPDATE`, [id]);
      // Waiting on the lock would hold the pass until the lock wait timeout (50 s), past this test's.
      await scanBacklogOnce(h.broker.context);
      expect((await waiting(id)).reason).toBe('NO_WORKER');
    } finally {
      await holder.rollback();
      holder.release();
    }
    await scanBacklogOnce(h.broker.context);
    expect((await waiting(id)).reason).toBeNull();
  });
});

describe('#45 the backlog metric and the BACKLOG alert', () => {
  it('exports count and oldest due age by team and reason, and alerts per team above AX_BACKLOG_ALERT_INSTANCES (3), not below', async () => {
    const flood = await task('flood', { team: 'flood', block: 'parallel', tags: ['gpu'] });
    const floodIds: string[] = [];
    for (let i = 0; i < 4; i++) floodIds.push(await h.instance(flood, { quiet: true }));
    // the oldest: due two minutes ago
    await h.db.pool.query(`UPDATE task_instance SET due_at = NOW(3) - INTERVAL 120 SECOND WHERE id = ?`, [floodIds[0]]);
    const small = await task('small', { team: 'small', block: 'serial' });
    await running(small);
    await h.instance(small, { quiet: true });
    const smallGpu = await task('small_gpu', { team: 'small', block: 'parallel', tags: ['gpu'] });
    await h.instance(smallGpu, { quiet: true });
    await h.instance(smallGpu, { quiet: true });

    const outcome = await scanBacklogOnce(h.broker.context);
    const values = (await h.broker.context.metrics.backlogInstances.get()).values;
    const count = (team: string, reason: string) => values.find((v) => v.labels.team === team && v.labels.reason === reason)?.value;
    expect(count('flood', 'NO_WORKER')).toBe(4);
    expect(count('small', 'SERIAL_BUSY')).toBe(1);
    expect(count('small', 'NO_WORKER')).toBe(2);
    expect(values).toHaveLength(3);
    const oldest = (await h.broker.context.metrics.backlogOldestSeconds.get()).values.find((v) => v.labels.team === 'flood' && v.labels.reason === 'NO_WORKER')?.value;
    expect(oldest).toBeGreaterThanOrEqual(120);
    expect(oldest).toBeLessThan(3_600);

    // flood: 4 > 3 → one alert, carrying its team and its oldest instance; small: 3, not over
    expect(outcome.alerted).toEqual(['flood']);
    const alerts = await listAlerts(h.db.pool, { teams: null, kinds: ['BACKLOG'], limit: 10 });
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ team: 'flood', instanceId: floodIds[0], reason: 'NO_WORKER', severity: 'warning' });
    expect(alerts[0]?.message).toContain('team flood has 4 due instances not dispatched');
    // delivered to the flood team's own route (the broker's alert loop), carrying its team
    const sent = await waitFor(() => floodHook.find((b) => b.kind === 'BACKLOG') ?? null, { description: "the BACKLOG alert at the flood team's webhook" });
    expect(sent).toMatchObject({ kind: 'BACKLOG', team: 'flood', instanceId: floodIds[0], severity: 'warning' });

    // deduplicated: another pass raises nothing new
    expect((await scanBacklogOnce(h.broker.context)).alerted).toEqual([]);
    expect(await listAlerts(h.db.pool, { teams: null, kinds: ['BACKLOG'], limit: 10 })).toHaveLength(1);

    // the backlog drains: the series go with it
    await h.db.pool.query(`DELETE FROM task_instance`);
    await scanBacklogOnce(h.broker.context);
    expect((await h.broker.context.metrics.backlogInstances.get()).values).toHaveLength(0);
  });

  it('DAG children waiting for their parents (UPSTREAM) are exported but never raise BACKLOG', async () => {
    const child = await task('child', { team: 'small', block: 'parallel' });
    for (let i = 0; i < 5; i++) {
      const id = await h.instance(child, { quiet: true });
      await h.db.pool.query(`UPDATE task_instance SET state = 'WAITING' WHERE id = ?`, [id]);
    }
    const outcome = await scanBacklogOnce(h.broker.context);
    expect(outcome.backlog.get('small')?.get('UPSTREAM')?.count).toBe(5);
    expect(outcome.alerted).toEqual([]);
  });
});

describe('#45 the scan runs on its own in every broker', () => {
  it('a running broker stores the reason by its own scan loop', async () => {
    const own = await startBrokerHarness({ backlogScanMs: 200 });
    try {
      const t = await own.task('loop_gpu', { block: 'parallel', tags: ['gpu'] });
      const id = await own.instance(t);
      const row = await waitFor(async () => ((await own.row(id)).waiting_reason === 'NO_WORKER' ? own.row(id) : null), { description: 'NO_WORKER stored by the loop', timeoutMs: 15_000 });
      expect(row.state).toBe('PENDING');
      expect(row.waiting_message).toBe('no live worker serves team default');
    } finally {
      await own.close();
    }
  });
});
