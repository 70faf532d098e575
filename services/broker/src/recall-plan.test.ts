import { describe, expect, it } from 'vitest';
import { planRecalls } from './recall-plan.js';

describe('planRecalls (R9 prefetch recall policy)', () => {
  const holders = [
    { workerId: 'a', held: [{ executionId: 'a1', heldForMs: 5_000 }, { executionId: 'a2', heldForMs: 500 }, { executionId: 'a3', heldForMs: 3_000 }] },
    { workerId: 'b', held: [{ executionId: 'b1', heldForMs: 4_000 }] },
  ];

  it('R9 recalls what was held past the bound, longest first, no more than the free slots elsewhere', () => {
    expect(planRecalls(holders, new Map([['idle', 2]]), 2_000)).toEqual([
      { workerId: 'a', executionIds: ['a1'] },
      { workerId: 'b', executionIds: ['b1'] },
    ]);
    expect(planRecalls(holders, new Map([['idle', 10]]), 2_000)).toEqual([
      { workerId: 'a', executionIds: ['a1', 'a3'] },
      { workerId: 'b', executionIds: ['b1'] },
    ]);
  });

  it('R9 recalls nothing without a free slot on another worker, nor what was recalled lately', () => {
    expect(planRecalls(holders, new Map(), 2_000)).toEqual([]);
    expect(planRecalls(holders, new Map([['idle', 0]]), 2_000)).toEqual([]);
    expect(planRecalls(holders, new Map([['a', 3]]), 2_000)).toEqual([{ workerId: 'b', executionIds: ['b1'] }]);
    expect(planRecalls(holders, new Map([['idle', 5]]), 2_000, new Set(['a1', 'b1']))).toEqual([{ workerId: 'a', executionIds: ['a3'] }]);
    expect(planRecalls(holders, new Map([['idle', 5]]), 60_000)).toEqual([]);
  });
});
