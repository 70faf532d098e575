import { describe, expect, it } from 'vitest';
import { exactlyOnce, percentile, perSecond, slopePerSecond, summarize, sustainedRate } from './stats.mjs';

describe('percentile (nearest rank)', () => {
  const sorted = Array.from({ length: 100 }, (_, i) => i + 1); // 1..100
  it('takes the value at rank ceil(p/100 · n)', () => {
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([1, 2, 3], 0)).toBe(1);
  });
  it('is NaN for no values', () => {
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('summarize', () => {
  it('sorts numerically (not as strings) and rounds to 0.1', () => {
    expect(summarize([100, 9, 20, 3.333])).toEqual({ n: 4, min: 3.3, p50: 9, p95: 100, p99: 100, max: 100, mean: 33.1 });
  });
  it('gives nulls when empty', () => {
    expect(summarize([])).toEqual({ n: 0, min: null, p50: null, p95: null, p99: null, max: null, mean: null });
  });
});

describe('sustainedRate', () => {
  it('measures the middle of the run, ignoring a slow start and a straggler', () => {
    const times = [0, 5_000]; // ramp-up
    for (let i = 0; i < 1_000; i++) times.push(10_000 + i); // 1,000 events in one second
    times.push(60_000); // straggler
    const rate = sustainedRate(times);
    expect(rate).toBeGreaterThan(900);
    expect(rate).toBeLessThan(1_100);
  });
  it('is null with too few events or no time span', () => {
    expect(sustainedRate([1, 2, 3])).toBeNull();
    expect(sustainedRate(Array.from({ length: 20 }, () => 5))).toBeNull();
  });
});

describe('perSecond', () => {
  it('buckets by whole second from the origin, with zeros for empty seconds, dropping earlier events', () => {
    expect(perSecond([999, 1_000, 1_500, 3_100, 500, 100], 500)).toEqual([
      { s: 0, n: 3 },
      { s: 1, n: 1 },
      { s: 2, n: 1 },
    ]);
    expect(perSecond([0, 2_500], 0)).toEqual([{ s: 0, n: 1 }, { s: 1, n: 0 }, { s: 2, n: 1 }]);
  });
});

describe('exactlyOnce', () => {
  it('counts missing, duplicate and unexpected keys', () => {
    const observed = new Map([
      ['a', 1],
      ['b', 3],
      ['z', 2],
    ]);
    expect(exactlyOnce(['a', 'b', 'c'], observed)).toEqual({ expected: 3, duplicates: 2, missing: 1, unexpected: 2 });
  });
  it('is all zeros when every key occurs once', () => {
    expect(exactlyOnce(['a', 'b'], new Map([['a', 1], ['b', 1]]))).toEqual({ expected: 2, duplicates: 0, missing: 0, unexpected: 0 });
  });
});

describe('slopePerSecond', () => {
  it('is the growth per second of a backlog', () => {
    expect(slopePerSecond([0, 1_000, 2_000, 3_000].map((tMs, i) => ({ tMs, value: 100 + i * 250 })))).toBe(250);
    expect(slopePerSecond([0, 1_000].map((tMs, i) => ({ tMs, value: 50 - i * 50 })))).toBe(-50);
  });
  it('is null when it cannot be computed', () => {
    expect(slopePerSecond([{ tMs: 0, value: 1 }])).toBeNull();
    expect(slopePerSecond([{ tMs: 5, value: 1 }, { tMs: 5, value: 2 }])).toBeNull();
  });
});
