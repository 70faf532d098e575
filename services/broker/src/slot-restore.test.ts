/**
 * R9/R14: a slot reservation that Redis lost while its job runs (an outage, a Sentinel failover
 * that dropped recent writes) comes back at the next lease renewal, because the worker's registry
 * still lists the execution. Until 2026-12-06 a renewal only extended reservations that still
 * existed (`ZADD XX`): the broker counted the worker short until the job ended and dispatched
 * beyond its slots.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrokerHarness, TEST_TIMINGS, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness();
});

afterAll(async () => {
  await h?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a reservation lost while its job runs', () => {
  it('R9 comes back at the lease renewal, and the worker gets nothing beyond its slots', async () => {
    const task = await h.task('slot_restore', { tags: ['restore'] });
    // One slot; the registry entry lives one lease, as a real worker's does (TTL 15 s, every 5 s).
    const peer = await h.peer('w-restore', ['restore'], 1);
    peer.heartbeat(200, TEST_TIMINGS.leaseTtlMs);
    const first = await h.instance(task);
    const [item] = await peer.waitDispatches(1);
    await peer.ack([item!]);
    await h.waitState(first, 'RUNNING');
    const slotsKey = h.keys.slots(peer.workerId);
    expect(await h.redis.redis.zrange(slotsKey, 0, -1)).toEqual([item!.executionId]);

    // Redis loses the ledger; the job runs on.
    await h.redis.redis.del(slotsKey);
    // Within a lease period (1.5 s here) plus the timers' poll the renewal writes it again.
    const deadline = Date.now() + 4 * (TEST_TIMINGS.leaseTtlMs ?? 1_500);
    while ((await h.redis.redis.zcard(slotsKey)) === 0 && Date.now() < deadline) await sleep(50);
    expect(await h.redis.redis.zrange(slotsKey, 0, -1)).toEqual([item!.executionId]);

    // The slot is counted again: a second instance waits for the first to end.
    const second = await h.instance(task);
    await sleep(1_000);
    expect(peer.dispatches).toHaveLength(1);
    expect((await h.row(second)).state).toBe('PENDING');
    await peer.result([item!], 'SUCCESS');
    await h.waitState(first, 'SUCCESS');
    const [, next] = await peer.waitDispatches(2);
    expect(next!.instanceId).toBe(second);
    expect(await h.redis.redis.zrange(slotsKey, 0, -1)).toEqual([next!.executionId]);
  });
});
