import { describe, expect, it } from 'vitest';
import { canServe, capacityOf, eligibleWorkers, explainNoWorker, freeSlots, ineligibility, isEligible, servesTeam, slotCapFor, type WorkerSnapshot } from './worker-snapshot.js';

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

describe('teams (AX_WORKER_TEAMS)', () => {
  it('#18 placement: a worker listing teams serves only those; none listed (or an old entry) serves every team', () => {
    expect(servesTeam(worker('all'), 'a')).toBe(true);
    expect(servesTeam(worker('all', { teams: [] }), 'a')).toBe(true);
    expect(servesTeam(worker('b-only', { teams: ['b'] }), 'a')).toBe(false);
    expect(servesTeam(worker('b-only', { teams: ['b'] }), 'b')).toBe(true);
    expect(servesTeam(worker('ab', { teams: ['a', 'b'] }), 'a')).toBe(true);
    expect(servesTeam(worker('b-only', { teams: ['b'] }), undefined)).toBe(true);
  });

  it('#18 placement: a worker of other teams is not eligible, whatever its tags and slots', () => {
    const bOnly = worker('b-only', { teams: ['b'], tags: ['etl'] });
    expect(ineligibility(bOnly, { tags: ['etl'], team: 'a' })).toBe('OTHER_TEAMS');
    expect(isEligible(bOnly, { tags: ['etl'], team: 'b' })).toBe(true);
    expect(eligibleWorkers([bOnly, worker('any', { tags: ['etl'] })], { tags: ['etl'], team: 'a' }).map((w) => w.id)).toEqual(['any']);
  });

  it('#18 placement: canServe ignores free slots but not the team, the tags or draining', () => {
    expect(canServe(worker('full', { running: 16 }), { tags: [], team: 'a' })).toBe(true);
    expect(canServe(worker('b', { teams: ['b'] }), { tags: [], team: 'a' })).toBe(false);
    expect(canServe(worker('d', { draining: true }), { tags: [], team: 'a' })).toBe(false);
    expect(canServe(worker('t'), { tags: ['gpu'], team: 'a' })).toBe(false);
  });

  it('#18 placement: the NO_WORKER sentence names workers that serve other teams', () => {
    const list = [worker('b1', { teams: ['b'] }), worker('b2', { teams: ['b', 'c'] }), worker('d', { draining: true })];
    expect(explainNoWorker(list, { tags: [], team: 'a' })).toBe('no eligible worker among 3: 2 not serving team a, 1 draining');
  });
});

describe('R9 prefetch: capacity = slots + prefetch', () => {
  it('R9 a worker is reserved up to slots + prefetch; the reserve and a skewed worker (0 slots) still hold', () => {
    const w = worker('w1', { slots: 4, prefetch: 3, running: 5 });
    expect(capacityOf(w)).toBe(7);
    expect(freeSlots(w)).toBe(2);
    expect(isEligible(w, { tags: [] })).toBe(true);
    expect(freeSlots({ ...w, running: 7 })).toBe(0);
    expect(slotCapFor(w, 5)).toBe(7);
    const reserved = { ...w, reservedSlots: { slots: 2, minPriority: 7 } };
    expect(slotCapFor(reserved, 1)).toBe(5);
    expect(freeSlots(reserved, 1)).toBe(0);
    expect(freeSlots(reserved, 9)).toBe(2);
    expect(capacityOf({ slots: 0, prefetch: 3 })).toBe(0);
    expect(capacityOf({ slots: 4 })).toBe(4);
  });
});
