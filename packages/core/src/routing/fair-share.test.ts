import { describe, expect, it } from 'vitest';
import { fairOrder, fairSequence, fairShares } from './fair-share.js';

describe('R23 fair share between teams (water-filling by weight)', () => {
  it('R23: two idle teams of equal weight split the slots evenly, the one named first taking the odd one', () => {
    expect(fairShares([{ team: 'a', running: 0, weight: 1, wants: 200 }, { team: 'b', running: 0, weight: 1, wants: 5 }], 8)).toEqual(
      new Map([
        ['a', 4],
        ['b', 4],
      ]),
    );
    expect(fairSequence([{ team: 'a', running: 0, weight: 1, wants: 9 }, { team: 'b', running: 0, weight: 1, wants: 9 }], 3)).toEqual(['a', 'b', 'a']);
  });

  it('R23: a team with a flood running gets no freed slot while another team with startable work runs less', () => {
    // Team a runs all 8 slots; one frees: b (running 0) takes it, and the next four too.
    expect(fairSequence([{ team: 'a', running: 7, weight: 1, wants: 190 }, { team: 'b', running: 0, weight: 1, wants: 5 }], 5)).toEqual(['b', 'b', 'b', 'b', 'b']);
  });

  it('R23: weights set the shares; weights below 1 count as 1', () => {
    expect(fairShares([{ team: 'heavy', running: 0, weight: 3, wants: 100 }, { team: 'light', running: 0, weight: 1, wants: 100 }], 8)).toEqual(
      new Map([
        ['heavy', 6],
        ['light', 2],
      ]),
    );
    expect(fairShares([{ team: 'z', running: 0, weight: 0, wants: 10 }, { team: 'o', running: 0, weight: 1, wants: 10 }], 4)).toEqual(
      new Map([
        ['z', 2],
        ['o', 2],
      ]),
    );
  });

  it('R23: what one team does not want goes to the others; nobody gets more than it wants', () => {
    expect(fairShares([{ team: 'a', running: 0, weight: 1, wants: 1 }, { team: 'b', running: 0, weight: 1, wants: 100 }], 8)).toEqual(
      new Map([
        ['a', 1],
        ['b', 7],
      ]),
    );
    expect(fairSequence([{ team: 'a', running: 0, weight: 1, wants: 2 }], 8)).toEqual(['a', 'a']);
  });

  it('R23: fairOrder interleaves each team\'s own order by share and keeps every item once', () => {
    const byTeam = new Map([
      ['a', ['a1', 'a2', 'a3', 'a4']],
      ['b', ['b1', 'b2']],
    ]);
    expect(fairOrder(byTeam, new Map([['a', 1]]), new Map())).toEqual(['b1', 'a1', 'b2', 'a2', 'a3', 'a4']);
  });
});
