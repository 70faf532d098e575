import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishRegistration } from '@ax/redis';
import { raiseAlert } from '@ax/store';
import { waitFor } from '@ax/testing';
import type { RowDataPacket } from 'mysql2';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;
const webhook: Array<Record<string, unknown>> = [];
let failWebhook = 1;
const server = createServer((req: IncomingMessage, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    if (failWebhook > 0) {
      failWebhook--;
      res.writeHead(503).end();
      return;
    }
    webhook.push(JSON.parse(body) as Record<string, unknown>);
    res.writeHead(200).end('{}');
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  h = await startBrokerHarness({ maxReroutes: 1, alertWebhookUrl: `http://127.0.0.1:${port}/hook` });
});

afterAll(async () => {
  await h?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function rows(sql: string, params: unknown[] = []): Promise<RowDataPacket[]> {
  const [r] = await h.db.pool.query<RowDataPacket[]>(sql, params);
  return r;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('broker protocol rules', () => {
  it('R8 no ACK by the deadline from a live worker that does not list it: re-routed to another worker excluding the silent one; exhausted re-routes end FAILED ACK_TIMEOUT', async () => {
    const task = await h.task('r8_silent', { tags: ['r8'] });
    const a = (await h.peer('w-r8a', ['r8'])).heartbeat();
    const id = await h.instance(task);
    await waitFor(() => a.dispatches.length === 1, { description: 'first dispatch to a' });
    const b = (await h.peer('w-r8b', ['r8'])).heartbeat();
    const started = performance.now();
    // a stays silent: after ack_deadline + grace the instance goes to b (a excluded).
    await b.waitDispatches(1, 10_000);
    const rerouteMs = Math.round(performance.now() - started);
    expect(a.dispatches).toHaveLength(1);
    expect((await h.row(id)).reroute_count).toBe(1);
    // b stays silent too: maxReroutes (1) is exhausted.
    const failed = await h.waitState(id, 'FAILED', 10_000);
    console.log(`R8: re-routed ${rerouteMs} ms after the silent worker got it (ackTimeout 1000 + grace 500)`);
    expect(failed.reason).toBe('ACK_TIMEOUT');
    expect(await h.events(id)).toEqual(['CREATED', 'DISPATCHED', 'ACK_TIMEOUT', 'REROUTED', 'DISPATCHED', 'ACK_TIMEOUT']);
    const alert = await rows(`SELECT * FROM alert_log WHERE instance_id = ? AND kind = 'FINAL_FAILURE'`, [id]);
    expect(alert).toHaveLength(1);
    await a.stop();
    await b.stop();
  });

  it('R8 an unroutable dispatch (worker queue gone) is returned and re-routed without counting', async () => {
    const task = await h.task('r8_unroutable', { tags: ['r8u'] });
    // A registry entry without queues: the mandatory publish comes back.
    await publishRegistration(
      h.redis.redis,
      h.keys,
      { workerId: 'w-ghost', host: 'x', tags: ['r8u'], cores: 64, slots: 100, running: 0, runningExecutionIds: [], avgDurationMs5m: 0, draining: false, version: 't', startedAt: new Date().toISOString(), at: new Date().toISOString() },
      60_000,
    );
    const id = await h.instance(task);
    await waitFor(async () => (await h.events(id)).includes('RETURNED'), { description: 'RETURNED event', timeoutMs: 10_000 });
    // The ghost is kept out of routing for a while; a real worker appears and gets it.
    const real = await h.peer('w-r8real', ['r8u'], 1);
    const [item] = await real.waitDispatches(1);
    expect(item?.instanceId).toBe(id);
    const row = await h.row(id);
    expect(row.reroute_count).toBe(0);
    expect(row.worker_id).toBe('w-r8real');
  });

  it('#23 a worker that took a dispatch and went silent (frozen: no heartbeat, no ACK) is not re-routed behind its back; LOST_WORKER, an attempt spent, once its lease runs out', async () => {
    const task = await h.task('r23_frozen', { tags: ['r23f'], retry: { max: 1, backoffSeconds: 0, jitterSeconds: 0 } });
    const frozen = await h.peer('w-r23f-a', ['r23f']);
    // Its last heartbeat: the entry lapses 5 s later. The check below runs 2 s after the
    // dispatch, so the entry must outlive dispatch + 2 s with room for a loaded machine (with
    // 3 s a slow dispatch let the lease run out before the check, and LOST_WORKER came first).
    await frozen.register(5_000);
    const id = await h.instance(task);
    await frozen.waitDispatches(1);
    const other = (await h.peer('w-r23f-b', ['r23f'])).heartbeat();
    // Past ack_deadline + grace (1.5 s) the frozen worker's entry, older than the deadline, does
    // not list the execution: it may have started it, so nothing moves until the lease is gone.
    await sleep(2_000);
    expect((await h.row(id)).state).toBe('DISPATCHED');
    expect(other.dispatches).toHaveLength(0);
    const [retry] = await other.waitDispatches(1, 15_000);
    expect(retry?.attempt).toBe(2);
    const events = await h.events(id);
    expect(events.slice(0, 3)).toEqual(['CREATED', 'DISPATCHED', 'LOST_WORKER']);
    expect(events).not.toContain('REROUTED');
    expect(events).not.toContain('ACK_TIMEOUT');
    expect((await h.row(id)).lost_count).toBe(1);
    await frozen.stop();
    await other.stop();
  });

  it('#23 a live worker that lists a dispatch it has not ACKed yet (a slow ACK) is waited for, not re-routed', async () => {
    const task = await h.task('r23_slow_ack', { tags: ['r23s'] });
    const slow = (await h.peer('w-r23s-a', ['r23s'])).heartbeat();
    const id = await h.instance(task);
    const [item] = await slow.waitDispatches(1);
    slow.running.add(item!.executionId);
    await slow.register(); // listed now, not at the next 200 ms tick that a loaded machine may delay
    const other = (await h.peer('w-r23s-b', ['r23s'])).heartbeat();
    await sleep(3_000); // ack_deadline + grace is 1.5 s
    expect((await h.row(id)).state).toBe('DISPATCHED');
    expect(other.dispatches).toHaveLength(0);
    await slow.ack([item!]);
    await h.waitState(id, 'RUNNING');
    expect(await h.events(id)).toEqual(['CREATED', 'DISPATCHED', 'ACKED']);
    await slow.stop();
    await other.stop();
  });

  it('#23 a refusal after the ACK (the worker found at the start that it must not run the job) re-routes without counting an attempt', async () => {
    const task = await h.task('r23_refuse_running', { tags: ['r23r'] });
    const peer = await h.peer('w-r23r', ['r23r']);
    const id = await h.instance(task);
    const [first] = await peer.waitDispatches(1);
    await peer.ack([first!]);
    await h.waitState(id, 'RUNNING');
    await peer.refuse([first!], 'EXPIRED');
    const [, second] = await peer.waitDispatches(2);
    expect(second?.instanceId).toBe(id);
    expect(second?.attempt).toBe(1);
    expect((await h.row(id)).attempt).toBe(1);
    expect(await h.events(id)).toEqual(['CREATED', 'DISPATCHED', 'ACKED', 'REFUSED', 'REROUTED', 'DISPATCHED']);
    await peer.stop();
  });

  it('R16 a refusal EXPIRED re-routes without counting an attempt', async () => {
    const task = await h.task('r16_refuse', { tags: ['r16r'] });
    const peer = await h.peer('w-r16r', ['r16r']);
    const id = await h.instance(task);
    const [first] = await peer.waitDispatches(1);
    await peer.refuse([first!], 'EXPIRED');
    const [, second] = await peer.waitDispatches(2);
    expect(second?.instanceId).toBe(id);
    expect(second?.executionId).not.toBe(first?.executionId);
    expect(second?.attempt).toBe(1);
    const row = await h.row(id);
    expect(row).toMatchObject({ attempt: 1, reroute_count: 0, state: 'DISPATCHED' });
    expect(await h.events(id)).toEqual(['CREATED', 'DISPATCHED', 'REFUSED', 'REROUTED', 'DISPATCHED']);
  });

  it('R16 a refusal CLOCK_SKEW re-routes without counting an attempt, keeps the worker out of routing for a while, and lands one CLOCK_SKEW alert per worker and hour', async () => {
    const task = await h.task('r16_skew', { tags: ['r16s'] });
    const peer = await h.peer('w-r16s', ['r16s']);
    const id = await h.instance(task);
    const [first] = await peer.waitDispatches(1);
    await peer.refuse([first!], 'CLOCK_SKEW');
    const [, second] = await peer.waitDispatches(2);
    expect(second?.attempt).toBe(1);
    await peer.refuse([second!], 'CLOCK_SKEW'); // still skewed: no second alert this hour
    await peer.waitDispatches(3);
    // The refusing worker is kept out of this broker's routing for a lease period (it is the
    // only one here, so the instance waits as NO_WORKER meanwhile), then gets it again.
    expect((await h.events(id)).slice(0, 4)).toEqual(['CREATED', 'DISPATCHED', 'CLOCK_SKEW', 'REROUTED']);
    expect((await h.events(id)).filter((e) => e === 'DISPATCHED').length).toBeGreaterThanOrEqual(3);
    const alerts = await rows(`SELECT kind, worker_id, message FROM alert_log WHERE kind = 'CLOCK_SKEW' AND worker_id = 'w-r16s'`);
    expect(alerts).toHaveLength(1);
    expect(String(alerts[0]?.message)).toContain('w-r16s');
  });

  it('R16 an ACK of a superseded (re-routed) execution is answered with a cancel; R17 a late SUCCESS of it is adopted while the current one has not ACKed', async () => {
    const task = await h.task('r17_adopt', { tags: ['r17'] });
    const a = (await h.peer('w-r17a', ['r17'])).heartbeat(); // alive, but it does not list the dispatch
    const id = await h.instance(task);
    const [old] = await a.waitDispatches(1);
    const b = await h.peer('w-r17b', ['r17']);
    const [current] = await b.waitDispatches(1, 10_000);
    // b holds the dispatch without ACKing it (a slow ACK, #23): listed, it is waited for. A silent
    // b would lose it after ack_deadline + grace (1.5 s) -- FAILED ACK_TIMEOUT, maxReroutes is 1 --
    // before a's SUCCESS arrives whenever the steps below take that long on a loaded machine.
    b.running.add(current!.executionId);
    await b.register();
    b.heartbeat();
    // a wakes up: its ACK is fenced and answered with a cancel.
    await a.ack([old!]);
    await waitFor(() => a.cancels.some((c) => c.executionIds.includes(old!.executionId)), { description: 'cancel to a' });
    expect((await h.row(id)).state).toBe('DISPATCHED');
    // a finished anyway with SUCCESS before b ACKed: adopted, b is told to cancel.
    await a.result([old!], 'SUCCESS');
    const row = await h.waitState(id, 'SUCCESS');
    expect(row.current_execution_id).toBe(old!.executionId);
    await waitFor(() => b.cancels.some((c) => c.executionIds.includes(current!.executionId)), { description: 'cancel to b' });
    const events = await h.events(id);
    expect(events).toContain('FENCED');
    expect(events).toContain('ADOPTED');
    const exec = await rows('SELECT state FROM task_execution WHERE execution_id = ?', [current!.executionId]);
    expect(exec[0]?.state).toBe('SUPERSEDED');
    await a.stop();
    await b.stop();
  });

  it('R17 a late SUCCESS of a superseded execution is recorded and ignored once the current one ACKed', async () => {
    const task = await h.task('r17_ignore', { tags: ['r17i'] });
    const a = (await h.peer('w-r17ia', ['r17i'])).heartbeat(); // alive, but it does not list the dispatch
    const id = await h.instance(task);
    const [old] = await a.waitDispatches(1);
    const b = await h.peer('w-r17ib', ['r17i']);
    const [current] = await b.waitDispatches(1, 10_000);
    await b.ack([current!]);
    await h.waitState(id, 'RUNNING');
    await a.result([old!], 'SUCCESS');
    await waitFor(async () => (await h.events(id)).includes('FENCED'), { description: 'FENCED event' });
    expect((await h.row(id)).state).toBe('RUNNING');
    expect((await h.row(id)).current_execution_id).toBe(current!.executionId);
    await b.result([current!], 'FAILED', { error: 'boom' });
    expect((await h.waitState(id, 'FAILED')).reason).toBe('JOB_FAILED');
    await a.stop();
    await b.stop();
  });

  it('R14 a lease holds while the registry lists the execution; LOST_WORKER once it does not', async () => {
    const task = await h.task('r14_lease', { tags: ['r14'], retry: { max: 1, backoffSeconds: 0, jitterSeconds: 0 } });
    const peer = await h.peer('w-r14', ['r14']);
    const id = await h.instance(task);
    const [item] = await peer.waitDispatches(1);
    await peer.ack([item!]);
    await h.waitState(id, 'RUNNING');
    // Past lease (1.5 s) + grace (0.5 s), twice: still RUNNING because the entry lists it.
    await sleep(3_000);
    expect((await h.row(id)).state).toBe('RUNNING');
    // The worker "dies": its entry no longer lists the execution.
    peer.running.clear();
    await peer.register();
    const lostAt = performance.now();
    await waitFor(async () => (await h.events(id)).includes('LOST_WORKER'), { description: 'LOST_WORKER', timeoutMs: 10_000 });
    console.log(`R14: LOST_WORKER declared ${Math.round(performance.now() - lostAt)} ms after the entry dropped the execution (lease 1500 + grace 500)`);
    const row = await h.row(id);
    expect(['RETRY_WAIT', 'PENDING', 'DISPATCHED']).toContain(row.state);
    expect(row.lost_count).toBe(1);
    await peer.waitDispatches(2);
  });

  it('R6/R7 a failed attempt waits in RETRY_WAIT until due_at on the database clock, then runs again; the final failure alerts and wakes DAG evaluation', async () => {
    const finished: string[] = [];
    const sub = h.redis.redis.duplicate();
    await sub.subscribe(h.keys.channels.instancesFinished);
    sub.on('message', (_channel: string, message: string) => finished.push(message));
    const task = await h.task('r7_retry', { tags: ['r7'], retry: { max: 1, backoffSeconds: 1, factor: 1, jitterSeconds: 0 } });
    const peer = await h.peer('w-r7', ['r7']);
    const id = await h.instance(task);
    const [first] = await peer.waitDispatches(1);
    await peer.ack([first!]);
    // ACK and result travel as separate messages and may be applied in either order (R16);
    // this test pins the order to check the exact event sequence.
    await h.waitState(id, 'RUNNING');
    await peer.result([first!], 'FAILED', { exitCode: 3, error: 'exit 3' });
    const waiting = await h.waitState(id, 'RETRY_WAIT');
    const [delay] = await rows('SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), due_at) / 1000 AS ms FROM task_instance WHERE id = ?', [id]);
    expect(Number(delay?.ms)).toBeLessThanOrEqual(1_000);
    expect(waiting.attempt).toBe(2);
    const [, second] = await peer.waitDispatches(2);
    expect(second?.attempt).toBe(2);
    await peer.ack([second!]);
    await h.waitState(id, 'RUNNING');
    await peer.result([second!], 'TIMEOUT');
    expect((await h.waitState(id, 'FAILED')).reason).toBe('TIMEOUT');
    expect(await h.events(id)).toEqual(['CREATED', 'DISPATCHED', 'ACKED', 'FAILED', 'RETRY_SCHEDULED', 'RETRY_DUE', 'DISPATCHED', 'ACKED', 'TIMED_OUT']);
    await waitFor(() => finished.some((m) => m.includes('r7_retry')), { description: 'instances-finished' });
    expect(JSON.parse(finished.find((m) => m.includes('r7_retry')) ?? '{}')).toMatchObject({ taskNames: ['r7_retry'] });
    expect(await rows(`SELECT * FROM alert_log WHERE instance_id = ? AND kind = 'FINAL_FAILURE'`, [id])).toHaveLength(1);
    await sub.quit();
  });

  it('R15 an async (HTTP 202) result frees the slot; the broker enforces the attempt deadline', async () => {
    // The attempt deadline must outlast the second dispatch and the RUNNING check below (2 s
    // did not always on a loaded machine); 4 s does, and the TIMEOUT still comes within the wait.
    const task = await h.task('r15_async', { tags: ['r15'], timeoutSeconds: 4, block: 'parallel' });
    const peer = await h.peer('w-r15', ['r15'], 1);
    const id = await h.instance(task);
    const other = await h.instance(task);
    const [item] = await peer.waitDispatches(1);
    await peer.ack([item!]);
    await peer.result([item!], 'SUCCESS', { async: true, exitCode: 202 });
    // The one slot is free again: the second instance is dispatched while the first stays RUNNING.
    await peer.waitDispatches(2);
    expect((await h.row(id)).state).toBe('RUNNING');
    expect(await h.events(id)).toContain('ASYNC_ACCEPTED');
    expect((await h.waitState(id, 'FAILED', 10_000)).reason).toBe('TIMEOUT');
    void other;
  });

  it('raises one LONG_RUNNING alert when an attempt passes 80 % of its timeout', async () => {
    const task = await h.task('long_runner', { tags: ['long'], timeoutSeconds: 1 });
    const peer = await h.peer('w-long', ['long']);
    const id = await h.instance(task);
    const [item] = await peer.waitDispatches(1);
    await peer.ack([item!]);
    await waitFor(async () => (await h.events(id)).includes('LONG_RUNNING'), { description: 'LONG_RUNNING event', timeoutMs: 5_000 });
    await sleep(500);
    expect(await rows(`SELECT * FROM alert_log WHERE kind = 'LONG_RUNNING' AND instance_id = ?`, [id])).toHaveLength(1);
    expect((await h.events(id)).filter((e) => e === 'LONG_RUNNING')).toHaveLength(1);
    await peer.result([item!], 'SUCCESS');
    await h.waitState(id, 'SUCCESS');
  });

  it('R9 prefetch: no LONG_RUNNING for a dispatch its worker still holds (ACKed, not started); raised once it runs', async () => {
    const task = await h.task('long_held', { tags: ['longheld'], timeoutSeconds: 1 });
    const peer = await h.peer('w-longheld', ['longheld']);
    const id = await h.instance(task);
    const [item] = await peer.waitDispatches(1);
    peer.held.add(item!.executionId);
    await peer.ack([item!]); // registers with the item held
    await sleep(2_500); // past 80 % of 1 s, two timers passes and more
    expect(await h.events(id)).not.toContain('LONG_RUNNING');
    peer.held.delete(item!.executionId);
    await peer.register(); // it started
    await waitFor(async () => (await h.events(id)).includes('LONG_RUNNING'), { description: 'LONG_RUNNING once it runs', timeoutMs: 5_000 });
    await peer.result([item!], 'SUCCESS');
    await h.waitState(id, 'SUCCESS');
  });

  it('dead-letters invalid event messages into dead_letter and keeps consuming', async () => {
    await h.peerBus.publish(h.peerBus.topology.eventsExchange, 'x', Buffer.from('{"v":1,"kind":"ack","items":[]}'));
    await h.peerBus.publish(h.peerBus.topology.eventsExchange, 'x', Buffer.from('not json'));
    const dead = await waitFor(async () => {
      const r = await rows('SELECT * FROM dead_letter ORDER BY id');
      return r.length >= 2 ? r : null;
    }, { description: 'two dead letters' });
    expect(dead[0]?.source_queue).toBe(h.bus.topology.eventsQueue);
    // The events consumer handles messages concurrently: the two dead letters may land in either order.
    const notJson = dead.find((d) => String(d.payload) === 'not json');
    expect(String(notJson?.reason)).toContain('invalid JSON');
  });

  it('delivers alerts to the webhook in the generic JSON, retrying after a failure, once per alert', async () => {
    await raiseAlert(h.db.pool, { kind: 'CLOCK_SKEW', severity: 'warning', subject: 'worker:w-x', workerId: 'w-x', message: 'clock off by 3 s' });
    const got = await waitFor(() => webhook.find((w) => w.kind === 'CLOCK_SKEW' && w.workerId === 'w-x'), { description: 'webhook delivery', timeoutMs: 15_000 });
    expect(got).toMatchObject({ kind: 'CLOCK_SKEW', severity: 'warning', workerId: 'w-x', message: 'clock off by 3 s' });
    expect(typeof got.at).toBe('string');
    // The broker records the delivery after the webhook answered: wait for it, not only for the call.
    const row = await waitFor(
      async () => {
        const [found] = await rows(`SELECT delivered_at FROM alert_log WHERE kind = 'CLOCK_SKEW' AND worker_id = 'w-x'`);
        return found?.delivered_at == null ? null : found;
      },
      { description: 'delivered_at recorded', timeoutMs: 10_000 },
    );
    expect(row.delivered_at).not.toBeNull();
    expect(webhook.filter((w) => w.kind === 'CLOCK_SKEW' && w.workerId === 'w-x')).toHaveLength(1);
  });
});
