/**
 * DESIGN §11 "jobs that print nothing cost nothing extra": a worker sends no `log` message for
 * an attempt that printed nothing, its result says `printedNothing`, and the broker stores the
 * (empty) end of that execution's output with the result — so the log reads complete and
 * empty — only when the result comes from the worker that ran it (real RabbitMQ and MySQL).
 */
import type { RowDataPacket } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeMessage, MESSAGE_VERSION, type DispatchItem } from '@ax/core';
import { logViewState, readLogLayout } from '@ax/store';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness();
});

afterAll(async () => {
  await h?.close();
});

async function endRow(executionId: string): Promise<{ stdout_bytes: number; stderr_bytes: number; truncated: number } | undefined> {
  const [rows] = await h.db.pool.query<RowDataPacket[]>('SELECT stdout_bytes, stderr_bytes, truncated FROM job_log_end WHERE execution_id = ?', [executionId]);
  const r = rows[0];
  return r === undefined ? undefined : { stdout_bytes: Number(r.stdout_bytes), stderr_bytes: Number(r.stderr_bytes), truncated: Number(r.truncated) };
}

/** One dispatched, ACKed attempt of a new instance of `task` on the peer. */
async function running(taskName: string, workerId: string): Promise<{ id: string; item: DispatchItem; peer: Awaited<ReturnType<BrokerHarness['peer']>> }> {
  const task = await h.task(taskName, { tags: [taskName] });
  const peer = await h.peer(workerId, [taskName]);
  const id = await h.instance(task);
  const [item] = await peer.waitDispatches(1);
  await peer.ack([item!]);
  await h.waitState(id, 'RUNNING');
  return { id, item: item!, peer };
}

describe('the output of an attempt that printed nothing', () => {
  it('is sealed empty with its result: SUCCESS (the batched path) and FAILED (one by one) alike', async () => {
    const ok = await running('silent_ok', 'w-silent-ok');
    await ok.peer.result([ok.item], 'SUCCESS', { printedNothing: true, outputTail: undefined });
    await h.waitState(ok.id, 'SUCCESS');
    expect(await endRow(ok.item.executionId)).toMatchObject({ stdout_bytes: 0, stderr_bytes: 0, truncated: 0 });
    const state = logViewState(await readLogLayout(h.db.pool, ok.item.executionId), 'all');
    expect(state).toMatchObject({ stored: true, sealed: true, size: 0, truncated: false });

    const failed = await running('silent_failed', 'w-silent-failed');
    await failed.peer.result([failed.item], 'FAILED', { printedNothing: true, exitCode: 1, outputTail: undefined });
    await h.waitState(failed.id, 'FAILED');
    expect(await endRow(failed.item.executionId)).toMatchObject({ stdout_bytes: 0, stderr_bytes: 0, truncated: 0 });
  });

  it('a result without the flag stores no end (the output is still on its way on <ns>.logs)', async () => {
    const r = await running('silent_not', 'w-silent-not');
    await r.peer.result([r.item], 'SUCCESS');
    await h.waitState(r.id, 'SUCCESS');
    expect(await endRow(r.item.executionId)).toBeUndefined();
  });

  it("another worker cannot seal an execution's output, nor can a relayed report", async () => {
    const r = await running('silent_forged', 'w-silent-owner');
    const send = (body: Record<string, unknown>): Promise<void> => h.peerBus.publish(h.peerBus.topology.eventsExchange, 'reply', encodeMessage(body as never));
    const item = { executionId: r.item.executionId, instanceId: r.item.instanceId, outcome: 'SUCCESS', endedAt: new Date().toISOString(), printedNothing: true };
    await send({ v: MESSAGE_VERSION, kind: 'result', workerId: 'w-silent-intruder', items: [item] });
    await send({ v: MESSAGE_VERSION, kind: 'result', workerId: 'w-silent-owner', origin: 'report', items: [item] });
    // Then the owner's own result (without the flag: it printed) is applied after both.
    await r.peer.result([r.item], 'SUCCESS');
    await h.waitState(r.id, 'SUCCESS');
    expect(await endRow(r.item.executionId)).toBeUndefined();
  });
});
