import { describe, expect, it } from 'vitest';
import { TrigramEstimates, trigramEstimatesOf } from './trigram-estimates.js';

describe('TrigramEstimates', () => {
  it('answers an estimate younger than its maximum age, then forgets it', () => {
    const e = new TrigramEstimates(1_000, 10);
    e.set('nig', 42, 5_000);
    expect([e.get('nig', 5_000), e.get('nig', 5_999), e.get('nig', 6_000), e.get('igh', 5_000)]).toEqual([42, 42, undefined, undefined]);
    e.set('nig', 7, 6_000); // read again: the new figure, the new age
    expect(e.get('nig', 6_500)).toBe(7);
  });

  it('keeps at most its maximum, dropping the one read longest ago', () => {
    const e = new TrigramEstimates(60_000, 3);
    for (const [k, t] of ['aaa', 'bbb', 'ccc'].entries()) e.set(t, k, k);
    e.set('aaa', 9, 3); // read again: now the newest
    e.set('ddd', 4, 4);
    expect(e.size).toBe(3);
    expect(['aaa', 'bbb', 'ccc', 'ddd'].map((t) => e.get(t, 5))).toEqual([9, undefined, 2, 4]);
  });

  it('one set per database handle', () => {
    const a = {};
    const b = {};
    trigramEstimatesOf(a).set('nig', 1, Date.now());
    expect(trigramEstimatesOf(a).get('nig', Date.now())).toBe(1);
    expect(trigramEstimatesOf(b).get('nig', Date.now())).toBeUndefined();
  });
});
