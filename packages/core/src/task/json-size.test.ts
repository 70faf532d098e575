import { describe, expect, it } from 'vitest';
import { JSON_BODY_LIMITS, jsonSizeExcess } from './json-size.js';
import { MAX_CALENDAR_DATES } from './calendar-schema.js';
import { MAX_JSON_DEPTH } from './json-guard.js';

const small = { arrayLength: 3, objectKeys: 2, nodes: 10, depth: 2 };

describe('jsonSizeExcess', () => {
  it('passes values within every cap', () => {
    expect(jsonSizeExcess({ a: [1, 2, 3], b: { c: null } }, small)).toBeUndefined();
    expect(jsonSizeExcess('x', small)).toBeUndefined();
    expect(jsonSizeExcess(null, small)).toBeUndefined();
  });

  it('names the first array over its length, and where it is', () => {
    expect(jsonSizeExcess({ a: { b: [1, 2, 3, 4] } }, small)).toEqual({
      limit: 'arrayLength',
      max: 3,
      path: ['a', 'b'],
      detail: 'an array of more than 3 items (4), the limit',
      message: 'a.b: an array of more than 3 items (4), the limit',
    });
  });

  it('names an object of too many keys', () => {
    expect(jsonSizeExcess({ a: [{ x: 1, y: 2, z: 3 }] }, small)).toMatchObject({ limit: 'objectKeys', max: 2, path: ['a', 0], message: 'a[0]: an object of more than 2 keys (3), the limit' });
  });

  it('counts every value, the root included, before visiting them', () => {
    // root + 2 keys + 3 + 3 items = 9 values; one more item is 10, two more is 11
    expect(jsonSizeExcess({ a: [1, 2, 3], b: [1, 2, 3] }, small)).toBeUndefined();
    expect(jsonSizeExcess({ a: [1, 2, 3], b: [1, 2, [1]] }, small)).toBeUndefined();
    expect(jsonSizeExcess({ a: [1, 2, 3], b: [1, [1], [1]] }, small)).toEqual({
      limit: 'nodes',
      max: 10,
      path: [],
      detail: 'more than 10 values in all, the limit',
      message: 'the body: more than 10 values in all, the limit',
    });
  });

  it('refuses nesting as deep as structureProblems does, and stops there', () => {
    const chain = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    expect(jsonSizeExcess(JSON.parse(chain(MAX_JSON_DEPTH + 1)))).toBeUndefined();
    expect(jsonSizeExcess(JSON.parse(chain(MAX_JSON_DEPTH + 2)))).toMatchObject({ limit: 'depth', max: MAX_JSON_DEPTH });
    const started = performance.now();
    expect(jsonSizeExcess(JSON.parse(`${'['.repeat(50_000)}${']'.repeat(50_000)}`))).toMatchObject({ limit: 'depth' });
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('takes a full calendar, and a 1 MiB array of numbers is refused after one look at its length', () => {
    expect(jsonSizeExcess({ team: 't', timezone: 'UTC', dates: Array.from({ length: MAX_CALENDAR_DATES }, () => '2026-01-01') })).toBeUndefined();
    const huge = { exec: { command: Array.from({ length: 500_000 }, () => 1) } };
    expect(jsonSizeExcess(huge)).toMatchObject({ limit: 'arrayLength', max: JSON_BODY_LIMITS.arrayLength, path: ['exec', 'command'] });
  });
});
