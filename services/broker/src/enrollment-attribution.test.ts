/**
 * R24 attacks on the broker (issue #44, ENROLLMENT-CONTRACT point 4): a worker enrollment X
 * holding its own, valid RabbitMQ login tries to speak for executions that are not its own —
 * another enrollment Y's, or an unenrolled worker's — by ACKing, reporting, refusing or writing
 * output for them, or heartbeating as Y's worker. RabbitMQ validates the `user_id` of what X
 * publishes; the broker compares it with the enrollment of the worker each execution was
 * dispatched to and drops the foreign item alone (counted, logged), applying the rest of the
 * message. The peers use only their enrollment's logins (test-support.ts `EnrolledPeer`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchItem } from '@ax/core';
import type { RowDataPacket } from 'mysql2';
import { EnrolledPeer, TestEnrollment, startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;
let X: TestEnrollment;
let Y: TestEnrollment;
let x: EnrolledPeer;
let y: EnrolledPeer;
const enrollments: TestEnrollment[] = [];
const peers: EnrolledPeer[] = [];

beforeAll(async () => {
  h = await startBrokerHarness();
  X = await TestEnrollment.create(h, 'enr-attackerxxx1', ['*']);
  Y = await TestEnrollment.create(h, 'enr-victimyyyyy1', ['*']);
  enrollments.push(X, Y);
  x = await new EnrolledPeer(h, X, 'host-x', ['x']).start();
  y = await new EnrolledPeer(h, Y, 'host-y', ['y']).start();
  peers.push(x, y);
  x.heartbeat();
  y.heartbeat();
}, 60_000);

afterAll(async () => {
  for (const p of peers) await p.stop();
  for (const e of enrollments) await e.remove().catch(() => undefined);
  await h?.close();
});

async function unattributed(kind: string): Promise<number> {
  const text = await h.metrics.registry.getSingleMetricAsString('ax_unattributed_items_total');
  const match = new RegExp(`kind="${kind}"[^}]*} (\\d+)`).exec(text);
  return match === null ? 0 : Number(match[1]);
}

async function dispatchedTo(peer: { waitDispatches(n: number): Promise<DispatchItem[]>; dispatches: DispatchItem[] }, instanceId: string): Promise<DispatchItem> {
  const item = await (async () => {
    for (;;) {
      const found = peer.dispatches.find((d) => d.instanceId === instanceId);
      if (found !== undefined) return found;
      await peer.waitDispatches(peer.dispatches.length + 1);
    }
  })();
  return item;
}

async function pair(tag: string): Promise<{ own: DispatchItem; foreign: DispatchItem }> {
  const tx = await h.task(`own_${tag}`, { tags: ['x'], block: 'parallel' });
  const ty = await h.task(`foreign_${tag}`, { tags: ['y'], block: 'parallel' });
  const ix = await h.instance(tx, { maxAttempts: 1 });
  const iy = await h.instance(ty, { maxAttempts: 1 });
  return { own: await dispatchedTo(x, ix), foreign: await dispatchedTo(y, iy) };
}

async function rows(sql: string, params: unknown[]): Promise<RowDataPacket[]> {
  const [r] = await h.db.pool.query<RowDataPacket[]>(sql, params);
  return r;
}

describe("R24 an enrollment cannot speak for another enrollment's executions", () => {
  it("a result X publishes for Y's execution is dropped and counted, Y's instance unchanged; the same message's result for X's own execution applies", async () => {
    const { own, foreign } = await pair('result');
    await y.ack([foreign]);
    await h.waitState(foreign.instanceId, 'RUNNING');
    await x.ack([own]);
    await h.waitState(own.instanceId, 'RUNNING');
    const before = await unattributed('result');
    // claiming to be Y's worker does not help: the execution's worker decides
    await x.result([foreign, own], 'SUCCESS', y.workerId);
    await h.waitState(own.instanceId, 'SUCCESS');
    expect((await h.row(foreign.instanceId)).state).toBe('RUNNING');
    expect(await h.events(foreign.instanceId)).not.toContain('SUCCEEDED');
    const [execution] = await rows('SELECT state FROM task_execution WHERE execution_id = ?', [foreign.executionId]);
    expect(execution?.state).not.toBe('SUCCESS');
    expect(await unattributed('result')).toBe(before + 1);
    // Y's own result still applies
    await y.result([foreign], 'SUCCESS');
    await h.waitState(foreign.instanceId, 'SUCCESS');
  });

  it("an ACK X publishes for Y's dispatch is dropped and counted, Y's instance stays DISPATCHED; X's own ACK in the same message applies", async () => {
    const { own, foreign } = await pair('ack');
    const before = await unattributed('ack');
    await x.ack([foreign, own]);
    await h.waitState(own.instanceId, 'RUNNING');
    expect((await h.row(foreign.instanceId)).state).toBe('DISPATCHED');
    expect(await h.events(foreign.instanceId)).not.toContain('ACKED');
    expect(await unattributed('ack')).toBe(before + 1);
    await y.ack([foreign]);
    await h.waitState(foreign.instanceId, 'RUNNING');
    await x.result([own], 'SUCCESS');
    await y.result([foreign], 'SUCCESS');
    await h.waitState(foreign.instanceId, 'SUCCESS');
  });

  it("a refusal X publishes for Y's dispatch is dropped and counted: Y's instance is not re-routed", async () => {
    const { own, foreign } = await pair('refusal');
    const before = await unattributed('refusal');
    await x.refuse([foreign], 'EXPIRED');
    await x.ack([own]);
    await h.waitState(own.instanceId, 'RUNNING');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await h.events(foreign.instanceId)).not.toContain('REROUTED');
    expect(await unattributed('refusal')).toBe(before + 1);
    await y.ack([foreign]);
    await h.waitState(foreign.instanceId, 'RUNNING');
    await x.result([own], 'SUCCESS');
    await y.result([foreign], 'SUCCESS');
    await h.waitState(foreign.instanceId, 'SUCCESS');
  });

  it("a log chunk X publishes for Y's execution is dropped and counted; the same message's chunk for X's own execution is stored", async () => {
    const { own, foreign } = await pair('log');
    await y.ack([foreign]);
    await x.ack([own]);
    const before = await unattributed('log');
    await x.log([foreign, own], 'forged output\n');
    // claiming to be Y's worker does not help: the sender is X
    await x.log([foreign], 'forged as Y\n', y.workerId);
    const stored = async (executionId: string): Promise<number> => (await rows('SELECT COUNT(*) AS n FROM job_log_chunk WHERE execution_id = ?', [executionId]))[0]?.n as number;
    await waitForValue(() => stored(own.executionId), (n) => Number(n) > 0, 'the own chunk stored');
    await waitForValue(() => unattributed('log'), (n) => n >= before + 2, 'both foreign chunks counted');
    expect(Number(await stored(foreign.executionId))).toBe(0);
    await x.result([own], 'SUCCESS');
    await y.result([foreign], 'SUCCESS');
    await h.waitState(foreign.instanceId, 'SUCCESS');
  });

  it("a heartbeat X publishes naming Y's worker is dropped and counted; X's own heartbeat is not", async () => {
    const before = await unattributed('heartbeat');
    await x.busHeartbeat();
    await x.busHeartbeat(y.workerId);
    await waitForValue(() => unattributed('heartbeat'), (n) => n >= before + 1, 'the forged heartbeat counted');
    await x.busHeartbeat();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await unattributed('heartbeat')).toBe(before + 1);
  });
});

describe("R24 an enrollment cannot speak for an unenrolled worker's executions", () => {
  it("a result X publishes (under its own user) for an unenrolled worker's execution is dropped; the worker's own result applies", async () => {
    const plain = (await h.peer('w-plain', ['plain'])).heartbeat();
    const task = await h.task('plain_task', { tags: ['plain'], block: 'parallel' });
    const id = await h.instance(task, { maxAttempts: 1 });
    const [item] = await plain.waitDispatches(1);
    await plain.ackApplied([item as DispatchItem]);
    const before = await unattributed('result');
    await x.result([item as DispatchItem], 'FAILED', 'w-plain');
    await x.ack([item as DispatchItem], 'w-plain');
    await waitForValue(() => unattributed('result'), (n) => n >= before + 1, 'the foreign result counted');
    expect((await h.row(id)).state).toBe('RUNNING');
    await plain.result([item as DispatchItem], 'SUCCESS');
    await h.waitState(id, 'SUCCESS');
  });
});

async function waitForValue<T>(read: () => Promise<T>, ok: (value: T) => boolean, description: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${description} (last ${String(value)})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
