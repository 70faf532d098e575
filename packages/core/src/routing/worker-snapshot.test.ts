import { describe, expect, it } from 'vitest';
import { eligibleWorkers, explainNoWorker, freeSlots, ineligibility, isEligible, type WorkerSnapshot } from './worker-snapshot.js';

function worker(id: string, overrides: Partial<WorkerSnapshot> = {}): WorkerSnapshot {
  return { id, tags: [], cores: 4, slots: 16, running: 0, avgDurationMs5m: 0, draining: false, ...overrides };
}

describe('eligibility', () => {
  it('requires every task tag on the worker (a superset is fine)', () => {
    const w = worker('w1', { tags: ['etl', 'gpu', 'eu'] });
    expect(isEligible(w, { tags: [] })).toBe(true);
    expect(isEligible(w, { tags: ['etl', 'gpu'] })).toBe(true);
    expect(ineligibility(w, { tags: ['etl', 'us'] })).toBe('MISSING_TAGS');
  });

  it('requires a free slot', () => {
    expect(freeSlots(worker('w', { slots: 4, running: 3 }))).toBe(1);
    expect(isEligible(worker('w', { slots: 4, running: 3 }), { tags: [] })).toBe(true);
    expect(ineligibility(worker('w', { slots: 4, running: 4 }), { tags: [] })).toBe('NO_FREE_SLOT');
    expect(freeSlots(worker('w', { slots: 4, running: 6 }))).toBe(0);
  });

  it('skips draining and excluded workers (set or array)', () => {
    expect(ineligibility(worker('w', { draining: true }), { tags: [] })).toBe('DRAINING');
    expect(ineligibility(worker('w'), { tags: [], exclude: new Set(['w']) })).toBe('EXCLUDED');
    expect(ineligibility(worker('w'), { tags: [], exclude: ['w'] })).toBe('EXCLUDED');
    expect(ineligibility(worker('w'), { tags: [], exclude: ['other'] })).toBeNull();
  });

  it('filters a list, keeping order', () => {
    const list = [worker('a'), worker('b', { draining: true }), worker('c')];
    expect(eligibleWorkers(list, { tags: [] }).map((w) => w.id)).toEqual(['a', 'c']);
  });

  it('explains why no worker fits', () => {
    expect(explainNoWorker([], { tags: ['gpu'] })).toBe('no eligible worker: no worker is registered (tags: gpu)');
    const list = [worker('a'), worker('b', { draining: true }), worker('c', { tags: ['gpu'], running: 16 })];
    expect(explainNoWorker(list, { tags: ['gpu'] })).toBe('no eligible worker among 3 (tags: gpu): 1 without the tags, 1 without a free slot, 1 draining');
  });
});
