import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bizDateOf, startOfBizDate } from './biz-date.js';

const at = (text: string): number => Date.parse(text);
const iso = (ms: number): string => new Date(ms).toISOString();

describe('bizDateOf', () => {
  it.each<[string, string, number, string]>([
    ['2026-12-01T16:30:00.000Z', 'Asia/Shanghai', 0, '2026-12-02'], // 12-02 00:30 +08
    ['2026-12-01T16:30:00.000Z', 'Asia/Shanghai', -1, '2026-12-01'], // T-1
    ['2026-12-01T15:59:59.999Z', 'Asia/Shanghai', 0, '2026-12-01'], // 12-01 23:59:59.999 +08
    ['2026-12-01T16:30:00.000Z', 'UTC', 0, '2026-12-01'],
    ['2026-03-01T16:30:00.000Z', 'Asia/Shanghai', -1, '2026-03-01'], // 03-02 00:30 +08, T-1 across a month end
    ['2027-01-01T00:00:00.000Z', 'UTC', -1, '2026-12-31'], // across a year end
    ['2026-11-01T03:59:59.999Z', 'America/New_York', 0, '2026-10-31'], // 10-31 23:59:59.999 EDT
    ['2026-11-01T04:00:00.000Z', 'America/New_York', 0, '2026-11-01'], // 11-01 00:00 EDT
    ['2026-11-01T06:30:00.000Z', 'America/New_York', 0, '2026-11-01'], // second 01:30 (EST)
    ['2026-04-05T03:30:00.000Z', 'America/Santiago', 0, '2026-04-04'], // the repeated 23:30 -04 of 04-04
    ['2026-03-09T00:00:00.000Z', 'UTC', 1, '2026-03-10'],
  ])('%s in %s with offset %i is %s', (expected, tz, offsetDays, bizDate) => {
    expect(bizDateOf(at(expected), tz, offsetDays)).toBe(bizDate);
  });

  it('refuses a fractional offset and an unknown zone', () => {
    expect(() => bizDateOf(0, 'UTC', 0.5)).toThrow(RangeError);
    expect(() => bizDateOf(0, 'Mars/Olympus', 0)).toThrow(RangeError);
  });
});

describe('startOfBizDate', () => {
  it.each<[string, string, number, string]>([
    ['2026-12-02', 'Asia/Shanghai', 0, '2026-12-01T16:00:00.000Z'], // 12-02 00:00 +08
    ['2026-12-01', 'Asia/Shanghai', -1, '2026-12-01T16:00:00.000Z'], // T-1: biz date 12-01 belongs to local 12-02
    ['2026-12-01', 'UTC', 0, '2026-12-01T00:00:00.000Z'],
    ['2026-03-08', 'America/New_York', 0, '2026-03-08T05:00:00.000Z'], // 00:00 EST (the gap is at 02:00)
    ['2026-11-01', 'America/New_York', 0, '2026-11-01T04:00:00.000Z'], // 00:00 EDT
    ['2026-09-06', 'America/Santiago', 0, '2026-09-06T04:00:00.000Z'], // midnight does not exist → 01:00 -03
    ['2026-04-05', 'America/Santiago', 0, '2026-04-05T04:00:00.000Z'], // 00:00 -04, after the repeated 23:00 hour of 04-04
    ['2011-12-30', 'Pacific/Apia', 0, '2011-12-30T10:00:00.000Z'], // a skipped date: its midnight read with -10
  ])('%s in %s with offset %i starts at %s', (bizDate, tz, offsetDays, expected) => {
    expect(iso(startOfBizDate(bizDate, tz, offsetDays))).toBe(expected);
  });

  it('refuses a date that is not YYYY-MM-DD', () => {
    expect(() => startOfBizDate('2026-02-30', 'UTC', 0)).toThrow(/bizDate "2026-02-30" is not a YYYY-MM-DD calendar date/);
    expect(() => startOfBizDate('2026-1-1', 'UTC', 0)).toThrow(RangeError);
  });

  it('is the first instant of its business date, for every zone, date and offset', () => {
    const zones = ['UTC', 'Asia/Shanghai', 'America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'America/Santiago'];
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: Date.UTC(2020, 0, 1) / 86_400_000, max: Date.UTC(2035, 0, 1) / 86_400_000 }),
        fc.integer({ min: -2, max: 2 }),
        (tz, dayNumber, offsetDays) => {
          const bizDate = new Date(dayNumber * 86_400_000).toISOString().slice(0, 10);
          const start = startOfBizDate(bizDate, tz, offsetDays);
          expect(bizDateOf(start, tz, offsetDays)).toBe(bizDate);
          expect(bizDateOf(start - 1, tz, offsetDays)).not.toBe(bizDate);
        },
      ),
      { numRuns: 300 },
    );
  });
});
