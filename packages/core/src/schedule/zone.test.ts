import { describe, expect, it } from 'vitest';
import { formatInZone, isValidTimeZone, localDateTimeParts, utcOffsetMs, zoneFor } from './zone.js';

const HOUR_MS = 3_600_000;

describe('isValidTimeZone', () => {
  it.each(['UTC', 'Etc/UTC', 'Asia/Shanghai', 'America/New_York', 'Australia/Lord_Howe'])('accepts %s', (tz) => {
    expect(isValidTimeZone(tz)).toBe(true);
  });
  // Node 22+ accepts offset zones in Intl (ECMA-402 2024); ax refuses them on every Node.
  it.each(['Mars/Olympus', '', ' UTC', '+08:00', '-05:30', '+0800', '+08', 'Z'])('rejects %j', (tz) => {
    expect(isValidTimeZone(tz)).toBe(false);
  });
  it('rejects a non-string from untyped JSON', () => {
    expect(isValidTimeZone(42 as unknown as string)).toBe(false);
  });
});

describe('UTC offsets', () => {
  it.each<[string, string, number]>([
    ['UTC', '2026-07-01T00:00:00.000Z', 0],
    ['Asia/Shanghai', '2026-01-01T00:00:00.000Z', 8 * HOUR_MS],
    ['America/New_York', '2026-03-08T06:59:59.999Z', -5 * HOUR_MS], // 01:59:59.999 EST
    ['America/New_York', '2026-03-08T07:00:00.000Z', -4 * HOUR_MS], // 03:00 EDT
    ['America/New_York', '2026-11-01T05:59:59.999Z', -4 * HOUR_MS], // 01:59:59.999 EDT
    ['America/New_York', '2026-11-01T06:00:00.000Z', -5 * HOUR_MS], // 01:00 EST
    ['Australia/Lord_Howe', '2026-10-03T15:29:59.000Z', 10.5 * HOUR_MS], // 01:59:59 +10:30
    ['Australia/Lord_Howe', '2026-10-03T15:30:00.000Z', 11 * HOUR_MS], // 02:30 +11
  ])('%s at %s', (tz, at, offsetMs) => {
    expect(utcOffsetMs(tz, Date.parse(at))).toBe(offsetMs);
  });
});

describe('local days', () => {
  it('describe New York’s spring-forward date: one gap hour, 23 hours of instants', () => {
    const day = zoneFor('America/New_York').localDay(Date.UTC(2026, 2, 8) / 86_400_000);
    expect(day.hasTransition).toBe(true);
    expect(day.firstMs).toBe(Date.parse('2026-03-08T05:00:00.000Z')); // 00:00 EST
    expect(day.gaps).toEqual([
      { startMs: Date.parse('2026-03-08T07:00:00.000Z'), endMs: Date.parse('2026-03-08T08:00:00.000Z'), offsetMs: -5 * HOUR_MS },
    ]);
    const total = day.spans.reduce((sum, s) => sum + (s.endMs - s.startMs), 0);
    expect(total).toBe(23 * HOUR_MS);
  });

  it('describe New York’s fall-back date: 25 hours, the repeated hour flagged as a second pass', () => {
    const day = zoneFor('America/New_York').localDay(Date.UTC(2026, 10, 1) / 86_400_000);
    expect(day.spans.reduce((sum, s) => sum + (s.endMs - s.startMs), 0)).toBe(25 * HOUR_MS);
    expect(day.spans.filter((s) => s.secondPass)).toEqual([
      { startMs: Date.parse('2026-11-01T06:00:00.000Z'), endMs: Date.parse('2026-11-01T07:00:00.000Z'), offsetMs: -5 * HOUR_MS, secondPass: true },
    ]);
    expect(day.gaps).toEqual([]);
  });

  it('describe an ordinary date with one span', () => {
    const day = zoneFor('Asia/Shanghai').localDay(Date.UTC(2026, 11, 2) / 86_400_000);
    expect(day.hasTransition).toBe(false);
    expect(day.spans).toEqual([
      { startMs: Date.parse('2026-12-01T16:00:00.000Z'), endMs: Date.parse('2026-12-02T16:00:00.000Z'), offsetMs: 8 * HOUR_MS, secondPass: false },
    ]);
  });
});

describe('showing an instant in its zone', () => {
  it('gives the wall-clock fields and offset', () => {
    expect(localDateTimeParts(Date.parse('2026-03-08T07:30:00.250Z'), 'America/New_York')).toEqual({
      year: 2026,
      month: 3,
      day: 8,
      hour: 3,
      minute: 30,
      second: 0,
      millisecond: 250,
      weekday: 0,
      offsetMs: -4 * HOUR_MS,
    });
  });

  it.each<[string, string, string]>([
    ['2026-03-08T07:30:00.000Z', 'America/New_York', '2026-03-08T03:30:00.000-04:00'],
    ['2026-11-01T06:30:00.000Z', 'America/New_York', '2026-11-01T01:30:00.000-05:00'],
    ['2026-10-03T15:45:00.000Z', 'Australia/Lord_Howe', '2026-10-04T02:45:00.000+11:00'],
    ['2026-04-04T15:00:00.000Z', 'Australia/Lord_Howe', '2026-04-05T01:30:00.000+10:30'],
    ['2026-12-01T16:30:00.000Z', 'Asia/Shanghai', '2026-12-02T00:30:00.000+08:00'],
    ['2026-12-01T16:30:00.000Z', 'UTC', '2026-12-01T16:30:00.000+00:00'],
  ])('%s in %s is %s', (at, tz, shown) => {
    expect(formatInZone(Date.parse(at), tz)).toBe(shown);
  });

  it('throws a RangeError naming an unknown zone', () => {
    expect(() => formatInZone(0, 'Mars/Olympus')).toThrow(/time zone "Mars\/Olympus" is not an IANA time-zone name/);
  });
});
