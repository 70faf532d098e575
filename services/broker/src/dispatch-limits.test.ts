/**
 * Two limits of the broker that had no test (#47): the global dispatch rate (`AX_DISPATCH_RATE`,
 * a token bucket in Redis, rate-limit.ts) and the cap on automatic re-dispatches after lost
 * workers (`AX_MAX_LOST_REDISPATCHES`, timers.ts). A real broker engine on its own MariaDB
 * database, Redis namespace and RabbitMQ namespace, with a scripted worker; each test fails
 * when its limit is taken away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setDispatchPaused } from '@ax/store';
import { waitFor } from '@ax/testing';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

/** AX_DISPATCH_RATE of the harness: dispatches per second, burst one second's worth. */
const RATE = 4;

let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness({ dispatchRatePerSecond: RATE, maxLostRedispatches: 1 });
});

afterAll(async () => {
  await h?.close();
});

describe('AX_DISPATCH_RATE', () => {
  it('holds dispatching to the rate: never more than the burst plus rate × elapsed, though slots are free for all', async () => {
    const task = await h.task('rate_task', { tags: ['rate'], block: 'parallel' });
    const peer = await h.peer('w-rate', ['rate'], 50);
    const n = 20;
    // All due at once: made while dispatch is paused, then released together.
    await setDispatchPaused(h.db.pool, true);
    for (let i = 0; i < n; i++) await h.instance(task, { quiet: true });
    // The bucket holds at most RATE tokens at any moment: from any start, at most RATE plus
    // RATE a second can go out. Started before the release, so no dispatch is missed.
    const start = performance.now();
    await setDispatchPaused(h.db.pool, false);
    await h.redis.redis.publish(h.keys.channels.instancesReady, '{}');
    // Sampled as the dispatches arrive: (seconds since the start, how many so far).
    const samples: Array<[number, number]> = [];
    await waitFor(
      () => {
        const count = peer.dispatches.length;
        samples.push([(performance.now() - start) / 1000, count]);
        return count >= n;
      },
      { description: `${n} dispatches`, timeoutMs: 30_000, intervalMs: 20 },
    );
    // (+1 for a sample read a moment after its time was taken)
    for (const [seconds, count] of samples) expect(count, `${count} dispatched ${seconds.toFixed(2)} s after the start`).toBeLessThanOrEqual(RATE + Math.ceil(RATE * seconds) + 1);
    // Unlimited, all 20 go out in the first rounds; at 4/s the last needs about (20 - 4) / 4 = 4 s.
    expect(samples.at(-1)?.[0]).toBeGreaterThan((n - RATE) / RATE - 1.5);
    expect(new Set(peer.dispatches.map((d) => d.instanceId)).size).toBe(n);
    await peer.stop();
  }, 60_000);
});

describe('AX_MAX_LOST_REDISPATCHES', () => {
  it('re-dispatches a last attempt lost with its worker up to the cap, then fails it LOST_WORKER', async () => {
    // One attempt (retry.max 0): each loss re-dispatches the same attempt while under the cap (1).
    const task = await h.task('lost_cap', { tags: ['lostcap'], retry: { max: 0, backoffSeconds: 0, jitterSeconds: 0 } });
    const peer = await h.peer('w-lostcap', ['lostcap']);
    const id = await h.instance(task);

    const die = async (dispatches: number): Promise<void> => {
      const items = await peer.waitDispatches(dispatches, 20_000);
      await peer.ack(items.slice(dispatches - 1));
      await h.waitState(id, 'RUNNING');
      // The worker "dies": its registry entry no longer lists the execution (R14).
      peer.running.clear();
      await peer.register();
    };
    await die(1);
    await waitFor(async () => Number((await h.row(id)).lost_count) === 1, { description: 'the first loss', timeoutMs: 15_000 });
    await die(2); // re-dispatched once: lost_count 1 < the cap 1 held it back no further
    const failed = await h.waitState(id, 'FAILED', 15_000);
    expect(failed.reason).toBe('LOST_WORKER');
    expect(failed.attempt).toBe(1);
    expect(Number(failed.lost_count)).toBe(2);
    // Past the cap nothing is dispatched again.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(peer.dispatches.filter((d) => d.instanceId === id)).toHaveLength(2);
    const events = await h.events(id);
    expect(events.filter((e) => e === 'LOST_WORKER')).toHaveLength(2);
    expect(events.filter((e) => e === 'DISPATCHED')).toHaveLength(2);
    await peer.stop();
  }, 60_000);
});
