import { describe, expect, it } from 'vitest';
import { median, pairedRatios, roundKeys, roundOrder } from './compare.mjs';

describe('rounds of old against new', () => {
  it('keeps the plain names for round 1 and numbers the later ones', () => {
    expect(roundKeys('ax-output-silent', 1)).toEqual({ current: 'ax-output-silent', baseline: 'ax-output-silent@baseline' });
    expect(roundKeys('ax-output-silent', 3)).toEqual({ current: 'ax-output-silent#3', baseline: 'ax-output-silent@baseline#3' });
  });
  it('alternates which code goes first, so neither always gets the same slot', () => {
    expect([1, 2, 3, 4].map((k) => roundOrder(k)[0])).toEqual(['current', 'baseline', 'current', 'baseline']);
  });
  it('takes the median: the middle value, or the mean of the middle two', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});

describe('pairedRatios', () => {
  const run = (perS: number | null) => ({ result: perS === null ? undefined : { perS } });
  it('pairs each round, judges on the median ratio and not on one lucky or unlucky round', () => {
    const sc = {
      s: run(70), 's@baseline': run(100), // a slow minute for the new code
      's#2': run(99), 's@baseline#2': run(100),
      's#3': run(101), 's@baseline#3': run(100),
      other: run(1),
    };
    const out = pairedRatios(sc, 's', (r) => r?.perS);
    expect(out.rounds.map((r) => [r.k, r.first, r.ratio])).toEqual([[1, 'current', 0.7], [2, 'baseline', 0.99], [3, 'current', 1.01]]);
    expect(out.medianRatio).toBeCloseTo(0.99, 10);
    expect([out.minRatio, out.maxRatio]).toEqual([0.7, 1.01]);
  });
  it('leaves a round without a figure out of the median instead of counting it as 0', () => {
    const out = pairedRatios({ s: run(90), 's@baseline': run(100), 's#2': run(null), 's@baseline#2': run(100) }, 's', (r) => r?.perS);
    expect(out.rounds[1]!.ratio).toBeNull();
    expect(out.medianRatio).toBeCloseTo(0.9, 10);
  });
  it('finds no rounds for a scenario that was not compared', () => {
    expect(pairedRatios({ s: run(1) }, 't', (r) => r?.perS)).toEqual({ rounds: [], medianRatio: null, minRatio: null, maxRatio: null });
  });
});
