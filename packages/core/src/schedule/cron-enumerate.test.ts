/**
 * Wall-clock enumeration: the calendar it rests on, cron features on days without a DST change
 * (expected instants worked out by hand: 2026-01-01 is a Thursday; 2028 and 2032 are leap
 * years), and a property: in UTC (no DST, so cron-parser is a fair oracle) the enumerator agrees
 * with cron-parser's own iteration for random expressions (ranges, steps, lists, names, L, nL,
 * #, both day fields restricted, with and without a seconds field).
 */
import { CronExpressionParser } from 'cron-parser';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { civilDateOf, dayNumberOf, daysInMonth, formatIsoDate, parseIsoDate, weekdayOf } from './calendar.js';
import { compileSchedule, scheduleProblem } from './compile.js';
import { compileCronMatcher } from './cron-enumerate.js';
import { parseCron } from './cron-fields.js';

const iso = (ms: number): string => new Date(ms).toISOString();

function fires(expr: string, timezone: string, after: string, count: number): string[] {
  return compileSchedule({ type: 'cron', expr, timezone }, { anchorMs: 0 }).between(Date.parse(after), Infinity, count).map(iso);
}

describe('cron features (UTC unless named)', () => {
  it.each<[string, string, string, string, string[]]>([
    ['leap day only', '0 12 29 2 *', 'UTC', '2026-01-01T00:00:00.000Z', ['2028-02-29T12:00:00.000Z', '2032-02-29T12:00:00.000Z']],
    [
      'L = last day of each month',
      '0 0 L * *',
      'UTC',
      '2026-01-01T00:00:00.000Z',
      ['2026-01-31T00:00:00.000Z', '2026-02-28T00:00:00.000Z', '2026-03-31T00:00:00.000Z', '2026-04-30T00:00:00.000Z'],
    ],
    ['L in a leap February', '0 0 L * *', 'UTC', '2028-02-01T00:00:00.000Z', ['2028-02-29T00:00:00.000Z', '2028-03-31T00:00:00.000Z']],
    [
      '6 fields: every 10 seconds, from inside a second',
      '*/10 * * * * *',
      'UTC',
      '2026-05-05T10:00:03.250Z',
      ['2026-05-05T10:00:10.000Z', '2026-05-05T10:00:20.000Z', '2026-05-05T10:00:30.000Z'],
    ],
    [
      '6 fields: a list of seconds in one minute',
      '5,50 30 8 * * *',
      'UTC',
      '2026-05-05T08:30:05.000Z',
      ['2026-05-05T08:30:50.000Z', '2026-05-06T08:30:05.000Z'],
    ],
    [
      'names: weekdays of January-March at 09:00 Shanghai (01:00Z)',
      '0 9 * JAN-MAR MON-FRI',
      'Asia/Shanghai',
      '2026-01-01T00:00:00.000Z', // 08:00 Thu 01-01 local
      ['2026-01-01T01:00:00.000Z', '2026-01-02T01:00:00.000Z', '2026-01-05T01:00:00.000Z'], // Thu, Fri, Mon
    ],
    [
      'names: after the last weekday of March comes 1 January',
      '0 9 * JAN-MAR MON-FRI',
      'Asia/Shanghai',
      '2026-03-31T02:00:00.000Z', // Tue 03-31 10:00 local
      ['2027-01-01T01:00:00.000Z'], // Fri 2027-01-01 09:00 local
    ],
    [
      'range with a step, hour range',
      '5-20/5 8-10 * * *',
      'UTC',
      '2026-06-01T00:00:00.000Z',
      ['2026-06-01T08:05:00.000Z', '2026-06-01T08:10:00.000Z', '2026-06-01T08:15:00.000Z', '2026-06-01T08:20:00.000Z', '2026-06-01T09:05:00.000Z'],
    ],
    ['step from *', '*/7 * * * *', 'UTC', '2026-06-01T00:50:00.000Z', ['2026-06-01T00:56:00.000Z', '2026-06-01T01:00:00.000Z', '2026-06-01T01:07:00.000Z']],
    ['value/step runs to the end of the field', '50/4 * * * *', 'UTC', '2026-06-01T00:55:00.000Z', ['2026-06-01T00:58:00.000Z', '2026-06-01T01:50:00.000Z']],
    [
      'day-of-month and day-of-week both restricted: either matches (the 13th or a Friday)',
      '0 0 13 * 5',
      'UTC',
      '2026-04-01T00:00:00.000Z',
      ['2026-04-03T00:00:00.000Z', '2026-04-10T00:00:00.000Z', '2026-04-13T00:00:00.000Z', '2026-04-17T00:00:00.000Z'], // Fri, Fri, Mon 13th, Fri
    ],
    [
      '? leaves day-of-month unrestricted, so only Mondays',
      '0 0 ? * MON',
      'UTC',
      '2026-01-01T00:00:00.000Z',
      ['2026-01-05T00:00:00.000Z', '2026-01-12T00:00:00.000Z'],
    ],
    [
      '5L = last Friday of the month',
      '0 0 * * 5L',
      'UTC',
      '2026-01-01T00:00:00.000Z',
      ['2026-01-30T00:00:00.000Z', '2026-02-27T00:00:00.000Z', '2026-03-27T00:00:00.000Z'],
    ],
    [
      '1#2 = second Monday of the month',
      '0 0 * * 1#2',
      'UTC',
      '2026-01-01T00:00:00.000Z',
      ['2026-01-12T00:00:00.000Z', '2026-02-09T00:00:00.000Z', '2026-03-09T00:00:00.000Z'],
    ],
    ['7 is Sunday', '0 0 * * 7', 'UTC', '2026-01-01T00:00:00.000Z', ['2026-01-04T00:00:00.000Z', '2026-01-11T00:00:00.000Z']],
    ['@daily', '@daily', 'Asia/Shanghai', '2026-01-01T00:00:00.000Z', ['2026-01-01T16:00:00.000Z', '2026-01-02T16:00:00.000Z']],
  ])('%s: %s in %s', (_, expr, timezone, after, expected) => {
    expect(fires(expr, timezone, after, expected.length)).toEqual(expected);
  });

  it('answers a schedule that never comes again within the horizon with null', () => {
    // Day 31 of February-April alone is refused; with a weekday it is valid (either may match),
    // but the weekday #5 of February needs a leap year whose 1 February is that weekday.
    const compiled = compileSchedule({ type: 'cron', expr: '0 0 * 2 1#5', timezone: 'UTC' }, { anchorMs: 0 });
    // Leap years whose 1 February is a Monday: 2016, then 2044.
    expect(iso(compiled.nextAfter(Date.parse('2016-03-01T00:00:00.000Z')) ?? 0)).toBe('2044-02-29T00:00:00.000Z');
  });
});

describe('CronMatcher', () => {
  const matcher = compileCronMatcher(parseCron('0 */20 9-10 * * *'));

  it('finds the next and previous matching second of a day', () => {
    const at = (h: number, m: number, s: number): number => h * 3600 + m * 60 + s;
    expect(matcher.nextSecondOfDay(0)).toBe(at(9, 0, 0));
    expect(matcher.nextSecondOfDay(at(9, 0, 1))).toBe(at(9, 20, 0));
    expect(matcher.nextSecondOfDay(at(10, 40, 1))).toBe(-1);
    expect(matcher.prevSecondOfDay(at(10, 39, 59))).toBe(at(10, 20, 0));
    expect(matcher.prevSecondOfDay(at(9, 0, 0))).toBe(at(9, 0, 0));
    expect(matcher.prevSecondOfDay(at(8, 59, 59))).toBe(-1);
    expect(matcher.prevSecondOfDay(86_399)).toBe(at(10, 40, 0));
  });

  it('walks dates both ways, skipping excluded months', () => {
    const lastDayOfFebruary = compileCronMatcher(parseCron('0 0 L 2 *'));
    const from = dayNumberOf(2026, 3, 1);
    expect(lastDayOfFebruary.nextMatchingDay(from, from + 2000)).toBe(dayNumberOf(2027, 2, 28));
    expect(lastDayOfFebruary.prevMatchingDay(from, from - 2000)).toBe(dayNumberOf(2026, 2, 28));
    expect(lastDayOfFebruary.nextMatchingDay(from, from + 100)).toBeNull();
  });
});

describe('calendar', () => {
  it('numbers days from 1970-01-01 (a Thursday)', () => {
    expect(dayNumberOf(1970, 1, 1)).toBe(0);
    expect(weekdayOf(0)).toBe(4);
    expect(dayNumberOf(2026, 1, 1)).toBe(20_454);
    expect(weekdayOf(20_454)).toBe(4); // 2026-01-01 is a Thursday
    expect(weekdayOf(-1)).toBe(3); // 1969-12-31 was a Wednesday
  });

  it('knows month lengths, leap years included', () => {
    expect([daysInMonth(2026, 2), daysInMonth(2028, 2), daysInMonth(2100, 2), daysInMonth(2000, 2), daysInMonth(2026, 4)]).toEqual([28, 29, 28, 29, 30]);
  });

  it('round-trips day numbers through civil dates and ISO text, agreeing with Date.UTC', () => {
    fc.assert(
      fc.property(fc.integer({ min: -200_000, max: 2_900_000 }), (dayNumber) => {
        const { year, month, day } = civilDateOf(dayNumber);
        expect(dayNumberOf(year, month, day)).toBe(dayNumber);
        expect(Date.UTC(year, month - 1, day)).toBe(dayNumber * 86_400_000);
        expect(parseIsoDate(formatIsoDate(dayNumber))).toBe(dayNumber);
      }),
      { numRuns: 300 },
    );
  });

  it('parses only real YYYY-MM-DD dates', () => {
    expect(parseIsoDate('2028-02-29')).toBe(dayNumberOf(2028, 2, 29));
    expect(parseIsoDate('2026-02-29')).toBeNull();
    expect(parseIsoDate('2026-13-01')).toBeNull();
    expect(parseIsoDate('2026-1-01')).toBeNull();
  });
});

function numericField(min: number, max: number): fc.Arbitrary<string> {
  const value = fc.integer({ min, max });
  const range = fc.tuple(value, value).map(([a, b]) => (a <= b ? `${a}-${b}` : `${b}-${a}`));
  const step = fc.integer({ min: 1, max: Math.max(1, max - min) });
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant('*') },
    { weight: 2, arbitrary: value.map(String) },
    { weight: 1, arbitrary: range },
    { weight: 1, arbitrary: step.map((n) => `*/${n}`) },
    { weight: 1, arbitrary: fc.tuple(range, step).map(([r, n]) => `${r}/${n}`) },
    { weight: 1, arbitrary: fc.uniqueArray(value, { minLength: 2, maxLength: 4 }).map((vs) => vs.join(',')) },
  );
}

const dayOfMonth = fc.oneof({ weight: 6, arbitrary: numericField(1, 31) }, { weight: 1, arbitrary: fc.constantFrom('L', '1,L', '?') });
const month = fc.oneof(numericField(1, 12), fc.constantFrom('JAN-MAR', 'jun,dec', 'FEB'));
const dayOfWeek = fc.oneof(
  { weight: 6, arbitrary: numericField(0, 7) },
  { weight: 1, arbitrary: fc.constantFrom('MON-FRI', 'SUN', '5L', '1#2', 'FRI#5', '0#1', '?') },
);

const expression = fc
  .record({
    second: fc.option(numericField(0, 59), { nil: undefined }),
    minute: numericField(0, 59),
    hour: numericField(0, 23),
    dayOfMonth,
    month,
    dayOfWeek,
  })
  .map(({ second, ...f }) => [second, f.minute, f.hour, f.dayOfMonth, f.month, f.dayOfWeek].filter((x) => x !== undefined).join(' '));

const START_MIN = Date.parse('2000-01-01T00:00:00.000Z');
const START_MAX = Date.parse('2040-01-01T00:00:00.000Z');
const SEASON_MS = 120 * 86_400_000;

describe('agreement with cron-parser in UTC', () => {
  it('gives the same next three fires', () => {
    fc.assert(
      fc.property(expression, fc.integer({ min: START_MIN, max: START_MAX }), (expr, startMs) => {
        const schedule = { type: 'cron', expr, timezone: 'UTC' } as const;
        fc.pre(scheduleProblem(schedule) === null);
        const compiled = compileSchedule(schedule, { anchorMs: 0 });
        // cron-parser walks rare expressions day by day and slowly: keep the oracle to fires within a season.
        fc.pre((compiled.nextAfter(startMs) ?? Infinity) < startMs + SEASON_MS);
        const oracle = CronExpressionParser.parse(expr, { currentDate: new Date(startMs), tz: 'UTC' });
        const expected: number[] = [];
        for (let i = 0; i < 3; i++) {
          try {
            expected.push(oracle.next().getTime());
          } catch {
            break; // cron-parser gives up after its loop limit on rare expressions; compare what it found
          }
        }
        expect(compiled.between(startMs, Infinity, expected.length)).toEqual(expected);
      }),
      { numRuns: 80 },
    );
  });

  it('gives the same previous fire', () => {
    fc.assert(
      fc.property(expression, fc.integer({ min: START_MIN, max: START_MAX }), (expr, startMs) => {
        const schedule = { type: 'cron', expr, timezone: 'UTC' } as const;
        fc.pre(scheduleProblem(schedule) === null);
        const compiled = compileSchedule(schedule, { anchorMs: 0 });
        fc.pre((compiled.lastAtOrBefore(startMs) ?? -Infinity) > startMs - SEASON_MS);
        const oracle = CronExpressionParser.parse(expr, { currentDate: new Date(startMs + 1), tz: 'UTC' });
        let expected: number;
        try {
          expected = oracle.prev().getTime();
        } catch {
          return; // beyond cron-parser's loop limit
        }
        expect(compiled.lastAtOrBefore(startMs)).toBe(expected);
      }),
      { numRuns: 50 },
    );
  });
});
