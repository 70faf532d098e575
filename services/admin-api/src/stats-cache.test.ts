/**
 * The dashboard figures' cache: fresh values answered as they are, one computation for every
 * concurrent caller, a stale value answered while one refresh runs, failures not kept, and each
 * team set its own key (a team's token never gets figures computed for another's).
 */
import { describe, expect, it } from 'vitest';
import { createStatsCache, statsKey } from './stats-cache.js';

/** A computation the test ends by hand, counting its calls. */
function gate<T>() {
  let calls = 0;
  const pending: Array<{ resolve: (v: T) => void; reject: (e: unknown) => void }> = [];
  const compute = (): Promise<T> => {
    calls += 1;
    return new Promise<T>((resolve, reject) => pending.push({ resolve, reject }));
  };
  return { compute, calls: () => calls, resolve: (v: T) => pending.shift()?.resolve(v), reject: (e: unknown) => pending.shift()?.reject(e) };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A cache of maxAgeMs 5 s, staleMs 60 s on `clock`, holding `value` for key `k` computed at clock.now. */
async function primed(clock: { now: number }, value: number) {
  const cache = createStatsCache({ maxAgeMs: 5_000, staleMs: 60_000, now: () => clock.now });
  const g = gate<number>();
  const first = cache.get('k', g.compute);
  g.resolve(value);
  await first;
  return { cache, g };
}

describe('createStatsCache', () => {
  it('computes once for concurrent callers, then answers from memory until maxAgeMs', async () => {
    let now = 1_000;
    const cache = createStatsCache({ maxAgeMs: 5_000, now: () => now });
    const g = gate<number>();
    const a = cache.get('k', g.compute);
    const b = cache.get('k', g.compute);
    expect(g.calls()).toBe(1);
    g.resolve(7);
    expect(await Promise.all([a, b])).toEqual([7, 7]);
    now += 4_999;
    expect(await cache.get('k', g.compute)).toBe(7);
    expect(g.calls()).toBe(1);
  });

  it('answers a stale value at once while one refresh runs, and the refreshed one after it', async () => {
    const clock = { now: 0 };
    const { cache, g } = await primed(clock, 1);
    clock.now = 6_000;
    expect(await cache.get('k', g.compute)).toBe(1);
    expect(await cache.get('k', g.compute)).toBe(1);
    expect(g.calls()).toBe(2); // one refresh for both
    g.resolve(2);
    await tick();
    expect(await cache.get('k', g.compute)).toBe(2);
  });

  it('waits for a new value once the old one is older than staleMs', async () => {
    const clock = { now: 0 };
    const { cache, g } = await primed(clock, 1);
    clock.now = 60_000;
    const later = cache.get('k', g.compute);
    g.resolve(2);
    expect(await later).toBe(2);
  });

  it('gives a failure to every waiting caller and keeps nothing of it; a failed refresh keeps the stale value', async () => {
    let now = 0;
    const errors: unknown[] = [];
    const cache = createStatsCache({ maxAgeMs: 5_000, now: () => now, onRefreshError: (e) => errors.push(e) });
    const g = gate<number>();
    const a = cache.get('k', g.compute);
    const b = cache.get('k', g.compute);
    g.reject(new Error('MySQL went away'));
    await expect(a).rejects.toThrow('MySQL went away');
    await expect(b).rejects.toThrow('MySQL went away');
    const retry = cache.get('k', g.compute);
    expect(g.calls()).toBe(2);
    g.resolve(3);
    expect(await retry).toBe(3);
    now = 8_000; // older than maxAgeMs, younger than staleMs (2 × maxAgeMs by default)
    expect(await cache.get('k', g.compute)).toBe(3);
    g.reject(new Error('still away'));
    await tick();
    expect(errors).toHaveLength(1);
    expect(await cache.get('k', g.compute)).toBe(3); // stale, and a new refresh started
    expect(g.calls()).toBe(4);
  });

  it('by default answers stale values only up to twice maxAgeMs: a dashboard asking every 30 s gets figures computed for it', async () => {
    let now = 0;
    const cache = createStatsCache({ maxAgeMs: 5_000, now: () => now });
    let calls = 0;
    const compute = async () => ++calls;
    expect(await cache.get('k', compute)).toBe(1);
    now = 30_000;
    expect(await cache.get('k', compute)).toBe(2);
  });

  it('maxAgeMs 0 computes every call', async () => {
    const cache = createStatsCache({ maxAgeMs: 0, now: () => 0 });
    let calls = 0;
    const compute = async () => ++calls;
    expect([await cache.get('k', compute), await cache.get('k', compute)]).toEqual([1, 2]);
  });

  it('keeps at most maxEntries keys, dropping the oldest written', async () => {
    const cache = createStatsCache({ maxAgeMs: 5_000, maxEntries: 2, now: () => 0 });
    let calls = 0;
    const compute = async () => ++calls;
    await cache.get('a', compute);
    await cache.get('b', compute);
    await cache.get('c', compute);
    expect(await cache.get('b', compute)).toBe(2);
    expect(await cache.get('a', compute)).toBe(4); // dropped, computed again
  });
});

describe('statsKey', () => {
  it('names the day and the team set, in any order; every team is its own key', () => {
    expect(statsKey('today', '2026-12-03', ['b', 'a'])).toBe(statsKey('today', '2026-12-03', ['a', 'b']));
    expect(statsKey('today', '2026-12-03', ['a'])).not.toBe(statsKey('today', '2026-12-03', null));
    expect(statsKey('today', '2026-12-03', null)).not.toBe(statsKey('hourly', '2026-12-03', null));
    expect(statsKey('today', '2026-12-03', [])).not.toBe(statsKey('today', '2026-12-03', null));
  });
});
