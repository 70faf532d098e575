import { describe, expect, it } from 'vitest';
import { TimeWheel } from './time-wheel.js';

describe('TimeWheel', () => {
  it('pops entries in time order across level-1 cascades and long jumps', () => {
    const t0 = 1_000_000_000;
    const wheel = new TimeWheel({ startMs: t0, level0Size: 8 });
    const times = [t0 + 500, t0 + 3_000, t0 + 9_500, t0 + 20_000, t0 + 70_000, t0 - 5_000];
    for (const [i, ms] of times.entries()) wheel.add({ taskName: `t${i}`, version: 1, expectedMs: ms });
    expect(wheel.size).toBe(6);
    expect(wheel.popDue(t0).map((e) => e.expectedMs)).toEqual([t0 - 5_000]);
    expect(wheel.popDue(t0 + 499)).toEqual([]);
    expect(wheel.popDue(t0 + 9_500).map((e) => e.expectedMs)).toEqual([t0 + 500, t0 + 3_000, t0 + 9_500]);
    expect(wheel.popDue(t0 + 19_999)).toEqual([]);
    expect(wheel.popDue(t0 + 20_000).map((e) => e.expectedMs)).toEqual([t0 + 20_000]);
    expect(wheel.removeTask('t4')).toBe(1);
    expect(wheel.size).toBe(0);
    wheel.add({ taskName: 'x', version: 1, expectedMs: t0 + 100_000_000 });
    wheel.add({ taskName: 'y', version: 1, expectedMs: t0 + 200_000_000 });
    expect(wheel.popDue(t0 + 150_000_000).map((e) => e.taskName)).toEqual(['x']);
    expect(wheel.popDue(t0 + 200_000_000).map((e) => e.taskName)).toEqual(['y']);
  });
});
