import { describe, expect, it } from 'vitest';
import { planMisfire } from './misfire.js';

describe('planMisfire', () => {
  const missed = [1, 2, 3, 4, 5];
  it('skip creates nothing and counts every slot', () => {
    expect(planMisfire({ policy: 'skip' }, missed)).toEqual({ create: [], skipped: 5, coalesced: 0 });
  });
  it('R1: fire_once creates the latest real slot and coalesces the rest', () => {
    expect(planMisfire({ policy: 'fire_once' }, missed)).toEqual({ create: [5], skipped: 0, coalesced: 4 });
  });
  it('catch_up keeps the most recent max slots', () => {
    expect(planMisfire({ policy: 'catch_up', max: 2 }, missed)).toEqual({ create: [4, 5], skipped: 3, coalesced: 0 });
    expect(planMisfire({ policy: 'catch_up', max: 10 }, missed)).toEqual({ create: missed, skipped: 0, coalesced: 0 });
  });
  it('nothing missed, nothing to do', () => {
    expect(planMisfire({ policy: 'fire_once' }, [])).toEqual({ create: [], skipped: 0, coalesced: 0 });
  });
});
