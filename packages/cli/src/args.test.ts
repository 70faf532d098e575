/** Command-line parsing and value validation (pure), and the wording of network failures. */
import { describe, expect, it } from 'vitest';
import { baseUrl, bizDate, instant, integer, keyValues, parseCommandArgs, secondsToMs, splitCommandWords, UsageError } from './args.js';
import { describeFetchFailure } from './client.js';

describe('splitCommandWords', () => {
  const two = (first: string): number => (first === 'tail' ? 1 : 2);
  it('finds the words around global options and their values', () => {
    expect(splitCommandWords(['--url', 'http://h', '--json', 'tasks', 'get', 'x'], two)).toEqual({ words: ['tasks', 'get'], rest: ['--url', 'http://h', '--json', 'x'] });
    expect(splitCommandWords(['tail', '--task', 't'], two)).toEqual({ words: ['tail'], rest: ['--task', 't'] });
    expect(splitCommandWords(['tasks'], two)).toEqual({ words: ['tasks'], rest: [] });
  });
});

describe('parseCommandArgs', () => {
  it('parses own and global options and reports unknown ones as usage errors naming the command', () => {
    const parsed = parseCommandArgs(['x', '--param', 'a=1', '--param', 'b=2', '--json'], { param: { type: 'string', multiple: true, help: '' } }, 'tasks trigger');
    expect(parsed.positionals).toEqual(['x']);
    expect(parsed.values['param']).toEqual(['a=1', 'b=2']);
    expect(parsed.values['json']).toBe(true);
    expect(() => parseCommandArgs(['--nope'], {}, 'tasks list')).toThrow(new UsageError('tasks list: unknown option --nope (see axctl tasks list --help)'));
    expect(() => parseCommandArgs(['--url'], {}, 'tasks list')).toThrow(/--url: expects a value/);
  });
});

describe('values', () => {
  it('accepts real business dates only', () => {
    expect(bizDate('biz-date', '2024-02-29')).toBe('2024-02-29');
    expect(() => bizDate('biz-date', '2026-13-01')).toThrow('--biz-date: expected YYYY-MM-DD, got "2026-13-01"');
    expect(() => bizDate('biz-date', '2026-02-30')).toThrow(UsageError);
    expect(() => bizDate('from', '20261201')).toThrow(/--from/);
  });

  it('normalises instants to ISO UTC', () => {
    expect(instant('from', '2026-12-01')).toBe('2026-12-01T00:00:00.000Z');
    expect(instant('from', '2026-12-01T10:00:00+08:00')).toBe('2026-12-01T02:00:00.000Z');
    expect(() => instant('to', '2026-12-01T10:00:00')).toThrow(/--to: expected/);
    expect(() => instant('to', 'yesterday')).toThrow(UsageError);
  });

  it('checks integers, seconds, key=value params and URLs', () => {
    expect(integer('limit', '500', 1, 500)).toBe(500);
    expect(() => integer('limit', '0', 1, 500)).toThrow('--limit: expected an integer from 1 to 500, got "0"');
    expect(() => integer('limit', '1.5', 1, 500)).toThrow(UsageError);
    expect(secondsToMs('timeout', '0.5')).toBe(500);
    expect(() => secondsToMs('timeout', '-1')).toThrow(UsageError);
    expect(keyValues('param', ['a=1', 'b=x=y', 'a=2'])).toEqual({ a: '2', b: 'x=y' });
    expect(() => keyValues('param', ['novalue'])).toThrow('--param: expected key=value, got "novalue"');
    expect(baseUrl('http://h:8080/', '--url')).toBe('http://h:8080');
    expect(() => baseUrl('h:8080', 'AX_URL')).toThrow(/AX_URL: expected an http\(s\) URL/);
  });
});

describe('describeFetchFailure', () => {
  it('names the socket error, also inside an AggregateError', () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    expect(describeFetchFailure(refused, 30_000)).toBe('connection refused');
    const aggregate = Object.assign(new TypeError('fetch failed'), { cause: new AggregateError([Object.assign(new Error('x'), { code: 'EHOSTUNREACH' })]) });
    expect(describeFetchFailure(aggregate, 30_000)).toBe('host unreachable');
    expect(describeFetchFailure(new DOMException('t', 'TimeoutError'), 30_000)).toBe('no answer within 30s');
  });
});
