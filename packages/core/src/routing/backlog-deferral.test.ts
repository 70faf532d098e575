import { describe, expect, it } from 'vitest';
import { holdThresholds, isDeferrable, nextBacklogHold, poolKeyOf } from './backlog-deferral.js';

const policy = { belowPriority: 5, holdAbovePercent: 100 };

/** Feeds readings of important load to the hysteresis and returns the state after each. */
function run(slots: number, loads: readonly number[], p = policy): boolean[] {
  let held = false;
  return loads.map((important) => (held = nextBacklogHold(held, { slots, important }, p)));
}

describe('backlog deferral policy', () => {
  it('#22 deferral: the hold starts only above the threshold and ends only at or below half of it', () => {
    // 4 slots, hold above 4, clear at or below 2.
    expect(run(4, [3, 4, 5, 4, 3, 3, 2, 3, 4, 5])).toEqual([false, false, true, true, true, true, false, false, false, true]);
    expect(holdThresholds(4, policy)).toEqual({ holdAbove: 4, clearAtOrBelow: 2 });
  });

  it('#22 deferral: the threshold is a share of the pool, so larger pools take more before holding', () => {
    expect(run(10, [10, 11], { ...policy, holdAbovePercent: 100 })).toEqual([false, true]);
    expect(run(10, [20, 21, 11, 10], { ...policy, holdAbovePercent: 200 })).toEqual([false, true, true, false]);
    expect(run(3, [2, 1, 2], { ...policy, holdAbovePercent: 50 })).toEqual([true, true, true]); // 1.5 / 0.75
    expect(run(3, [2, 0], { ...policy, holdAbovePercent: 50 })).toEqual([true, false]);
  });

  it('#22 deferral: a pool without slots never holds (R11: nothing runs there), even when it held before', () => {
    expect(nextBacklogHold(false, { slots: 0, important: 1_000 }, policy)).toBe(false);
    expect(nextBacklogHold(true, { slots: 0, important: 1_000 }, policy)).toBe(false);
  });

  it('#22 deferral: only priorities below the setting are held; at and above it always pass', () => {
    expect([0, 1, 4, 5, 6, 9].map((p) => isDeferrable(p, policy))).toEqual([true, true, true, false, false, false]);
    expect([0, 9].map((p) => isDeferrable(p, { belowPriority: 10 }))).toEqual([true, true]);
    expect(isDeferrable(0, { belowPriority: 0 })).toBe(false);
  });

  it('#22 deferral: the pool key is the team and the tag set, in any order, duplicates folded', () => {
    expect(poolKeyOf({ team: 'default', tags: ['gpu', 'etl'] })).toBe('default/etl,gpu');
    expect(poolKeyOf({ team: 'default', tags: ['etl', 'gpu', 'etl'] })).toBe('default/etl,gpu');
    expect(poolKeyOf({ team: 'a', tags: [] })).toBe('a/*');
    expect(poolKeyOf({ team: 'a', tags: ['etl'] })).not.toBe(poolKeyOf({ team: 'b', tags: ['etl'] }));
  });
});
