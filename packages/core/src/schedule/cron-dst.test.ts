/**
 * The DST rule of DESIGN §3, zone by zone. Every expected instant below was worked out by hand
 * from the rule and the zone's 2026 transitions (checked against Intl once, in a scratch script):
 *
 * - America/New_York: 2026-03-08 02:00 EST(-5) → 03:00 EDT(-4) at 07:00Z;
 *                     2026-11-01 02:00 EDT(-4) → 01:00 EST(-5) at 06:00Z.
 * - Europe/London:    2026-03-29 01:00 GMT(+0) → 02:00 BST(+1) at 01:00Z;
 *                     2026-10-25 02:00 BST(+1) → 01:00 GMT(+0) at 01:00Z.
 * - Australia/Lord_Howe: 2026-04-05 02:00 (+11) → 01:30 (+10:30) at 2026-04-04T15:00Z;
 *                        2026-10-04 02:00 (+10:30) → 02:30 (+11) at 2026-10-03T15:30Z.
 * - America/Santiago: 2026-04-05 00:00 (-3) → 2026-04-04 23:00 (-4) at 03:00Z;
 *                     2026-09-06 00:00 (-4) → 01:00 (-3) at 04:00Z (changes at midnight).
 * - Pacific/Apia skipped 2011-12-30 entirely: 2011-12-29 24:00 (-10) → 2011-12-31 00:00 (+14) at 2011-12-30T10:00Z.
 * - Asia/Shanghai is +08:00 all year; UTC is UTC.
 */
import { describe, expect, it } from 'vitest';
import { compileSchedule } from './compile.js';

interface Case {
  zone: string;
  expr: string;
  /** Exclusive lower bound, ISO UTC. */
  after: string;
  /** The fires that follow, in order (as many as listed), ISO UTC; comments give the local time. */
  expected: string[];
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

const cases: Record<string, Case> = {
  // ---------------------------------------------------------------- UTC and a zone without DST
  'UTC behaves like plain cron on New York’s gap day': {
    zone: 'UTC',
    expr: '30 2 * * *',
    after: '2026-03-07T12:00:00.000Z',
    expected: ['2026-03-08T02:30:00.000Z', '2026-03-09T02:30:00.000Z'],
  },
  'UTC hour-* on London’s overlap day': {
    zone: 'UTC',
    expr: '30 * * * *',
    after: '2026-10-25T00:00:00.000Z',
    expected: ['2026-10-25T00:30:00.000Z', '2026-10-25T01:30:00.000Z', '2026-10-25T02:30:00.000Z'],
  },
  'Asia/Shanghai fixed hour (+08:00, no DST)': {
    zone: 'Asia/Shanghai',
    expr: '0 2 * * *',
    after: '2026-03-07T00:00:00.000Z', // 08:00 local on 03-07
    expected: [
      '2026-03-07T18:00:00.000Z', // 03-08 02:00 +08
      '2026-03-08T18:00:00.000Z', // 03-09 02:00 +08
    ],
  },
  'Asia/Shanghai hour-* across New York’s fall-back instant': {
    zone: 'Asia/Shanghai',
    expr: '30 * * * *',
    after: '2026-11-01T05:00:00.000Z', // 13:00 local
    expected: ['2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z', '2026-11-01T07:30:00.000Z'],
  },

  // ---------------------------------------------------------------- America/New_York, spring forward
  'New York fixed hour in the gap: 02:30 fires at 03:30 EDT': {
    zone: 'America/New_York',
    expr: '30 2 * * *',
    after: '2026-03-06T12:00:00.000Z',
    expected: [
      '2026-03-07T07:30:00.000Z', // 03-07 02:30 EST
      '2026-03-08T07:30:00.000Z', // 03-08 02:30 does not exist → 03:30 EDT
      '2026-03-09T06:30:00.000Z', // 03-09 02:30 EDT
    ],
  },
  'New York hour-* in the gap: shifted 02:30 and real 03:30 are one fire': {
    zone: 'America/New_York',
    expr: '30 * * * *',
    after: '2026-03-08T04:00:00.000Z', // 03-07 23:00 EST
    expected: [
      '2026-03-08T04:30:00.000Z', // 03-07 23:30 EST
      '2026-03-08T05:30:00.000Z', // 00:30 EST
      '2026-03-08T06:30:00.000Z', // 01:30 EST
      '2026-03-08T07:30:00.000Z', // 02:30 (gap) → 03:30 EDT, and 03:30 EDT itself
      '2026-03-08T08:30:00.000Z', // 04:30 EDT
    ],
  },
  'New York several wall times onto one instant: 0,30 2,3 on the gap day': {
    zone: 'America/New_York',
    expr: '0,30 2,3 * * *',
    after: '2026-03-07T06:00:00.000Z',
    expected: [
      '2026-03-07T07:00:00.000Z', // 03-07 02:00 EST
      '2026-03-07T07:30:00.000Z', // 02:30 EST
      '2026-03-07T08:00:00.000Z', // 03:00 EST
      '2026-03-07T08:30:00.000Z', // 03:30 EST
      '2026-03-08T07:00:00.000Z', // 03-08 02:00 (gap) → 03:00 EDT = 03:00 EDT
      '2026-03-08T07:30:00.000Z', // 02:30 (gap) → 03:30 EDT = 03:30 EDT
      '2026-03-09T06:00:00.000Z', // 03-09 02:00 EDT
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
    ],
  },

  // ---------------------------------------------------------------- America/New_York, fall back
  'New York fixed hour in the overlap: first 01:30 only': {
    zone: 'America/New_York',
    expr: '30 1 * * *',
    after: '2026-10-30T12:00:00.000Z',
    expected: [
      '2026-10-31T05:30:00.000Z', // 10-31 01:30 EDT
      '2026-11-01T05:30:00.000Z', // 11-01 01:30 EDT (first pass; the EST pass does not fire)
      '2026-11-02T06:30:00.000Z', // 11-02 01:30 EST
    ],
  },
  'New York hour-* in the overlap: both 01:30s': {
    zone: 'America/New_York',
    expr: '30 * * * *',
    after: '2026-11-01T03:00:00.000Z', // 10-31 23:00 EDT
    expected: [
      '2026-11-01T03:30:00.000Z', // 10-31 23:30 EDT
      '2026-11-01T04:30:00.000Z', // 11-01 00:30 EDT
      '2026-11-01T05:30:00.000Z', // 01:30 EDT
      '2026-11-01T06:30:00.000Z', // 01:30 EST
      '2026-11-01T07:30:00.000Z', // 02:30 EST
      '2026-11-01T08:30:00.000Z', // 03:30 EST
    ],
  },
  'New York seconds field, fixed hour, in the overlap: first pass only': {
    zone: 'America/New_York',
    expr: '0 */20 1 * * *',
    after: '2026-11-01T04:59:59.000Z',
    expected: [
      '2026-11-01T05:00:00.000Z', // 01:00:00 EDT
      '2026-11-01T05:20:00.000Z', // 01:20:00 EDT
      '2026-11-01T05:40:00.000Z', // 01:40:00 EDT
      '2026-11-02T06:00:00.000Z', // 11-02 01:00:00 EST
    ],
  },
  'New York fixed hour after the overlap': {
    zone: 'America/New_York',
    expr: '0 3 * * *',
    after: '2026-10-31T00:00:00.000Z',
    expected: [
      '2026-10-31T07:00:00.000Z', // 10-31 03:00 EDT
      '2026-11-01T08:00:00.000Z', // 11-01 03:00 EST
      '2026-11-02T08:00:00.000Z', // 11-02 03:00 EST
    ],
  },

  // ---------------------------------------------------------------- Europe/London
  'London fixed hour in the gap: 01:30 fires at 02:30 BST': {
    zone: 'Europe/London',
    expr: '30 1 * * *',
    after: '2026-03-27T12:00:00.000Z',
    expected: [
      '2026-03-28T01:30:00.000Z', // 03-28 01:30 GMT
      '2026-03-29T01:30:00.000Z', // 03-29 01:30 does not exist → 02:30 BST
      '2026-03-30T00:30:00.000Z', // 03-30 01:30 BST
    ],
  },
  'London hour-* in the gap': {
    zone: 'Europe/London',
    expr: '15 * * * *',
    after: '2026-03-28T23:00:00.000Z', // 03-28 23:00 GMT
    expected: [
      '2026-03-28T23:15:00.000Z', // 03-28 23:15 GMT
      '2026-03-29T00:15:00.000Z', // 00:15 GMT
      '2026-03-29T01:15:00.000Z', // 01:15 (gap) → 02:15 BST, and 02:15 BST itself
      '2026-03-29T02:15:00.000Z', // 03:15 BST
    ],
  },
  'London fixed hour in the overlap: first 01:30 only': {
    zone: 'Europe/London',
    expr: '30 1 * * *',
    after: '2026-10-23T12:00:00.000Z',
    expected: [
      '2026-10-24T00:30:00.000Z', // 10-24 01:30 BST
      '2026-10-25T00:30:00.000Z', // 10-25 01:30 BST (first pass only)
      '2026-10-26T01:30:00.000Z', // 10-26 01:30 GMT
    ],
  },
  'London hour-* in the overlap: both 01:30s': {
    zone: 'Europe/London',
    expr: '30 * * * *',
    after: '2026-10-24T22:00:00.000Z', // 10-24 23:00 BST
    expected: [
      '2026-10-24T22:30:00.000Z', // 10-24 23:30 BST
      '2026-10-24T23:30:00.000Z', // 10-25 00:30 BST
      '2026-10-25T00:30:00.000Z', // 01:30 BST
      '2026-10-25T01:30:00.000Z', // 01:30 GMT
      '2026-10-25T02:30:00.000Z', // 02:30 GMT
    ],
  },

  // ---------------------------------------------------------------- Australia/Lord_Howe (30-minute changes)
  'Lord Howe fixed hour in the overlap: first 01:45 only': {
    zone: 'Australia/Lord_Howe',
    expr: '45 1 * * *',
    after: '2026-04-03T12:00:00.000Z',
    expected: [
      '2026-04-03T14:45:00.000Z', // 04-04 01:45 +11
      '2026-04-04T14:45:00.000Z', // 04-05 01:45 +11 (first pass only)
      '2026-04-05T15:15:00.000Z', // 04-06 01:45 +10:30
    ],
  },
  'Lord Howe fixed hour, minutes inside and outside the repeated half hour': {
    zone: 'Australia/Lord_Howe',
    expr: '*/15 1 * * *',
    after: '2026-04-04T13:00:00.000Z', // 04-05 00:00 +11
    expected: [
      '2026-04-04T14:00:00.000Z', // 04-05 01:00 +11
      '2026-04-04T14:15:00.000Z', // 01:15 +11
      '2026-04-04T14:30:00.000Z', // 01:30 +11 (first pass)
      '2026-04-04T14:45:00.000Z', // 01:45 +11 (first pass)
      '2026-04-05T14:30:00.000Z', // 04-06 01:00 +10:30
    ],
  },
  'Lord Howe hour-* in the overlap: both passes of 01:30 and 01:45': {
    zone: 'Australia/Lord_Howe',
    expr: '*/15 * * * *',
    after: '2026-04-04T13:50:00.000Z', // 04-05 00:50 +11
    expected: [
      '2026-04-04T14:00:00.000Z', // 01:00 +11
      '2026-04-04T14:15:00.000Z', // 01:15 +11
      '2026-04-04T14:30:00.000Z', // 01:30 +11
      '2026-04-04T14:45:00.000Z', // 01:45 +11
      '2026-04-04T15:00:00.000Z', // 01:30 +10:30 (second pass)
      '2026-04-04T15:15:00.000Z', // 01:45 +10:30 (second pass)
      '2026-04-04T15:30:00.000Z', // 02:00 +10:30
    ],
  },
  'Lord Howe fixed hour in the 30-minute gap: 02:15 fires at 02:45': {
    zone: 'Australia/Lord_Howe',
    expr: '15 2 * * *',
    after: '2026-10-02T12:00:00.000Z',
    expected: [
      '2026-10-02T15:45:00.000Z', // 10-03 02:15 +10:30
      '2026-10-03T15:45:00.000Z', // 10-04 02:15 does not exist → 02:45 +11
      '2026-10-04T15:15:00.000Z', // 10-05 02:15 +11
    ],
  },
  'Lord Howe hour-* in the gap: shifted 02:15 and real 02:45 are one fire': {
    zone: 'Australia/Lord_Howe',
    expr: '15,45 * * * *',
    after: '2026-10-03T14:00:00.000Z', // 10-04 00:30 +10:30
    expected: [
      '2026-10-03T14:15:00.000Z', // 00:45 +10:30
      '2026-10-03T14:45:00.000Z', // 01:15 +10:30
      '2026-10-03T15:15:00.000Z', // 01:45 +10:30
      '2026-10-03T15:45:00.000Z', // 02:15 (gap) → 02:45 +11, and 02:45 +11 itself
      '2026-10-03T16:15:00.000Z', // 03:15 +11
      '2026-10-03T16:45:00.000Z', // 03:45 +11
    ],
  },
  'Lord Howe 0,30 2: gap 02:00 → 02:30, the same instant as 02:30': {
    zone: 'Australia/Lord_Howe',
    expr: '0,30 2 * * *',
    after: '2026-10-02T12:00:00.000Z',
    expected: [
      '2026-10-02T15:30:00.000Z', // 10-03 02:00 +10:30
      '2026-10-02T16:00:00.000Z', // 10-03 02:30 +10:30
      '2026-10-03T15:30:00.000Z', // 10-04 02:00 (gap) → 02:30 +11 = 02:30 +11
      '2026-10-04T15:00:00.000Z', // 10-05 02:00 +11
    ],
  },

  // ---------------------------------------------------------------- changes at midnight
  'Santiago midnight in the gap fires at 01:00 -03': {
    zone: 'America/Santiago',
    expr: '0 0 * * *',
    after: '2026-09-04T12:00:00.000Z',
    expected: [
      '2026-09-05T04:00:00.000Z', // 09-05 00:00 -04
      '2026-09-06T04:00:00.000Z', // 09-06 00:00 does not exist → 01:00 -03
      '2026-09-07T03:00:00.000Z', // 09-07 00:00 -03
    ],
  },
  'Santiago fixed hour in an overlap that crosses midnight: first 23:30 only': {
    zone: 'America/Santiago',
    expr: '30 23 * * *',
    after: '2026-04-03T12:00:00.000Z',
    expected: [
      '2026-04-04T02:30:00.000Z', // 04-03 23:30 -03
      '2026-04-05T02:30:00.000Z', // 04-04 23:30 -03 (first pass)
      '2026-04-06T03:30:00.000Z', // 04-05 23:30 -04
    ],
  },
  'Santiago hour-* in an overlap that crosses midnight: both 23:30s': {
    zone: 'America/Santiago',
    expr: '30 * * * *',
    after: '2026-04-05T02:00:00.000Z', // 04-04 23:00 -03
    expected: [
      '2026-04-05T02:30:00.000Z', // 04-04 23:30 -03
      '2026-04-05T03:30:00.000Z', // 04-04 23:30 -04
      '2026-04-05T04:30:00.000Z', // 04-05 00:30 -04
    ],
  },
  'Apia skipped 2011-12-30: its noon maps onto 12-31 noon, one fire': {
    zone: 'Pacific/Apia',
    expr: '0 12 * * *',
    after: '2011-12-29T00:00:00.000Z',
    expected: [
      '2011-12-29T22:00:00.000Z', // 12-29 12:00 -10
      '2011-12-30T22:00:00.000Z', // 12-30 12:00 (skipped day) → read with -10; = 12-31 12:00 +14
      '2011-12-31T22:00:00.000Z', // 2012-01-01 12:00 +14
    ],
  },
};

describe('cron fires by the DST rule', () => {
  it.each(Object.entries(cases))('%s', (_, { zone, expr, after, expected }) => {
    const compiled = compileSchedule({ type: 'cron', expr, timezone: zone }, { anchorMs: 0 });
    const afterMs = Date.parse(after);
    expect(compiled.between(afterMs, Infinity, expected.length).map(iso)).toEqual(expected);
    expect(iso(compiled.nextAfter(afterMs))).toBe(expected[0]);
  });

  it.each(Object.entries(cases))('%s, walked backwards', (_, { zone, expr, expected }) => {
    const compiled = compileSchedule({ type: 'cron', expr, timezone: zone }, { anchorMs: 0 });
    for (let i = 0; i < expected.length; i++) {
      const fireMs = Date.parse(expected[i] ?? '');
      expect(iso(compiled.lastAtOrBefore(fireMs))).toBe(expected[i]);
      expect(iso(compiled.lastAtOrBefore(fireMs + 999))).toBe(expected[i]);
      if (i > 0) expect(iso(compiled.lastAtOrBefore(fireMs - 1))).toBe(expected[i - 1]);
    }
  });

  it('between stops at its inclusive upper bound and its limit', () => {
    const compiled = compileSchedule({ type: 'cron', expr: '30 * * * *', timezone: 'America/New_York' }, { anchorMs: 0 });
    const after = Date.parse('2026-11-01T05:00:00.000Z');
    expect(compiled.between(after, Date.parse('2026-11-01T06:30:00.000Z'), 10).map(iso)).toEqual([
      '2026-11-01T05:30:00.000Z', // 01:30 EDT
      '2026-11-01T06:30:00.000Z', // 01:30 EST (bound is inclusive)
    ]);
    expect(compiled.between(after, Infinity, 1).map(iso)).toEqual(['2026-11-01T05:30:00.000Z']);
    expect(compiled.between(after, Infinity, 0)).toEqual([]);
  });

  it('fires strictly after afterMs, also from inside a second', () => {
    const compiled = compileSchedule({ type: 'cron', expr: '30 2 * * *', timezone: 'America/New_York' }, { anchorMs: 0 });
    const fire = Date.parse('2026-03-08T07:30:00.000Z'); // 02:30 (gap) → 03:30 EDT
    expect(iso(compiled.nextAfter(fire - 0.5))).toBe('2026-03-08T07:30:00.000Z');
    expect(iso(compiled.nextAfter(fire))).toBe('2026-03-09T06:30:00.000Z');
  });
});
