import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setDispatchPaused } from '@ax/store';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness();
});

afterAll(async () => {
  await h?.close();
});

async function alerts(kind: string): Promise<RowDataPacket[]> {
  const [rows] = await h.db.pool.query<RowDataPacket[]>('SELECT * FROM alert_log WHERE kind = ?', [kind]);
  return rows;
}

describe('broker dispatch', () => {
  it('R9/R10 dispatches due instances batched per worker and never beyond its free slots', async () => {
    const task = await h.task('r9_task', { tags: ['r9'], block: 'parallel' });
    const peer = await h.peer('w-r9', ['r9'], 3);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await h.instance(task));
    const first = await peer.waitDispatches(3);
    // Give the loop a few more rounds: it must not exceed the 3 slots.
    await new Promise((r) => setTimeout(r, 600));
    expect(peer.dispatches).toHaveLength(3);
    const states = await Promise.all(ids.map(async (id) => (await h.row(id)).state));
    expect(states.filter((s) => s === 'DISPATCHED')).toHaveLength(3);
    expect(states.filter((s) => s === 'PENDING')).toHaveLength(2);
    // R10: several instances may travel in one message; each got its own execution.
    expect(new Set(first.map((d) => d.executionId)).size).toBe(3);
    const [msgs] = await h.db.pool.query<RowDataPacket[]>(
      `SELECT COUNT(*) AS n FROM task_execution WHERE worker_id = 'w-r9'`,
    );
    expect(Number(msgs[0]?.n)).toBe(3);
    // A result frees a slot (reservation released) and the next instance goes out. Each result
    // follows its applied ACK: the ACKED events asserted below are not promised otherwise (R16).
    await peer.ackApplied(first);
    await peer.result(first.slice(0, 1), 'SUCCESS');
    await peer.waitDispatches(4);
    await peer.result(first.slice(1), 'SUCCESS');
    await peer.waitDispatches(5);
    await peer.ackApplied(peer.dispatches.slice(3));
    await peer.result(peer.dispatches.slice(3), 'SUCCESS');
    for (const id of ids) await h.waitState(id, 'SUCCESS');
    const events = await h.events(ids[0] as string);
    expect(events).toEqual(['CREATED', 'DISPATCHED', 'ACKED', 'SUCCEEDED']);
  });

  it('R16 a result may overtake its ACK; the late ACK is a no-op', async () => {
    const task = await h.task('r16_overtake', { tags: ['r16a'] });
    const peer = await h.peer('w-r16a', ['r16a']);
    const id = await h.instance(task);
    const [item] = await peer.waitDispatches(1);
    await peer.result([item!], 'SUCCESS');
    await h.waitState(id, 'SUCCESS');
    await peer.ack([item!]);
    await new Promise((r) => setTimeout(r, 300));
    expect((await h.row(id)).state).toBe('SUCCESS');
    expect(await h.events(id)).toEqual(['CREATED', 'DISPATCHED', 'SUCCEEDED']);
    const [exec] = await h.db.pool.query<RowDataPacket[]>('SELECT state, exit_code, output_tail FROM task_execution WHERE execution_id = ?', [item!.executionId]);
    expect(exec[0]).toMatchObject({ state: 'SUCCESS', exit_code: 0, output_tail: 'done\n' });
  });

  it('R4 serial waits for the running instance, discard cancels DISCARDED, cover cancels the running one', async () => {
    const peer = await h.peer('w-r4', ['r4'], 8);
    // serial: the second instance waits while the first runs.
    const serial = await h.task('r4_serial', { tags: ['r4'], block: 'serial' });
    const s1 = await h.instance(serial);
    const s2 = await h.instance(serial);
    const [d1] = await peer.waitDispatches(1);
    await peer.ack([d1!]);
    await h.waitState(s1, 'RUNNING');
    await new Promise((r) => setTimeout(r, 400));
    expect((await h.row(s2)).state).toBe('PENDING');
    await peer.result([d1!], 'SUCCESS');
    const [, d2] = await peer.waitDispatches(2);
    expect(d2?.instanceId).toBe(s2);
    await peer.ack([d2!]);
    await peer.result([d2!], 'SUCCESS');
    await h.waitState(s2, 'SUCCESS');

    // discard: an instance due while another runs is canceled.
    const discard = await h.task('r4_discard', { tags: ['r4'], block: 'discard' });
    const x1 = await h.instance(discard);
    const [, , d3] = await peer.waitDispatches(3);
    expect(d3?.instanceId).toBe(x1);
    await peer.ack([d3!]);
    await h.waitState(x1, 'RUNNING');
    const x2 = await h.instance(discard);
    expect((await h.waitState(x2, 'CANCELED')).reason).toBe('DISCARDED');
    await peer.result([d3!], 'SUCCESS');

    // cover: the running one is canceled (COVERED) and its worker told; the new one runs.
    const cover = await h.task('r4_cover', { tags: ['r4'], block: 'cover' });
    const c1 = await h.instance(cover);
    const [, , , d4] = await peer.waitDispatches(4);
    await peer.ack([d4!]);
    await h.waitState(c1, 'RUNNING');
    const c2 = await h.instance(cover);
    expect((await h.waitState(c1, 'CANCELED')).reason).toBe('COVERED');
    const [, , , , d5] = await peer.waitDispatches(5);
    expect(d5?.instanceId).toBe(c2);
    await waitForCancel(peer.cancels, d4!.executionId);
    expect(await h.events(c1)).toContain('CANCEL_REQUESTED');
  });

  it('R5 a scheduled first attempt claimed later than maxLatenessSeconds is canceled TOO_LATE; a manual one is not', async () => {
    const task = await h.task('r5_late', { tags: ['r5'], maxLatenessSeconds: 60, block: 'parallel' });
    const peer = await h.peer('w-r5', ['r5']);
    const old = new Date(Date.now() - 120_000);
    const late = await h.instance(task, { expectedTime: old });
    const manual = await h.instance(task, { expectedTime: new Date(old.getTime() + 1), trigger: 'manual' });
    const onTime = await h.instance(task);
    expect((await h.waitState(late, 'CANCELED')).reason).toBe('TOO_LATE');
    await h.waitState(manual, 'DISPATCHED');
    await h.waitState(onTime, 'DISPATCHED');
    expect(peer.dispatches.map((d) => d.instanceId)).not.toContain(late);
  });

  it('R11 without an eligible worker an instance stays PENDING with one NO_WORKER event, and alerts after the threshold', async () => {
    const task = await h.task('r11_gpu', { tags: ['gpu-none'] });
    const id = await h.instance(task);
    const alert = await waitForRows(() => alerts('NO_WORKER'), 'NO_WORKER alert', 8_000);
    expect(alert[0]?.instance_id).toBe(id);
    const row = await h.row(id);
    expect(row.state).toBe('PENDING');
    const events = await h.events(id);
    expect(events.filter((e) => e === 'NO_WORKER')).toHaveLength(1);
    // A worker with the tag appears: it is dispatched.
    const peer = await h.peer('w-gpu', ['gpu-none']);
    await peer.waitDispatches(1);
    await h.waitState(id, 'DISPATCHED');
  });

  it('R20 a rerun batch runs at most its concurrency at once', async () => {
    const task = await h.task('r20_backfill', { tags: ['r20'], block: 'parallel' });
    const peer = await h.peer('w-r20', ['r20'], 8);
    const [batch] = await h.db.pool.query<ResultSetHeader>(
      `INSERT INTO rerun_batch (mode, reason, actor, concurrency, request) VALUES ('backfill', 'test', 'tester', 2, '{}')`,
    );
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await h.instance(task, { trigger: 'rerun', rerunBatchId: batch.insertId }));
    }
    const first = await peer.waitDispatches(2);
    await new Promise((r) => setTimeout(r, 500));
    expect(peer.dispatches).toHaveLength(2);
    await peer.ack(first);
    await peer.result(first, 'SUCCESS');
    await peer.waitDispatches(4);
    await peer.ack(peer.dispatches.slice(2));
    await peer.result(peer.dispatches.slice(2), 'SUCCESS');
    for (const id of ids) await h.waitState(id, 'SUCCESS');
  });

  it('holds all dispatching while the global pause is set', async () => {
    const task = await h.task('paused_task', { tags: ['pause'] });
    const peer = await h.peer('w-pause', ['pause']);
    await setDispatchPaused(h.db.pool, true);
    const id = await h.instance(task);
    await new Promise((r) => setTimeout(r, 500));
    expect((await h.row(id)).state).toBe('PENDING');
    await setDispatchPaused(h.db.pool, false);
    await peer.waitDispatches(1);
  });
});

async function waitForCancel(cancels: ReadonlyArray<{ executionIds: string[]; reason: string }>, executionId: string): Promise<void> {
  const { waitFor } = await import('@ax/testing');
  await waitFor(() => cancels.some((c) => c.executionIds.includes(executionId)), { description: `cancel of ${executionId}` });
}

async function waitForRows(fn: () => Promise<RowDataPacket[]>, description: string, timeoutMs: number): Promise<RowDataPacket[]> {
  const { waitFor } = await import('@ax/testing');
  return waitFor(async () => {
    const rows = await fn();
    return rows.length > 0 ? rows : null;
  }, { description, timeoutMs });
}
