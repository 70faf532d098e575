/**
 * An idle broker's dispatch poll (every `AX_DISPATCH_POLL_MS`, and on every wake-up) first reads
 * whether anything is due, and only then takes the turn and opens a claim transaction: with
 * nothing due it costs one statement, not five plus the Redis turn.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StorePool } from '@ax/store';
import { dispatchOnce } from './dispatch.js';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness();
  await h.broker.stop(); // its own loop would race the calls below for the dispatch turn
});

afterAll(async () => {
  await h?.close();
});

/** The harness pool, counting the statements and the transactions' connections asked of it. */
function countingPool(pool: StorePool): { pool: StorePool; counts: { query: number; getConnection: number } } {
  const counts = { query: 0, getConnection: 0 };
  const counted = new Proxy(pool, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (prop === 'query' || prop === 'getConnection') {
        return (...args: unknown[]) => {
          counts[prop] += 1;
          return fn.apply(target, args);
        };
      }
      return fn.bind(target);
    },
  });
  return { pool: counted, counts };
}

describe('the dispatch poll of an idle broker', () => {
  it('reads once and opens no transaction when nothing is due; claims as before when something is', async () => {
    const { pool, counts } = countingPool(h.db.pool);
    const ctx = { ...h.broker.context, pool };
    expect(await dispatchOnce(ctx)).toMatchObject({ claimed: 0, dispatched: 0 });
    expect(counts).toEqual({ query: 1, getConnection: 0 });
    expect(await h.redis.redis.exists(h.keys.lock('dispatch'))).toBe(0); // the turn was never taken

    const id = await h.instance(await h.task('idle_probe'));
    counts.query = 0;
    // No worker is registered: the instance is claimed and stays PENDING with NO_WORKER (R11).
    expect(await dispatchOnce(ctx)).toMatchObject({ claimed: 1, waitingForWorker: 1 });
    expect(counts.getConnection).toBe(1);
    expect((await h.row(id)).state).toBe('PENDING');
  });
});
