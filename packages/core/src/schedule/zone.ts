/**
 * Time-zone offset math with `Intl.DateTimeFormat` (the IANA database that ships with Node).
 *
 * The unit of work is the *local day*: for a calendar date in a zone, which instants read that
 * date on the wall clock (`spans`), which of them repeat a wall time already seen (fall back), and
 * which wall times of that date never occur (spring forward, `gaps`). Each local day is computed
 * once per zone and cached, so enumerating many schedules costs one map lookup per day.
 * A day whose offset is the same at both ends of its window (and in the middle) has no
 * transition and costs three `Intl` calls; only a transition day is searched further.
 */
import { MS_PER_DAY, civilDateOf, dayNumberOf, weekdayOf } from './calendar.js';

/** Instants `[startMs, endMs)` with one UTC offset: the wall clock reads `t + offsetMs`. */
export interface ZoneSpan {
  readonly startMs: number;
  readonly endMs: number;
  /** Local time minus UTC, in milliseconds (New York in winter: `-5 * 3_600_000`). */
  readonly offsetMs: number;
  /** True when these instants repeat wall times the day already showed (the second pass of a fall back). */
  readonly secondPass: boolean;
}

/**
 * Wall times of a date that never show on the clock (spring forward). They are mapped with the
 * offset in force before the transition (`offsetMs`), which places the wall time `w` at instant
 * `w - offsetMs` in `[startMs, endMs)`: later than the wall time says, by exactly the gap.
 */
export interface ZoneGap {
  readonly startMs: number;
  readonly endMs: number;
  readonly offsetMs: number;
}

/** One calendar date in one zone. */
export interface LocalDay {
  /** Days since 1970-01-01 of the local date. */
  readonly dayNumber: number;
  /** `dayNumber * MS_PER_DAY`: local midnight written as wall milliseconds. */
  readonly wallStartMs: number;
  /** The instants whose wall-clock date is this date, in time order. Empty only for a skipped date. */
  readonly spans: readonly ZoneSpan[];
  /** Skipped wall times of this date, mapped later by the length of the gap. */
  readonly gaps: readonly ZoneGap[];
  /** The first instant whose local date is this date (for a date skipped entirely: where its midnight is mapped). */
  readonly firstMs: number;
  /** True when a UTC offset change touches this date. */
  readonly hasTransition: boolean;
}

/** Local calendar fields of an instant in a zone. */
export interface LocalDateTimeParts {
  year: number;
  /** 1-12. */
  month: number;
  /** 1-31. */
  day: number;
  /** 0-23. */
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
  /** 0 = Sunday … 6 = Saturday. */
  weekday: number;
  /** Local time minus UTC, in milliseconds. */
  offsetMs: number;
}

interface Transition {
  atMs: number;
  offsetBeforeMs: number;
  offsetAfterMs: number;
}

/** No zone has ever been 16 h or more away from UTC (local mean times included), so a date's instants lie within this of its wall times. */
export const MAX_ABS_OFFSET_MS = 16 * 3_600_000;
/** Local days kept per zone before the cache is emptied (≈ 27 years of days). */
const MAX_CACHED_DAYS_PER_ZONE = 10_000;
/** Zones kept before the zone cache is emptied (the IANA database has about 600 names). */
const MAX_CACHED_ZONES = 2_000;

const WALL_CLOCK_PATTERN = /^(\d+)\/(\d+)\/(\d+), (\d+):(\d+):(\d+)$/;

/** A time zone with cached offsets. Obtain one with {@link zoneFor}. */
export class Zone {
  readonly #formatter: Intl.DateTimeFormat;
  readonly #days = new Map<number, LocalDay>();

  /** @param name IANA name, already checked to be one `Intl` knows. */
  constructor(
    readonly name: string,
    formatter: Intl.DateTimeFormat,
  ) {
    this.#formatter = formatter;
  }

  /** UTC offset in force at `ms`, asked of `Intl` directly (uncached; whole seconds). */
  offsetMsAtUncached(ms: number): number {
    const floored = Math.floor(ms / 1000) * 1000;
    const text = this.#formatter.format(floored);
    const match = WALL_CLOCK_PATTERN.exec(text);
    let wallMs: number;
    if (match !== null) {
      wallMs = wallMsOf(Number(match[3]), Number(match[1]), Number(match[2]), Number(match[4]), Number(match[5]), Number(match[6]));
    } else {
      const parts: Record<string, number> = {};
      for (const part of this.#formatter.formatToParts(floored)) parts[part.type] = Number(part.value);
      wallMs = wallMsOf(parts['year'] ?? 1970, parts['month'] ?? 1, parts['day'] ?? 1, parts['hour'] ?? 0, parts['minute'] ?? 0, parts['second'] ?? 0);
    }
    return wallMs - floored;
  }

  /** The local day of `dayNumber` (days since 1970-01-01 of the local date), cached. */
  localDay(dayNumber: number): LocalDay {
    let day = this.#days.get(dayNumber);
    if (day === undefined) {
      if (this.#days.size >= MAX_CACHED_DAYS_PER_ZONE) this.#days.clear();
      day = this.#computeLocalDay(dayNumber);
      this.#days.set(dayNumber, day);
    }
    return day;
  }

  /** The local day that contains the instant `ms`, and the offset in force then. */
  locate(ms: number): { day: LocalDay; offsetMs: number } {
    const utcDay = Math.floor(ms / MS_PER_DAY);
    for (const candidate of [utcDay, utcDay - 1, utcDay + 1]) {
      const day = this.localDay(candidate);
      for (const span of day.spans) {
        if (ms >= span.startMs && ms < span.endMs) return { day, offsetMs: span.offsetMs };
      }
    }
    // Only reachable if Intl reported a change the day windows did not see; ask directly.
    const offsetMs = this.offsetMsAtUncached(ms);
    return { day: this.localDay(Math.floor((ms + offsetMs) / MS_PER_DAY)), offsetMs };
  }

  #computeLocalDay(dayNumber: number): LocalDay {
    const wallStartMs = dayNumber * MS_PER_DAY;
    const wallEndMs = wallStartMs + MS_PER_DAY;
    const lo = wallStartMs - MAX_ABS_OFFSET_MS;
    const mid = wallStartMs + MS_PER_DAY / 2;
    const hi = wallEndMs + MAX_ABS_OFFSET_MS;
    const offLo = this.offsetMsAtUncached(lo);
    const offMid = this.offsetMsAtUncached(mid);
    const offHi = this.offsetMsAtUncached(hi);
    if (offLo === offMid && offMid === offHi) {
      const startMs = wallStartMs - offLo;
      return {
        dayNumber,
        wallStartMs,
        spans: [{ startMs, endMs: wallEndMs - offLo, offsetMs: offLo, secondPass: false }],
        gaps: [],
        firstMs: startMs,
        hasTransition: false,
      };
    }
    const transitions: Transition[] = [];
    this.#findTransitions(lo, offLo, mid, offMid, transitions);
    this.#findTransitions(mid, offMid, hi, offHi, transitions);
    return buildTransitionDay(dayNumber, offLo, transitions);
  }

  /** Bisect `[loMs, hiMs]` (whole seconds, offsets differing at the ends) down to the second of each change. */
  #findTransitions(loMs: number, offLo: number, hiMs: number, offHi: number, out: Transition[]): void {
    if (offLo === offHi) return;
    let lo = loMs;
    let hi = hiMs;
    while (hi - lo > 1000) {
      const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
      const offMid = this.offsetMsAtUncached(mid);
      if (offMid === offLo) {
        lo = mid;
      } else if (offMid === offHi) {
        hi = mid;
      } else {
        this.#findTransitions(lo, offLo, mid, offMid, out);
        this.#findTransitions(mid, offMid, hi, offHi, out);
        return;
      }
    }
    out.push({ atMs: hi, offsetBeforeMs: offLo, offsetAfterMs: offHi });
  }
}

function wallMsOf(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  return dayNumberOf(year, month, day) * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000;
}

/** Cut a date with offset changes into spans (first and second pass) and gaps. */
function buildTransitionDay(dayNumber: number, firstOffsetMs: number, transitions: readonly Transition[]): LocalDay {
  const wallStartMs = dayNumber * MS_PER_DAY;
  const wallEndMs = wallStartMs + MS_PER_DAY;
  const spans: ZoneSpan[] = [];
  const gaps: ZoneGap[] = [];
  const pushSpan = (startMs: number, endMs: number, offsetMs: number, secondPass: boolean): void => {
    if (startMs < endMs) spans.push({ startMs, endMs, offsetMs, secondPass });
  };
  let segmentStart = -Infinity;
  let offsetMs = firstOffsetMs;
  let repeatUntilMs = -Infinity; // end of the second pass that started this segment, if any
  for (let i = 0; i <= transitions.length; i++) {
    const transition = transitions[i];
    const segmentEnd = transition === undefined ? Infinity : transition.atMs;
    const startMs = Math.max(segmentStart, wallStartMs - offsetMs);
    const endMs = Math.min(segmentEnd, wallEndMs - offsetMs);
    const splitMs = Math.min(Math.max(repeatUntilMs, startMs), endMs);
    pushSpan(startMs, splitMs, offsetMs, true);
    pushSpan(splitMs, endMs, offsetMs, false);
    if (transition === undefined) break;
    const { atMs, offsetBeforeMs, offsetAfterMs } = transition;
    if (offsetAfterMs > offsetBeforeMs) {
      const gapStart = Math.max(atMs, wallStartMs - offsetBeforeMs);
      const gapEnd = Math.min(atMs + (offsetAfterMs - offsetBeforeMs), wallEndMs - offsetBeforeMs);
      if (gapStart < gapEnd) gaps.push({ startMs: gapStart, endMs: gapEnd, offsetMs: offsetBeforeMs });
      repeatUntilMs = -Infinity;
    } else {
      repeatUntilMs = atMs + (offsetBeforeMs - offsetAfterMs);
    }
    segmentStart = atMs;
    offsetMs = offsetAfterMs;
  }
  const firstMs = spans[0]?.startMs ?? gaps[0]?.startMs ?? wallStartMs - firstOffsetMs;
  return { dayNumber, wallStartMs, spans, gaps, firstMs, hasTransition: true };
}

const zones = new Map<string, Zone>();

/** An offset time-zone identifier (`+08:00`, `-0530`, `+08`), which IANA names never start like. */
const OFFSET_ZONE = /^[+\-\u2212]/;

/**
 * The cached {@link Zone} of an IANA time-zone name.
 * @throws RangeError when `Intl` does not know the name.
 */
export function zoneFor(timezone: string): Zone {
  let zone = zones.get(timezone);
  if (zone === undefined) {
    // Node 22+ (ECMA-402 2024) also accepts offset zones such as "+08:00": an offset has no DST
    // rules and is not a place, so it is refused on every Node alike.
    if (typeof timezone !== 'string' || timezone.trim() !== timezone || timezone === '' || OFFSET_ZONE.test(timezone)) {
      throw new RangeError(`time zone ${JSON.stringify(timezone)} is not an IANA time-zone name`);
    }
    let formatter: Intl.DateTimeFormat;
    try {
      formatter = new Intl.DateTimeFormat('en-US', {
        timeZone: timezone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch (error) {
      throw new RangeError(`time zone ${JSON.stringify(timezone)} is not an IANA time-zone name`, { cause: error });
    }
    if (zones.size >= MAX_CACHED_ZONES) zones.clear();
    zone = new Zone(timezone, formatter);
    zones.set(timezone, zone);
  }
  return zone;
}

/** True when `tz` is a time-zone name `Intl` knows (IANA names such as `Asia/Shanghai`, and `UTC`). */
export function isValidTimeZone(tz: string): boolean {
  try {
    zoneFor(tz);
    return true;
  } catch {
    // RangeError from zoneFor is the answer "not valid", not a failure.
    return false;
  }
}

/**
 * UTC offset of `timezone` at the instant `ms`, in milliseconds (local minus UTC; whole seconds).
 * @throws RangeError for an unknown zone.
 */
export function utcOffsetMs(timezone: string, ms: number): number {
  return zoneFor(timezone).locate(ms).offsetMs;
}

/**
 * The wall-clock fields of the instant `ms` in `timezone`, for display and templates.
 * @throws RangeError for an unknown zone.
 */
export function localDateTimeParts(ms: number, timezone: string): LocalDateTimeParts {
  const { day, offsetMs } = zoneFor(timezone).locate(ms);
  const wallMs = ms + offsetMs;
  const msOfDay = wallMs - day.wallStartMs;
  const { year, month, day: dayOfMonth } = civilDateOf(day.dayNumber);
  return {
    year,
    month,
    day: dayOfMonth,
    hour: Math.floor(msOfDay / 3_600_000),
    minute: Math.floor(msOfDay / 60_000) % 60,
    second: Math.floor(msOfDay / 1000) % 60,
    millisecond: Math.floor(msOfDay) % 1000,
    weekday: weekdayOf(day.dayNumber),
    offsetMs,
  };
}

function pad(value: number, width = 2): string {
  return String(value).padStart(width, '0');
}

/** `±HH:MM` (or `±HH:MM:SS` for a local mean time) of an offset in milliseconds. */
export function formatUtcOffset(offsetMs: number): string {
  const sign = offsetMs < 0 ? '-' : '+';
  const totalSeconds = Math.abs(offsetMs) / 1000;
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor(totalSeconds / 60) % 60;
  const seconds = totalSeconds % 60;
  return `${sign}${pad(hours)}:${pad(minutes)}${seconds === 0 ? '' : `:${pad(seconds)}`}`;
}

/**
 * ISO-8601 local date-time with its offset, e.g. `2026-03-08T03:30:00.000-04:00`: an instant as
 * the zone's clock shows it.
 * @throws RangeError for an unknown zone.
 */
export function formatInZone(ms: number, timezone: string): string {
  const p = localDateTimeParts(ms, timezone);
  return (
    `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}` +
    `.${pad(p.millisecond, 3)}${formatUtcOffset(p.offsetMs)}`
  );
}
