import { describe, expect, it } from 'vitest';
import { loadScore } from './load-score.js';
import { hash53, rankByRendezvous } from './rendezvous-hash.js';
import { routeInstance } from './route.js';
import { broadcastTargets, pickByHash, pickByLoad, pickRoundRobin } from './strategies.js';
import type { WorkerSnapshot } from './worker-snapshot.js';

function worker(id: string, overrides: Partial<WorkerSnapshot> = {}): WorkerSnapshot {
  return { id, tags: [], cores: 4, slots: 16, running: 0, avgDurationMs5m: 0, draining: false, ...overrides };
}

const any = { tags: [] as string[] };

describe('loadScore', () => {
  it('is (running/cores)·0.7 + (avgDurationMs5m/1000)·0.3', () => {
    expect(loadScore({ running: 2, cores: 4, avgDurationMs5m: 1_000 })).toBeCloseTo(0.35 + 0.3);
    expect(loadScore({ running: 0, cores: 8, avgDurationMs5m: 0 })).toBe(0);
    expect(loadScore({ running: 3, cores: 0, avgDurationMs5m: 0 })).toBeCloseTo(2.1);
  });
});

describe('pickByLoad', () => {
  it('picks the lowest score', () => {
    const list = [
      worker('busy', { running: 8, cores: 4 }),
      worker('slow', { avgDurationMs5m: 60_000 }),
      worker('idle-ish', { running: 1, cores: 8, avgDurationMs5m: 200 }),
    ];
    expect(pickByLoad(list, any, () => 0)?.id).toBe('idle-ish');
  });

  it('breaks ties with the injected random, deterministically', () => {
    const list = [worker('c'), worker('a'), worker('b'), worker('loaded', { running: 1 })];
    expect(pickByLoad(list, any, () => 0)?.id).toBe('a');
    expect(pickByLoad(list, any, () => 0.5)?.id).toBe('b');
    expect(pickByLoad(list, any, () => 0.99)?.id).toBe('c');
  });

  it('never picks an ineligible worker, and gives null when none is left', () => {
    const list = [worker('full', { running: 16 }), worker('drain', { draining: true }), worker('ok', { running: 10 })];
    expect(pickByLoad(list, any, () => 0)?.id).toBe('ok');
    expect(pickByLoad(list, { tags: [], exclude: ['ok'] }, () => 0)).toBeNull();
  });
});

describe('pickRoundRobin', () => {
  it('cycles through eligible workers in id order with the returned cursor', () => {
    const list = [worker('c'), worker('a'), worker('b')];
    const picks: string[] = [];
    let cursor = 0;
    for (let i = 0; i < 5; i++) {
      const pick = pickRoundRobin(list, any, cursor);
      if (pick === null) throw new Error('no pick');
      picks.push(pick.worker.id);
      cursor = pick.nextCursor;
    }
    expect(picks).toEqual(['a', 'b', 'c', 'a', 'b']);
  });

  it('wraps any cursor (large, negative, NaN) into range', () => {
    const list = [worker('a'), worker('b')];
    expect(pickRoundRobin(list, any, 7)?.worker.id).toBe('b');
    expect(pickRoundRobin(list, any, -1)?.worker.id).toBe('b');
    expect(pickRoundRobin(list, any, Number.NaN)?.worker.id).toBe('a');
    expect(pickRoundRobin([], any, 0)).toBeNull();
  });
});

describe('pickByHash (rendezvous)', () => {
  const ids = Array.from({ length: 8 }, (_, i) => `w${i}`);
  const keys = Array.from({ length: 400 }, (_, i) => `task_${i}`);
  const assign = (list: WorkerSnapshot[]): Map<string, string> =>
    new Map(keys.map((key) => [key, pickByHash(list, any, key)?.id ?? 'none']));

  it('is stable for the same key and workers, whatever their order', () => {
    const list = ids.map((id) => worker(id));
    expect(pickByHash(list, any, 'k')?.id).toBe(pickByHash([...list].reverse(), any, 'k')?.id);
  });

  it('spreads keys over workers', () => {
    const counts = new Map<string, number>();
    for (const id of assign(ids.map((id) => worker(id))).values()) counts.set(id, (counts.get(id) ?? 0) + 1);
    expect(counts.size).toBe(8);
    for (const n of counts.values()) expect(n).toBeGreaterThan(20);
  });

  it('moves only the keys a joining worker wins, and only the leaving worker’s keys', () => {
    const before = assign(ids.map((id) => worker(id)));
    const joined = assign([...ids, 'w_new'].map((id) => worker(id)));
    for (const key of keys) {
      if (joined.get(key) !== before.get(key)) expect(joined.get(key)).toBe('w_new');
    }
    const left = assign(ids.filter((id) => id !== 'w3').map((id) => worker(id)));
    for (const key of keys) {
      if (before.get(key) !== 'w3') expect(left.get(key)).toBe(before.get(key));
    }
  });

  it('falls back to the next-ranked worker when the favourite is full', () => {
    const list = ids.map((id) => worker(id));
    const ranked = rankByRendezvous('k', list);
    const favourite = ranked[0]?.id;
    const withFull = list.map((w) => (w.id === favourite ? { ...w, running: w.slots } : w));
    expect(pickByHash(withFull, any, 'k')?.id).toBe(ranked[1]?.id);
  });

  it('hashes deterministically', () => {
    expect(hash53('abc')).toBe(hash53('abc'));
    expect(hash53('abc')).not.toBe(hash53('abd'));
    expect(Number.isSafeInteger(hash53('anything'))).toBe(true);
  });
});

describe('broadcastTargets', () => {
  it('targets every eligible worker in id order with shard numbers', () => {
    const list = [worker('b', { tags: ['x'] }), worker('a', { tags: ['x'] }), worker('c'), worker('d', { tags: ['x'], draining: true })];
    expect(broadcastTargets(list, { tags: ['x'] }).map((t) => [t.worker.id, t.shardIndex, t.shardTotal])).toEqual([
      ['a', 0, 2],
      ['b', 1, 2],
    ]);
    expect(broadcastTargets(list, { tags: ['nope'] })).toEqual([]);
  });
});

describe('routeInstance', () => {
  const list = [worker('a'), worker('b', { running: 4 })];
  it('dispatches by strategy', () => {
    expect(routeInstance('load', list, any, { random: () => 0 })).toEqual({ kind: 'single', worker: list[0] });
    expect(routeInstance('round_robin', list, any, { random: () => 0, cursor: 1 })).toEqual({ kind: 'single', worker: list[1], nextCursor: 2 });
    expect(routeInstance('consistent_hash', list, any, { random: () => 0, hashKey: 'k' })).toMatchObject({ kind: 'single' });
    expect(routeInstance('broadcast', list, any, { random: () => 0 })).toMatchObject({ kind: 'broadcast', targets: [{ shardIndex: 0 }, { shardIndex: 1 }] });
  });

  it('explains when nothing fits', () => {
    expect(routeInstance('load', list, { tags: ['gpu'] }, { random: () => 0 })).toEqual({
      kind: 'none',
      explanation: 'no eligible worker among 2 (tags: gpu): 2 without the tags',
    });
    expect(routeInstance('broadcast', [], any, { random: () => 0 })).toMatchObject({ kind: 'none' });
  });
});

describe('routing by team', () => {
  const list = [worker('a-only', { teams: ['a'], running: 8 }), worker('b-only', { teams: ['b'] }), worker('any', { running: 4 })];
  it('#18 placement: every strategy picks only workers serving the instance team', () => {
    for (let i = 0; i < 20; i++) {
      expect(['a-only', 'any']).toContain(pickByLoad(list, { tags: [], team: 'a' }, () => i / 20)?.id);
      expect(['a-only', 'any']).toContain(pickRoundRobin(list, { tags: [], team: 'a' }, i)?.worker.id);
      expect(['a-only', 'any']).toContain(pickByHash(list, { tags: [], team: 'a' }, `task_${i}`)?.id);
    }
    expect(broadcastTargets(list, { tags: [], team: 'b' }).map((t) => t.worker.id)).toEqual(['any', 'b-only']);
    expect(routeInstance('load', list, { tags: [], team: 'c' }, { random: () => 0 })).toEqual({ kind: 'single', worker: list[2] });
    expect(routeInstance('load', list.slice(0, 2), { tags: [], team: 'c' }, { random: () => 0 })).toEqual({
      kind: 'none',
      explanation: 'no eligible worker among 2: 2 not serving team c',
    });
  });
});
