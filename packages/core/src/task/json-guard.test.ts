import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isStructureSound, MAX_JSON_DEPTH, structureProblems } from './json-guard.js';

/** JSON as JSON.parse builds it, "__proto__" keys (own properties) included, up to `depth` levels. */
const jsonText = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constantFrom('null', '1', '"s"', 'true'), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
  object: fc
    .array(fc.tuple(fc.constantFrom('a', 'b', '__proto__', 'constructor'), tie('value')), { maxLength: 3 })
    .map((entries) => `{${entries.map(([key, value]) => `"${key}":${value}`).join(',')}}`),
})).value;

const chain = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('isStructureSound', () => {
  it('says yes exactly when structureProblems finds nothing, at any depth limit', () => {
    fc.assert(
      fc.property(jsonText, fc.integer({ min: 0, max: 6 }), (text, maxDepth) => {
        const value: unknown = JSON.parse(text);
        expect(isStructureSound(value, maxDepth)).toBe(structureProblems(value, maxDepth).length === 0);
      }),
      { numRuns: 2_000, seed: 42 },
    );
  });

  it('allows objects nested exactly to the limit, not one level more', () => {
    expect(isStructureSound(JSON.parse(chain(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(isStructureSound(JSON.parse(chain(MAX_JSON_DEPTH + 2)))).toBe(false);
    expect(structureProblems(JSON.parse(chain(MAX_JSON_DEPTH + 2)))).toHaveLength(1);
  });

  it('rejects a "__proto__" key made by JSON.parse, and does not overflow on very deep input', () => {
    expect(isStructureSound(JSON.parse('{"a":[{"__proto__":{}}]}'))).toBe(false);
    expect(isStructureSound(JSON.parse(`${'['.repeat(50_000)}${']'.repeat(50_000)}`))).toBe(false);
  });
});
