/**
 * Output that travels in results (result-output.ts, real RabbitMQ and MySQL), stored only when
 * the result comes from the worker that ran the execution, never from a relayed report:
 * - #24: a short attempt's output (`output`), when the dispatch said the broker stores it there
 *   (`outputInResult`): its chunks and end in the result's transaction, readable byte for byte,
 *   sealed, compressed like `log` chunks;
 * - DESIGN §11 "jobs that print nothing cost nothing extra": a result that says `printedNothing`
 *   seals the (empty) output, so the log reads complete and empty.
 */
import type { RowDataPacket } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeMessage, MESSAGE_VERSION, type DispatchItem, type ResultOutput } from '@ax/core';
import { logViewState, readLogLayout, readLogPage } from '@ax/store';
import { waitFor } from '@ax/testing';
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

const b64 = (text: string): string => Buffer.from(text).toString('base64');
const LONG_LINE = `${'row 42 copied to the archive\n'.repeat(40)}`; // 1,160 bytes that deflate well

function outputOf(stdout: string, stderr: string): ResultOutput {
  const chunks: ResultOutput['chunks'] = [
    { stream: 'stdout', offset: 0, allOffset: 0, data: b64(stdout) },
    { stream: 'stderr', offset: 0, allOffset: Buffer.byteLength(stdout), data: b64(stderr) },
  ];
  return {
    chunks: chunks.filter((c) => c.data !== ''),
    stdoutBytes: Buffer.byteLength(stdout),
    stderrBytes: Buffer.byteLength(stderr),
    truncated: false,
  };
}

async function chunkRows(executionId: string): Promise<Array<{ stream: string; codec: string }>> {
  const [rows] = await h.db.pool.query<RowDataPacket[]>('SELECT stream, codec FROM job_log_chunk WHERE execution_id = ? ORDER BY all_offset', [executionId]);
  return rows.map((r) => ({ stream: String(r.stream), codec: String(r.codec) }));
}

async function expectStored(executionId: string, stdout: string, stderr: string): Promise<void> {
  const all = await readLogPage(h.db.pool, executionId, 'all', 0, 1_048_576);
  expect(all.data.toString()).toBe(stdout + stderr);
  expect((await readLogPage(h.db.pool, executionId, 'stderr', 0, 1_048_576)).data.toString()).toBe(stderr);
  const state = logViewState(await readLogLayout(h.db.pool, executionId), 'all');
  expect(state).toMatchObject({ stored: true, sealed: true, size: Buffer.byteLength(stdout + stderr), truncated: false });
}

describe('output carried by results', () => {
  it('dispatches say the broker stores output from results (outputInResult)', async () => {
    const r = await running('inline_flag', 'w-inline-flag');
    expect(r.item.outputInResult).toBe(true);
    await r.peer.result([r.item], 'SUCCESS');
    await h.waitState(r.id, 'SUCCESS');
  });

  it('is stored with the result, sealed and readable byte for byte: SUCCESS (the batched path) and FAILED (one by one) alike', async () => {
    const ok = await running('inline_ok', 'w-inline-ok');
    await ok.peer.result([ok.item], 'SUCCESS', { output: outputOf(LONG_LINE, 'warn: slow\n') });
    await h.waitState(ok.id, 'SUCCESS');
    await expectStored(ok.item.executionId, LONG_LINE, 'warn: slow\n');
    // Compressed as a `log` chunk would be: the long one deflated, the short one raw.
    expect(await chunkRows(ok.item.executionId)).toEqual([
      { stream: 'stdout', codec: 'deflate' },
      { stream: 'stderr', codec: 'raw' },
    ]);

    const failed = await running('inline_failed', 'w-inline-failed');
    await failed.peer.result([failed.item], 'FAILED', { output: outputOf('GET http://x/job\n', '500 Internal Server Error\n') });
    await h.waitState(failed.id, 'FAILED');
    await expectStored(failed.item.executionId, 'GET http://x/job\n', '500 Internal Server Error\n');
  });

  it('a result sent twice (a redelivery) changes nothing', async () => {
    const r = await running('inline_twice', 'w-inline-twice');
    const output = outputOf('once\n', '');
    await r.peer.result([r.item], 'SUCCESS', { output });
    await h.waitState(r.id, 'SUCCESS');
    const before = await chunkRows(r.item.executionId);
    await r.peer.result([r.item], 'SUCCESS', { output });
    // The redelivery is applied (a duplicate result) before a later result on the same queue.
    const next = await running('inline_twice_next', 'w-inline-twice-next');
    await next.peer.result([next.item], 'SUCCESS');
    await h.waitState(next.id, 'SUCCESS');
    expect(await chunkRows(r.item.executionId)).toEqual(before);
    await expectStored(r.item.executionId, 'once\n', '');
  });

  it("another worker cannot write an execution's output in a result, nor can a relayed report", async () => {
    const r = await running('inline_forged', 'w-inline-owner');
    const send = (body: Record<string, unknown>): Promise<void> => h.peerBus.publish(h.peerBus.topology.eventsExchange, 'reply', encodeMessage(body as never));
    const forged = { executionId: r.item.executionId, instanceId: r.item.instanceId, outcome: 'SUCCESS', endedAt: new Date().toISOString(), output: outputOf('forged\n', 'forged\n') };
    await send({ v: MESSAGE_VERSION, kind: 'result', workerId: 'w-inline-intruder', items: [forged] });
    await send({ v: MESSAGE_VERSION, kind: 'result', workerId: 'w-inline-owner', origin: 'report', items: [forged] });
    // The owner's own result is applied after both: only its output is there. (A forged result
    // may already have ended the instance: wait for the owner's output, not for the state.)
    await r.peer.result([r.item], 'SUCCESS', { output: outputOf('mine\n', '') });
    await waitFor(async () => logViewState(await readLogLayout(h.db.pool, r.item.executionId), 'all').sealed, { description: "the owner's output sealed" });
    await expectStored(r.item.executionId, 'mine\n', '');
  });
});

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
