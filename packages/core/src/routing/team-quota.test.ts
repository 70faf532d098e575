import { describe, expect, it } from 'vitest';
import { TeamQuota, teamsAtLimit } from './team-quota.js';

describe('TeamQuota', () => {
  it('#18 quotas: a team gets at most maxRunning minus its active runs, other teams are not limited', () => {
    const quota = new TeamQuota(new Map([['a', 3]]), new Map([['a', 1], ['b', 50]]));
    expect(quota.limit('a')).toBe(3);
    expect(quota.limit('b')).toBeUndefined();
    expect([quota.take('a'), quota.take('a'), quota.take('a')]).toEqual([true, true, false]);
    expect(quota.isFull('a')).toBe(true);
    for (let i = 0; i < 100; i++) expect(quota.take('b')).toBe(true);
    expect(quota.isFull('b')).toBe(false);
  });

  it('#18 quotas: a team already over its limit (limit lowered) has no room until enough runs end', () => {
    const quota = new TeamQuota(new Map([['a', 1]]), new Map([['a', 3]]));
    expect(quota.isFull('a')).toBe(true);
    quota.give('a');
    expect(quota.take('a')).toBe(false);
    quota.give('a', 2);
    expect(quota.take('a')).toBe(true);
    expect(quota.take('a')).toBe(false);
  });

  it('#18 quotas: maxRunning 0 holds every run of the team', () => {
    const quota = new TeamQuota(new Map([['a', 0]]), new Map());
    expect(quota.isFull('a')).toBe(true);
    expect(quota.take('a')).toBe(false);
  });

  it('#18 quotas: a run given back (block cover) frees its room for the instance that replaces it', () => {
    const quota = new TeamQuota(new Map([['a', 1]]), new Map([['a', 1]]));
    expect(quota.isFull('a')).toBe(true);
    quota.give('a');
    expect(quota.take('a')).toBe(true);
    quota.give('unlimited'); // no effect on a team without a limit
    expect(quota.isFull('unlimited')).toBe(false);
  });
});

describe('teamsAtLimit', () => {
  it('#18 quotas: lists the limited teams whose active runs reached the limit, sorted', () => {
    const limits = new Map([['z', 2], ['a', 1], ['m', 5]]);
    expect(teamsAtLimit(limits, new Map([['z', 2], ['a', 4], ['m', 4], ['free', 100]]))).toEqual(['a', 'z']);
    expect(teamsAtLimit(limits, new Map())).toEqual([]);
    expect(teamsAtLimit(new Map(), new Map([['a', 1]]))).toEqual([]);
  });
});
