/**
 * The DST rule of DESIGN §3, owned by @ax/core: a cron expression is evaluated on the zone's
 * wall clock, and each matching wall time is mapped to instants:
 *
 * - a wall time that exists once fires at that instant;
 * - a wall time in a gap (spring forward) fires once, later by the length of the gap (it is read
 *   with the offset in force just before the transition): `30 2 * * *` in New York on
 *   2026-03-08 fires at 03:30 EDT;
 * - a wall time in an overlap (fall back) fires on both passes when the expression's hour field
 *   is literally `*` (`0-23` or a step over `*` count as listed hours), otherwise only on the first pass;
 * - several wall times mapping to one instant fire once (`02:30` shifted to `03:30` and `03:30`).
 *
 * The search runs over local dates (cron-enumerate.ts) and, inside a date, over the pieces of
 * instants zone.ts describes: spans with one offset (the second pass of a fall back flagged)
 * and gaps. In each piece the wall clock is `t + offset`, increasing with `t`, so the first
 * (or last) matching second is found in constant time. Because the answer is the minimum (or
 * maximum) over pieces, an instant reached twice counts once.
 */
import { MS_PER_DAY } from './calendar.js';
import type { CronMatcher } from './cron-enumerate.js';
import { MAX_ABS_OFFSET_MS, type LocalDay, type Zone } from './zone.js';

/** How far ahead (or back) a search looks for a matching date before answering "never". */
export const CRON_SEARCH_HORIZON_DAYS = 366 * 100;

/** Fire times of one cron expression in one zone. */
export interface ZonedCron {
  /** The first fire strictly after `afterMs`, or null if none within {@link CRON_SEARCH_HORIZON_DAYS}. */
  readonly nextAfter: (afterMs: number) => number | null;
  /** The last fire at or before `untilMs`, or null if none within {@link CRON_SEARCH_HORIZON_DAYS}. */
  readonly lastAtOrBefore: (untilMs: number) => number | null;
}

/** Bind a compiled expression to a zone. Cheap: the zone's per-day cache is shared by every schedule in it. */
export function zonedCron(matcher: CronMatcher, zone: Zone): ZonedCron {
  const bothPasses = matcher.fields.hourIsWildcard;

  /** First fire ≥ `fromMs` among the instants `[startMs, endMs)` whose wall clock reads `t + offsetMs`. */
  const firstIn = (day: LocalDay, startMs: number, endMs: number, offsetMs: number, fromMs: number): number => {
    const lo = Math.max(startMs, fromMs);
    if (lo >= endMs) return Infinity;
    const second = matcher.nextSecondOfDay(Math.ceil((lo + offsetMs - day.wallStartMs) / 1000));
    if (second < 0) return Infinity;
    const t = day.wallStartMs + second * 1000 - offsetMs;
    return t < endMs ? t : Infinity;
  };

  /** Last fire ≤ `toMs` among the instants `[startMs, endMs)` whose wall clock reads `t + offsetMs`. */
  const lastIn = (day: LocalDay, startMs: number, endMs: number, offsetMs: number, toMs: number): number => {
    const hi = Math.min(endMs - 1, toMs);
    if (hi < startMs) return -Infinity;
    const second = matcher.prevSecondOfDay(Math.floor((hi + offsetMs - day.wallStartMs) / 1000));
    if (second < 0) return -Infinity;
    const t = day.wallStartMs + second * 1000 - offsetMs;
    return t >= startMs ? t : -Infinity;
  };

  const firstInDay = (day: LocalDay, fromMs: number): number => {
    let best = Infinity;
    for (const span of day.spans) {
      if (span.secondPass && !bothPasses) continue;
      best = Math.min(best, firstIn(day, span.startMs, span.endMs, span.offsetMs, fromMs));
    }
    for (const gap of day.gaps) best = Math.min(best, firstIn(day, gap.startMs, gap.endMs, gap.offsetMs, fromMs));
    return best;
  };

  const lastInDay = (day: LocalDay, toMs: number): number => {
    let best = -Infinity;
    for (const span of day.spans) {
      if (span.secondPass && !bothPasses) continue;
      best = Math.max(best, lastIn(day, span.startMs, span.endMs, span.offsetMs, toMs));
    }
    for (const gap of day.gaps) best = Math.max(best, lastIn(day, gap.startMs, gap.endMs, gap.offsetMs, toMs));
    return best;
  };

  return {
    nextAfter: (afterMs) => {
      // Fires are whole seconds, so "strictly after afterMs" is "at or after fromMs".
      const fromMs = Math.floor(afterMs) + 1;
      // An instant of local date d lies within MAX_ABS_OFFSET_MS of d's wall times.
      const firstDay = Math.floor((fromMs - MAX_ABS_OFFSET_MS) / MS_PER_DAY);
      const lastDay = firstDay + CRON_SEARCH_HORIZON_DAYS;
      let best = Infinity;
      for (let d = matcher.nextMatchingDay(firstDay, lastDay); d !== null; d = matcher.nextMatchingDay(d + 1, lastDay)) {
        if (d * MS_PER_DAY - MAX_ABS_OFFSET_MS >= best) break;
        best = Math.min(best, firstInDay(zone.localDay(d), fromMs));
      }
      return best === Infinity ? null : best;
    },
    lastAtOrBefore: (untilMs) => {
      const toMs = Math.floor(untilMs);
      const lastDay = Math.floor((toMs + MAX_ABS_OFFSET_MS) / MS_PER_DAY);
      const firstDay = lastDay - CRON_SEARCH_HORIZON_DAYS;
      let best = -Infinity;
      for (let d = matcher.prevMatchingDay(lastDay, firstDay); d !== null; d = matcher.prevMatchingDay(d - 1, firstDay)) {
        if ((d + 1) * MS_PER_DAY + MAX_ABS_OFFSET_MS <= best) break;
        best = Math.max(best, lastInDay(zone.localDay(d), toMs));
      }
      return best === -Infinity ? null : best;
    },
  };
}
