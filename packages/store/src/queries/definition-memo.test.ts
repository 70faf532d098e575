/** The memo of parsed task definitions (#24): keyed by the stored values, frozen, bounded. */
import { describe, expect, it } from 'vitest';
import { DEFINITION_MEMO_MAX, definitionKey, memoizedDefinition } from './definition-memo.js';

describe('memoizedDefinition', () => {
  it('parses a set of stored values once and answers the same frozen definition after', () => {
    let parses = 0;
    const parse = () => {
      parses += 1;
      return { name: 'memo-a', retry: { max: 2 }, tags: ['x'] };
    };
    const first = memoizedDefinition(['memo-a', 1, '{"max":2}', null], parse);
    const second = memoizedDefinition(['memo-a', 1, '{"max":2}', null], parse);
    expect(second).toBe(first);
    expect(parses).toBe(1);
    expect(Object.isFrozen(first) && Object.isFrozen(first.retry) && Object.isFrozen(first.tags)).toBe(true);
    expect(() => {
      (first.retry).max = 9;
    }).toThrow(TypeError);
  });

  it('parses again when any value differs, whatever the id and version: a row edited by hand is read as it is', () => {
    const a = memoizedDefinition(['memo-b', 7, 'echo one'], () => ({ command: 'one' }));
    const b = memoizedDefinition(['memo-b', 7, 'echo two'], () => ({ command: 'two' }));
    expect(a).not.toBe(b);
    expect(b.command).toBe('two');
    // Values that only concatenate alike are different keys.
    expect(definitionKey(['ab', 'c'])).not.toBe(definitionKey(['a', 'bc']));
    expect(definitionKey(['a1:b', 'c'])).not.toBe(definitionKey(['a', 'b', 'c']));
    expect(definitionKey(['x\u0000sy'])).not.toBe(definitionKey(['x', 'y']));
    expect(definitionKey([null])).not.toBe(definitionKey(['']));
    expect(definitionKey([1])).not.toBe(definitionKey(['1']));
  });

  it('does not keep a row that fails to parse, nor rows with values that are not plain (a driver that parses JSON)', () => {
    expect(() => memoizedDefinition(['memo-c', 'bad'], () => {
      throw new Error('invalid');
    })).toThrow('invalid');
    expect(memoizedDefinition(['memo-c', 'bad'], () => ({ ok: true }))).toEqual({ ok: true });
    expect(definitionKey(['memo-d', { parsed: true }])).toBeNull();
    let parses = 0;
    for (let i = 0; i < 2; i += 1) memoizedDefinition(['memo-d', { parsed: true }], () => ({ n: (parses += 1) }));
    expect(parses).toBe(2);
  });

  it(`keeps at most ${DEFINITION_MEMO_MAX} definitions, the oldest going first`, () => {
    const first = memoizedDefinition(['memo-e', 0], () => ({ n: 0 }));
    for (let i = 1; i <= DEFINITION_MEMO_MAX; i += 1) memoizedDefinition(['memo-e', i], () => ({ n: i }));
    expect(memoizedDefinition(['memo-e', 0], () => ({ n: 0 }))).not.toBe(first);
    const last = memoizedDefinition(['memo-e', DEFINITION_MEMO_MAX], () => ({ n: -1 }));
    expect(last.n).toBe(DEFINITION_MEMO_MAX);
  });
});
