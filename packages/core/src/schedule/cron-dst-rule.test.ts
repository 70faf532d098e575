/**
 * Property: around every 2026 transition of the tested zones, the compiled schedule fires
 * exactly where a brute-force reading of the DST rule says. The reference enumerates matching
 * wall times one by one and maps each with offsets read from `Intl` (`longOffset`, a different
 * path from zone.ts): exists once → that instant; no instant → in a gap, read with the offset
 * before; two instants → the first, plus the second when the hour field is `*`. Then sort and
 * dedupe. Only the wall-clock matcher is shared (checked against cron-parser in cron-oracle.test.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileSchedule, scheduleProblem } from './compile.js';
import { compileCronMatcher } from './cron-enumerate.js';
import { parseCron } from './cron-fields.js';

const MS_PER_DAY = 86_400_000;
const HOUR_MS = 3_600_000;

/** 2026 transitions (instants checked against Intl once; the zones' published rules). */
const TRANSITIONS: readonly [string, string][] = [
  ['America/New_York', '2026-03-08T07:00:00.000Z'],
  ['America/New_York', '2026-11-01T06:00:00.000Z'],
  ['Europe/London', '2026-03-29T01:00:00.000Z'],
  ['Europe/London', '2026-10-25T01:00:00.000Z'],
  ['Australia/Lord_Howe', '2026-04-04T15:00:00.000Z'],
  ['Australia/Lord_Howe', '2026-10-03T15:30:00.000Z'],
  ['America/Santiago', '2026-04-05T03:00:00.000Z'],
  ['America/Santiago', '2026-09-06T04:00:00.000Z'],
  ['Asia/Shanghai', '2026-03-08T07:00:00.000Z'], // no transition: plain cron
];

const formatters = new Map<string, Intl.DateTimeFormat>();
function offsetMs(timezone: string, ms: number): number {
  let formatter = formatters.get(timezone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone: timezone, timeZoneName: 'longOffset' });
    formatters.set(timezone, formatter);
  }
  const name = formatter.formatToParts(ms).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /^GMT(?:([+-])(\d{2}):(\d{2}))?$/.exec(name);
  if (m === null) throw new Error(`unexpected offset ${name}`);
  if (m[1] === undefined) return 0;
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000;
}

/** The rule, by brute force, for instants in (loMs, hiMs] around one transition. */
function referenceFires(expr: string, timezone: string, loMs: number, hiMs: number): number[] {
  const matcher = compileCronMatcher(parseCron(expr));
  const offsets = [...new Set([offsetMs(timezone, loMs), offsetMs(timezone, hiMs)])];
  const minOffset = Math.min(...offsets);
  const maxOffset = Math.max(...offsets);
  const out = new Set<number>();
  const wallFrom = loMs + minOffset;
  const wallTo = hiMs + maxOffset;
  for (let day = Math.floor(wallFrom / MS_PER_DAY); day * MS_PER_DAY <= wallTo; day++) {
    if (!matcher.matchesDay(day)) continue;
    for (let s = matcher.nextSecondOfDay(0); s >= 0; s = matcher.nextSecondOfDay(s + 1)) {
      const wall = day * MS_PER_DAY + s * 1000;
      const instants = offsets.map((o) => wall - o).filter((t) => t + offsetMs(timezone, t) === wall).sort((a, b) => a - b);
      let fires: number[];
      if (instants.length === 0) fires = [wall - minOffset]; // gap: read with the offset before (the smaller one)
      else if (instants.length === 1 || matcher.fields.hourIsWildcard) fires = instants;
      else fires = instants.slice(0, 1); // overlap, fixed hour: first pass only
      for (const t of fires) if (t > loMs && t <= hiMs) out.add(t);
    }
  }
  return [...out].sort((a, b) => a - b);
}

function field(min: number, max: number): fc.Arbitrary<string> {
  const value = fc.integer({ min, max });
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant('*') },
    { weight: 2, arbitrary: value.map(String) },
    { weight: 1, arbitrary: fc.tuple(value, value).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`) },
    { weight: 1, arbitrary: fc.integer({ min: 2, max: 30 }).map((n) => `*/${n}`) },
    { weight: 1, arbitrary: fc.uniqueArray(value, { minLength: 2, maxLength: 3 }).map((vs) => vs.join(',')) },
  );
}

const expression = fc
  .tuple(
    fc.option(fc.constantFrom('0', '0,30', '*/20', '45'), { nil: undefined }),
    field(0, 59),
    fc.oneof(field(0, 23), fc.constantFrom('1', '2', '0,1,2,3', '23', '1-2')),
    fc.constantFrom('*', '*', '1-31', 'L', '4,5,6'),
    fc.constantFrom('*', '*', '3,4,9,10,11'),
    fc.constantFrom('*', '*', '0', '6,0', '1-5'),
  )
  .map((parts) => parts.filter((p) => p !== undefined).join(' '));

describe('the DST rule, by brute force around each 2026 transition', () => {
  it('agrees with the compiled schedule', () => {
    fc.assert(
      fc.property(fc.constantFrom(...TRANSITIONS), expression, ([timezone, at], expr) => {
        const schedule = { type: 'cron', expr, timezone } as const;
        fc.pre(scheduleProblem(schedule) === null);
        const transitionMs = Date.parse(at);
        const loMs = transitionMs - 20 * HOUR_MS;
        const hiMs = transitionMs + 20 * HOUR_MS;
        const expected = referenceFires(expr, timezone, loMs, hiMs);
        const compiled = compileSchedule(schedule, { anchorMs: 0 });
        expect(compiled.between(loMs, hiMs, 100_000)).toEqual(expected);
        if (expected.length > 0) expect(compiled.lastAtOrBefore(hiMs)).toBe(expected[expected.length - 1]);
      }),
      { numRuns: 60 },
    );
  });
});
