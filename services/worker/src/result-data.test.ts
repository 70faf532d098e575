import { describe, expect, it } from 'vitest';
import { structureProblems } from '@ax/core';
import { resultDataProblem, withCarriableData } from './result-data.js';

/** `{"k":{"k":…1…}}`: its deepest object `levels` below the top one. */
function nested(levels: number): Record<string, unknown> {
  return JSON.parse(`{"k":${'{"k":'.repeat(levels)}1${'}'.repeat(levels + 1)}`) as Record<string, unknown>;
}

describe('resultDataProblem (#45)', () => {
  it('accepts ordinary data', () => {
    expect(resultDataProblem({ rows: 3, items: [{ id: 1, tags: ['a'] }], note: null })).toBeUndefined();
  });

  it.each(['__proto__', 'constructor', 'prototype'])('refuses the key %s at any level, naming where', (key) => {
    const data = JSON.parse(`{"ok":1,"list":[{"deep":{"${key}":{"x":1}}}]}`) as Record<string, unknown>;
    expect(resultDataProblem(data)).toBe(`the key "${key}" is not allowed (at data.list[0].deep.${key})`);
  });

  it('bounds depth as a task\'s params are bounded (MAX_JSON_DEPTH below data), whatever the input depth', () => {
    expect(resultDataProblem(nested(32))).toBeUndefined();
    expect(structureProblems(nested(32))).toEqual([]);
    expect(resultDataProblem(nested(33))).toMatch(/^nested deeper than 32 levels \(at data\.k\.k/);
    expect(structureProblems(nested(33))).toHaveLength(1);
    expect(resultDataProblem(nested(100_000))).toBe(`nested deeper than 32 levels (at data${'.k'.repeat(33)})`);
    expect(resultDataProblem({ a: [[[[1]]]] }, { maxDepth: 3 })).toBe('nested deeper than 3 levels (at data.a[0][0][0])');
  });

  it('bounds the JSON size, and refuses what JSON cannot encode', () => {
    expect(resultDataProblem({ text: 'x'.repeat(100) }, { maxBytes: 100 })).toBe('111 bytes of JSON, over the 100-byte limit');
    expect(resultDataProblem({ text: 'x'.repeat(89) }, { maxBytes: 100 })).toBeUndefined();
    expect(resultDataProblem({ n: 10n })).toMatch(/^not encodable as JSON: /);
  });
});

describe('withCarriableData', () => {
  const hostile = JSON.parse('{"__proto__":{"polluted":true}}') as Record<string, unknown>;

  it('keeps an outcome whose data is carriable as it is', () => {
    const outcome = { outcome: 'SUCCESS' as const, exitCode: 200, data: { rows: 1 } };
    expect(withCarriableData(outcome)).toBe(outcome);
  });

  it('fails a SUCCESS whose data is refused, without the data, saying why', () => {
    expect(withCarriableData({ outcome: 'SUCCESS', exitCode: 200, data: hostile })).toStrictEqual({
      outcome: 'FAILED',
      exitCode: 200,
      error: `the answer's data was refused: the key "__proto__" is not allowed (at data.__proto__)`,
    });
  });

  it('keeps a failure a failure and adds the reason to its error; an async acceptance stays accepted', () => {
    expect(withCarriableData({ outcome: 'FAILED', exitCode: 200, error: 'no orders', data: hostile })).toStrictEqual({
      outcome: 'FAILED',
      exitCode: 200,
      error: `no orders; the answer's data was refused: the key "__proto__" is not allowed (at data.__proto__)`,
    });
    expect(withCarriableData({ outcome: 'SUCCESS', exitCode: 202, async: true, data: hostile })).toStrictEqual({ outcome: 'SUCCESS', exitCode: 202, async: true });
  });
});
