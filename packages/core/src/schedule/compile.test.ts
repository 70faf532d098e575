import { describe, expect, it } from 'vitest';
import { compileSchedule, nextFireTimes, scheduleProblem } from './compile.js';
import { InvalidScheduleError } from './errors.js';
import { parseIsoInstantMs } from './iso-instant.js';
import type { Schedule } from './types.js';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const at = (text: string): number => Date.parse(text);

describe('fixed_rate', () => {
  // Task created at 2026-01-01T00:00:07.123Z: slots are that instant + k·30 s, never rounded.
  const anchorMs = at('2026-01-01T00:00:07.123Z');
  const every30 = compileSchedule({ type: 'fixed_rate', everySeconds: 30, timezone: 'UTC' }, { anchorMs });

  it('fires first at the anchor when asked from before it', () => {
    expect(iso(every30.nextAfter(anchorMs - 5_000))).toBe('2026-01-01T00:00:07.123Z');
    expect(iso(every30.nextAfter(anchorMs - 1))).toBe('2026-01-01T00:00:07.123Z');
  });

  it('fires at anchor + k·N exactly, strictly after afterMs', () => {
    expect(iso(every30.nextAfter(anchorMs))).toBe('2026-01-01T00:00:37.123Z');
    expect(iso(every30.nextAfter(at('2026-01-01T00:01:07.122Z')))).toBe('2026-01-01T00:01:07.123Z');
    expect(iso(every30.nextAfter(at('2026-01-01T00:01:07.123Z')))).toBe('2026-01-01T00:01:37.123Z');
    expect(iso(every30.nextAfter(at('2026-03-01T12:00:00.000Z')))).toBe('2026-03-01T12:00:07.123Z');
    expect(every30.between(anchorMs - 1, Infinity, 3).map(iso)).toEqual([
      '2026-01-01T00:00:07.123Z',
      '2026-01-01T00:00:37.123Z',
      '2026-01-01T00:01:07.123Z',
    ]);
  });

  it('finds the last slot at or before a time, and none before the anchor', () => {
    expect(iso(every30.lastAtOrBefore(at('2026-01-01T00:01:07.123Z')))).toBe('2026-01-01T00:01:07.123Z');
    expect(iso(every30.lastAtOrBefore(at('2026-01-01T00:01:07.122Z')))).toBe('2026-01-01T00:00:37.123Z');
    expect(every30.lastAtOrBefore(anchorMs - 1)).toBeNull();
  });

  it('anchors on startAt when given, whatever the creation time', () => {
    const hourly = compileSchedule(
      { type: 'fixed_rate', everySeconds: 3600, startAt: '2026-06-01T09:15:00.500+08:00', timezone: 'Asia/Shanghai' },
      { anchorMs },
    );
    expect(hourly.between(at('2026-06-01T00:00:00.000Z'), Infinity, 3).map(iso)).toEqual([
      '2026-06-01T01:15:00.500Z',
      '2026-06-01T02:15:00.500Z',
      '2026-06-01T03:15:00.500Z',
    ]);
  });

  it('is not moved by DST: a fixed rate counts elapsed time', () => {
    const hourly = compileSchedule(
      { type: 'fixed_rate', everySeconds: 3600, startAt: '2026-03-08T05:00:00.000Z', timezone: 'America/New_York' },
      { anchorMs: 0 },
    );
    expect(hourly.between(at('2026-03-08T06:30:00.000Z'), Infinity, 2).map(iso)).toEqual([
      '2026-03-08T07:00:00.000Z', // 03:00 EDT
      '2026-03-08T08:00:00.000Z', // 04:00 EDT
    ]);
  });
});

describe('once and none', () => {
  const once = compileSchedule({ type: 'once', at: '2026-12-01T02:00:00.000Z', timezone: 'UTC' }, { anchorMs: 0 });

  it('once fires at `at` only', () => {
    expect(iso(once.nextAfter(at('2026-11-30T00:00:00.000Z')))).toBe('2026-12-01T02:00:00.000Z');
    expect(once.nextAfter(at('2026-12-01T02:00:00.000Z'))).toBeNull();
    expect(once.between(0, Infinity, 10).map(iso)).toEqual(['2026-12-01T02:00:00.000Z']);
    expect(iso(once.lastAtOrBefore(at('2027-01-01T00:00:00.000Z')))).toBe('2026-12-01T02:00:00.000Z');
    expect(once.lastAtOrBefore(at('2026-12-01T01:59:59.999Z'))).toBeNull();
  });

  it('none never fires', () => {
    const none = compileSchedule({ type: 'none', timezone: 'UTC' }, { anchorMs: 0 });
    expect(none.nextAfter(0)).toBeNull();
    expect(none.lastAtOrBefore(at('2030-01-01T00:00:00.000Z'))).toBeNull();
    expect(none.between(0, Infinity, 10)).toEqual([]);
  });
});

describe('nextFireTimes', () => {
  it('previews the next fires of any schedule', () => {
    expect(nextFireTimes({ type: 'cron', expr: '0 2 * * *', timezone: 'Asia/Shanghai' }, at('2026-12-01T00:00:00.000Z'), 2, { anchorMs: 0 }).map(iso)).toEqual([
      '2026-12-01T18:00:00.000Z', // 12-02 02:00 +08
      '2026-12-02T18:00:00.000Z', // 12-03 02:00 +08
    ]);
    expect(nextFireTimes({ type: 'none', timezone: 'UTC' }, 0, 5, { anchorMs: 0 })).toEqual([]);
  });
});

describe('invalid schedules', () => {
  it.each<[string, unknown, string]>([
    ['bad zone', { type: 'cron', expr: '* * * * *', timezone: 'Mars/Olympus' }, 'schedule timezone "Mars/Olympus" is not an IANA time-zone name (e.g. "UTC", "Asia/Shanghai")'],
    ['bad cron', { type: 'cron', expr: '61 * * * *', timezone: 'UTC' }, 'minute field "61" is out of range 0-59'],
    ['zero rate', { type: 'fixed_rate', everySeconds: 0, timezone: 'UTC' }, 'schedule everySeconds 0 must be a whole number of seconds, at least 1'],
    ['fractional rate', { type: 'fixed_rate', everySeconds: 1.5, timezone: 'UTC' }, 'schedule everySeconds 1.5 must be a whole number of seconds, at least 1'],
    [
      'startAt without zone',
      { type: 'fixed_rate', everySeconds: 5, startAt: '2026-01-01T00:00:00', timezone: 'UTC' },
      'schedule startAt "2026-01-01T00:00:00" is not an ISO-8601 time with a zone, e.g. "2026-12-01T02:00:00.000Z"',
    ],
    ['impossible date', { type: 'once', at: '2026-02-30T00:00:00.000Z', timezone: 'UTC' }, 'schedule at "2026-02-30T00:00:00.000Z" is not an ISO-8601 time with a zone, e.g. "2026-12-01T02:00:00.000Z"'],
    ['unknown type', { type: 'weekly', timezone: 'UTC' }, 'schedule type "weekly" is unknown; expected cron, fixed_rate, once or none'],
  ])('%s', (_, schedule, problem) => {
    expect(scheduleProblem(schedule as Schedule)).toBe(problem);
    expect(() => compileSchedule(schedule as Schedule, { anchorMs: 0 })).toThrow(new InvalidScheduleError(problem));
  });

  it('carries the code INVALID_SCHEDULE', () => {
    try {
      compileSchedule({ type: 'none', timezone: 'Nowhere' }, { anchorMs: 0 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidScheduleError);
      expect((error as InvalidScheduleError).code).toBe('INVALID_SCHEDULE');
    }
  });

  it('refuses NaN times and bad limits with a RangeError', () => {
    const compiled = compileSchedule({ type: 'cron', expr: '* * * * *', timezone: 'UTC' }, { anchorMs: 0 });
    expect(() => compiled.nextAfter(Number.NaN)).toThrow(RangeError);
    expect(() => compiled.between(0, Number.NaN, 1)).toThrow(RangeError);
    expect(() => compiled.between(0, 1, -1)).toThrow(RangeError);
    expect(() => compileSchedule({ type: 'fixed_rate', everySeconds: 1, timezone: 'UTC' }, { anchorMs: Number.NaN })).toThrow(RangeError);
  });
});

describe('parseIsoInstantMs', () => {
  it.each<[string, string]>([
    ['2026-12-01T02:00:00.000Z', '2026-12-01T02:00:00.000Z'],
    ['2026-12-01T10:00:00+08:00', '2026-12-01T02:00:00.000Z'],
    ['2026-12-01T10:00:00+0800', '2026-12-01T02:00:00.000Z'],
    ['2026-11-30T21:00-05', '2026-12-01T02:00:00.000Z'],
    ['2026-12-01T02:00:00.123456Z', '2026-12-01T02:00:00.123Z'],
    ['2026-12-01T02:00:00.5Z', '2026-12-01T02:00:00.500Z'],
  ])('reads %s as %s', (text, utc) => {
    expect(parseIsoInstantMs(text)).toBe(Date.parse(utc));
  });

  it.each(['2026-12-01T02:00:00', '2026-02-30T00:00:00Z', '2026-12-01T24:00:00Z', '2026-12-01 02:00:00Z', 'tomorrow', ''])(
    'refuses %j',
    (text) => {
      expect(parseIsoInstantMs(text)).toBeNull();
    },
  );
});

describe('compileSchedule shares the fire functions of one expression in one zone', () => {
  const from = at('2026-12-03T00:00:00.000Z');
  it('keeps zones apart: the same expression in UTC and Shanghai fires 8 hours apart', () => {
    const utc = compileSchedule({ type: 'cron', expr: '0 0 2 * * *', timezone: 'UTC' }, { anchorMs: 0 });
    const shanghai = compileSchedule({ type: 'cron', expr: '0 0 2 * * *', timezone: 'Asia/Shanghai' }, { anchorMs: 0 });
    const utcAgain = compileSchedule({ type: 'cron', expr: '0 0 2 * * *', timezone: 'UTC' }, { anchorMs: 0 });
    expect(new Date(utc.nextAfter(from) ?? 0).toISOString()).toBe('2026-12-03T02:00:00.000Z');
    expect(new Date(shanghai.nextAfter(from) ?? 0).toISOString()).toBe('2026-12-03T18:00:00.000Z');
    expect(utcAgain.nextAfter(from)).toBe(utc.nextAfter(from));
    // Each task keeps its own schedule object, whatever it shares.
    expect(utcAgain).not.toBe(utc);
  });

  it('stays right past the cache limit (10,000 distinct expressions, then emptied)', () => {
    for (let i = 0; i < 10_050; i++) compileSchedule({ type: 'cron', expr: `${i % 60} ${Math.floor(i / 60) % 60} ${Math.floor(i / 3600)} * * *`, timezone: 'UTC' }, { anchorMs: 0 });
    const late = compileSchedule({ type: 'cron', expr: '30 15 4 * * *', timezone: 'Europe/Berlin' }, { anchorMs: 0 });
    expect(new Date(late.nextAfter(from) ?? 0).toISOString()).toBe('2026-12-03T03:15:30.000Z');
  });
});
