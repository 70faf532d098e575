import { describe, expect, it } from 'vitest';
import { closestKey, describeValue, formatPath } from './issues.js';

describe('formatPath', () => {
  it('writes dotted paths with indices, quoting odd keys', () => {
    expect(formatPath([])).toBe('');
    expect(formatPath(['exec', 'command', 0])).toBe('exec.command[0]');
    expect(formatPath(['exec', 'headers', 'X-Api-Key'])).toBe('exec.headers.X-Api-Key');
    expect(formatPath(['params', 'a b', 'c'])).toBe('params["a b"].c');
    expect(formatPath([0, 'x'])).toBe('[0].x');
  });
});

describe('describeValue', () => {
  it('describes values for messages', () => {
    expect(describeValue('x')).toBe('"x"');
    expect(describeValue(12)).toBe('12');
    expect(describeValue(null)).toBe('null');
    expect(describeValue(undefined)).toBe('nothing');
    expect(describeValue([1, 2])).toBe('an array of 2');
    expect(describeValue({})).toBe('an object');
    expect(describeValue('y'.repeat(100))).toBe(`"${'y'.repeat(60)}…"`);
  });
});

describe('closestKey', () => {
  it('suggests near misses only', () => {
    expect(closestKey('shedule', ['schedule', 'exec'])).toBe('schedule');
    expect(closestKey('Priority', ['priority'])).toBe('priority');
    expect(closestKey('completely_different', ['name', 'exec'])).toBeUndefined();
  });
});
