import { describe, expect, it } from 'vitest';
import { spreadTrigrams, textTrigrams } from './text-trigrams.js';

describe('textTrigrams', () => {
  it('gives each run of 3 characters once, as written', () => {
    expect(textTrigrams('abcabcd')).toEqual(['abc', 'bca', 'cab', 'bcd']);
    expect(textTrigrams('NightLy')).toEqual(['Nig', 'igh', 'ght', 'htL', 'tLy']);
  });

  it('counts code points, as SQL SUBSTRING does: an emoji is one character', () => {
    expect(textTrigrams('a😀bc')).toEqual(['a😀b', '😀bc']);
  });

  it('has none for texts shorter than 3 characters', () => {
    expect(textTrigrams('')).toEqual([]);
    expect(textTrigrams('ab')).toEqual([]);
    expect(textTrigrams('a😀')).toEqual([]);
  });
});

describe('spreadTrigrams', () => {
  it('keeps all when there are few', () => {
    expect(spreadTrigrams(['a', 'b', 'c'], 6)).toEqual(['a', 'b', 'c']);
  });

  it('picks the first, the last and evenly between', () => {
    const all = Array.from({ length: 11 }, (_, i) => `t${i}`);
    expect(spreadTrigrams(all, 3)).toEqual(['t0', 't5', 't10']);
  });
});
