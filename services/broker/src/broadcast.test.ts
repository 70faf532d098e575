import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@ax/testing';
import type { RowDataPacket } from 'mysql2';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness({ maxReroutes: 1 });
});

afterAll(async () => {
  await h?.close();
});

async function executions(instanceId: string): Promise<RowDataPacket[]> {
  const [r] = await h.db.pool.query<RowDataPacket[]>(
    'SELECT execution_id, worker_id, shard_index, shard_total, attempt, state FROM task_execution WHERE instance_id = ? ORDER BY id',
    [instanceId],
  );
  return r;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('broadcast (R21)', () => {
  it('R21 three matching workers each get one shard; the instance succeeds only when every shard succeeded', async () => {
    const task = await h.task('r21_all', { tags: ['r21a'], route: 'broadcast' });
    const peers = [await h.peer('w-r21a-1', ['r21a']), await h.peer('w-r21a-2', ['r21a']), await h.peer('w-r21a-3', ['r21a'])];
    await h.peer('w-r21a-other', ['elsewhere']);
    const id = await h.instance(task);
    const items = await Promise.all(peers.map(async (p) => (await p.waitDispatches(1))[0]!));
    expect(items.map((i) => [i.instanceId, i.shardIndex, i.shardTotal])).toEqual([
      [id, 0, 3],
      [id, 1, 3],
      [id, 2, 3],
    ]);
    expect(new Set(items.map((i) => i.executionId)).size).toBe(3);
    expect((await h.row(id)).shard_total).toBe(3);
    for (const [i, p] of peers.entries()) await p.ack([items[i]!]);
    await h.waitState(id, 'RUNNING');
    await peers[0]!.result([items[0]!], 'SUCCESS');
    await peers[1]!.result([items[1]!], 'SUCCESS');
    await waitFor(async () => (await executions(id)).filter((e) => e.state === 'SUCCESS').length === 2, { description: 'two shards succeeded' });
    await sleep(300);
    expect((await h.row(id)).state).toBe('RUNNING');
    await peers[2]!.result([items[2]!], 'SUCCESS');
    await h.waitState(id, 'SUCCESS');
    expect((await executions(id)).map((e): unknown[] => [e.worker_id, e.shard_index, e.shard_total, e.state])).toEqual([
      ['w-r21a-1', 0, 3, 'SUCCESS'],
      ['w-r21a-2', 1, 3, 'SUCCESS'],
      ['w-r21a-3', 2, 3, 'SUCCESS'],
    ]);
    for (const p of peers) await p.stop();
  });

  it('R21 a failed shard is retried alone and the instance succeeds when the retry does', async () => {
    const task = await h.task('r21_retry', { tags: ['r21r'], route: 'broadcast', retry: { max: 1, backoffSeconds: 1, factor: 1, jitterSeconds: 0 } });
    const a = await h.peer('w-r21r-a', ['r21r']);
    const b = await h.peer('w-r21r-b', ['r21r']);
    const id = await h.instance(task);
    const [da] = await a.waitDispatches(1);
    const [db] = await b.waitDispatches(1);
    await a.ack([da!]);
    await b.ack([db!]);
    // The instance is RUNNING (asserted below) once an ACK is applied; results sent right after
    // their ACKs may overtake them (R16), so the ACKs are waited for first.
    await waitFor(async () => (await executions(id)).every((e) => e.state === 'RUNNING'), { description: 'both shards ACKed' });
    await a.result([da!], 'FAILED', { error: 'boom' });
    await b.result([db!], 'SUCCESS');
    const [, retry] = await a.waitDispatches(2, 10_000);
    expect(retry).toMatchObject({ instanceId: id, shardIndex: 0, shardTotal: 2, attempt: 2 });
    expect(retry!.executionId).not.toBe(da!.executionId);
    expect(b.dispatches).toHaveLength(1); // the succeeded shard is not re-dispatched
    expect((await h.row(id)).state).toBe('RUNNING');
    await a.ack([retry!]);
    await a.result([retry!], 'SUCCESS');
    const done = await h.waitState(id, 'SUCCESS');
    expect(done.attempt).toBe(1);
    expect((await executions(id)).map((e): unknown[] => [e.worker_id, e.shard_index, e.attempt, e.state])).toEqual([
      ['w-r21r-a', 0, 1, 'FAILED'],
      ['w-r21r-b', 1, 1, 'SUCCESS'],
      ['w-r21r-a', 0, 2, 'SUCCESS'],
    ]);
    expect(await h.events(id)).toContain('RETRY_SCHEDULED');
    await a.stop();
    await b.stop();
  });

  it('R21 a shard failing on its last attempt fails the instance and cancels the other shards', async () => {
    const task = await h.task('r21_final', { tags: ['r21f'], route: 'broadcast', retry: { max: 0 } });
    const a = await h.peer('w-r21f-a', ['r21f']);
    const b = await h.peer('w-r21f-b', ['r21f']);
    const id = await h.instance(task);
    const [da] = await a.waitDispatches(1);
    const [db] = await b.waitDispatches(1);
    await a.ack([da!]);
    await b.ack([db!]);
    await a.result([da!], 'FAILED', { error: 'boom' });
    expect((await h.waitState(id, 'FAILED')).reason).toBe('JOB_FAILED');
    await waitFor(() => b.cancels.some((c) => c.executionIds.includes(db!.executionId)), { description: 'cancel of the other shard' });
    await a.stop();
    await b.stop();
  });

  it('#23 the shard of a frozen worker (no heartbeat since the dispatch) is not re-routed behind its back: it moves once the worker\'s lease runs out', async () => {
    const task = await h.task('r23_shard_frozen', { tags: ['r23x'], route: 'broadcast' });
    const a = (await h.peer('w-r23x-a', ['r23x'])).heartbeat();
    const frozen = await h.peer('w-r23x-b', ['r23x']);
    // Its last heartbeat: the entry lapses 5 s later, well after the check 1.8 s past c's start
    // below (with 3 s a slow dispatch on a loaded machine let it lapse before the check).
    await frozen.register(5_000);
    const id = await h.instance(task);
    const [da] = await a.waitDispatches(1);
    const [db] = await frozen.waitDispatches(1);
    await a.ack([da!]);
    await a.result([da!], 'SUCCESS');
    const c = (await h.peer('w-r23x-c', ['r23x'])).heartbeat();
    await sleep(1_800); // past ack timeout + grace (1.5 s), the entry not yet expired
    expect(c.dispatches).toHaveLength(0);
    const [dc] = await c.waitDispatches(1, 15_000);
    expect(dc).toMatchObject({ instanceId: id, shardIndex: db!.shardIndex });
    await c.ack([dc!]);
    await c.result([dc!], 'SUCCESS');
    await h.waitState(id, 'SUCCESS');
    await a.stop();
    await frozen.stop();
    await c.stop();
  });

  it('R21 a silent shard is re-routed alone to another worker; a late result of the superseded execution is fenced', async () => {
    const task = await h.task('r21_fence', { tags: ['r21x'], route: 'broadcast' });
    const a = await h.peer('w-r21x-a', ['r21x']);
    const b = (await h.peer('w-r21x-b', ['r21x'])).heartbeat(); // alive, and it does not list its shard
    const id = await h.instance(task);
    const [da] = await a.waitDispatches(1);
    const [db] = await b.waitDispatches(1);
    await a.ack([da!]);
    await a.result([da!], 'SUCCESS');
    // b stays silent; c appears after the claim and takes b's shard alone.
    const c = await h.peer('w-r21x-c', ['r21x']);
    const [dc] = await c.waitDispatches(1, 10_000);
    expect(dc).toMatchObject({ instanceId: id, shardIndex: db!.shardIndex, shardTotal: 2 });
    expect(a.dispatches).toHaveLength(1);
    expect(await h.events(id)).toContain('ACK_TIMEOUT');
    // The superseded execution of that shard reports SUCCESS late: recorded, fenced, nothing changes.
    await b.result([db!], 'SUCCESS');
    await waitFor(async () => (await h.events(id)).includes('FENCED'), { description: 'FENCED event' });
    expect((await h.row(id)).state).not.toBe('SUCCESS');
    await c.ack([dc!]);
    await c.result([dc!], 'SUCCESS');
    await h.waitState(id, 'SUCCESS');
    await a.stop();
    await b.stop();
    await c.stop();
  });

  it('R21 a shard whose worker is lost is re-dispatched alone to a worker holding no other shard', async () => {
    const task = await h.task('r21_lost', { tags: ['r21l'], route: 'broadcast', retry: { max: 1, backoffSeconds: 0, jitterSeconds: 0 } });
    const a = await h.peer('w-r21l-a', ['r21l']);
    const b = await h.peer('w-r21l-b', ['r21l']);
    const id = await h.instance(task);
    const [da] = await a.waitDispatches(1);
    const [db] = await b.waitDispatches(1);
    await a.ack([da!]);
    await b.ack([db!]);
    await h.waitState(id, 'RUNNING');
    const c = await h.peer('w-r21l-c', ['r21l']);
    await b.stop(); // b vanishes from the registry while running its shard
    const [dc] = await c.waitDispatches(1, 15_000);
    expect(dc).toMatchObject({ instanceId: id, shardIndex: db!.shardIndex, attempt: 2 });
    expect(a.dispatches).toHaveLength(1);
    expect(await h.events(id)).toContain('LOST_WORKER');
    await c.ack([dc!]);
    await c.result([dc!], 'SUCCESS');
    await a.result([da!], 'SUCCESS');
    await h.waitState(id, 'SUCCESS');
    await a.stop();
    await c.stop();
  });

  it('R21 a broadcast waits while some matching worker is full, then goes to every matching worker', async () => {
    const load = await h.task('r21_busy_load', { tags: ['r21b'] });
    const task = await h.task('r21_busy', { tags: ['r21b'], route: 'broadcast' });
    const a = await h.peer('w-r21b-a', ['r21b'], 1);
    const busy = await h.instance(load);
    const [dl] = await a.waitDispatches(1);
    expect(dl?.instanceId).toBe(busy);
    const b = await h.peer('w-r21b-b', ['r21b']);
    const id = await h.instance(task);
    await sleep(800);
    expect((await h.row(id)).state).toBe('PENDING');
    expect(b.dispatches).toHaveLength(0);
    await a.ack([dl!]);
    await a.result([dl!], 'SUCCESS');
    const [, da] = await a.waitDispatches(2);
    const [db] = await b.waitDispatches(1);
    expect([da?.shardIndex, db?.shardIndex, da?.shardTotal]).toEqual([0, 1, 2]);
    await a.stop();
    await b.stop();
  });
});
