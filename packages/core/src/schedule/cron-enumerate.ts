/**
 * Wall-clock enumeration of a cron expression: which local dates match its date fields, and
 * which seconds of a matching date match its time fields. No time zone is involved here; all
 * of it is calendar arithmetic on day numbers and seconds of the day (cron-dst.ts maps the
 * resulting wall times to instants). Every lookup is constant time or a walk over dates that
 * jumps whole months the month field excludes.
 */
import { SECONDS_PER_DAY, civilDateOf, daysInMonth, weekdayOf } from './calendar.js';
import type { CronFields } from './cron-fields.js';

/** A compiled cron expression, answering wall-clock questions. Obtain one with {@link compileCronMatcher}. */
export interface CronMatcher {
  readonly fields: CronFields;
  /** True when the local date `dayNumber` (days since 1970-01-01) matches the month, day-of-month and day-of-week fields. */
  matchesDay(dayNumber: number): boolean;
  /** The first matching date in `[fromDay, lastDay]`, or null. */
  nextMatchingDay(fromDay: number, lastDay: number): number | null;
  /** The last matching date in `[firstDay, fromDay]`, or null. */
  prevMatchingDay(fromDay: number, firstDay: number): number | null;
  /** The first matching second of the day (0-86399) at or after `secondOfDay`, or -1. */
  nextSecondOfDay(secondOfDay: number): number;
  /** The last matching second of the day at or before `secondOfDay` (0-86399), or -1. */
  prevSecondOfDay(secondOfDay: number): number;
}

interface UnitTable {
  readonly match: Uint8Array;
  /** `next[i]`: smallest matching value ≥ i, or -1 (length size + 1, so `next[size]` is -1). */
  readonly next: Int8Array;
  /** `prev[i]`: largest matching value ≤ i, or -1. */
  readonly prev: Int8Array;
  readonly first: number;
  readonly last: number;
}

function unitTable(values: readonly number[], size: number): UnitTable {
  const match = new Uint8Array(size);
  for (const value of values) if (value >= 0 && value < size) match[value] = 1;
  const next = new Int8Array(size + 1).fill(-1);
  for (let i = size - 1; i >= 0; i--) next[i] = match[i] === 1 ? i : (next[i + 1] ?? -1);
  const prev = new Int8Array(size).fill(-1);
  for (let i = 0; i < size; i++) prev[i] = match[i] === 1 ? i : i > 0 ? (prev[i - 1] ?? -1) : -1;
  return { match, next, prev, first: next[0] ?? -1, last: prev[size - 1] ?? -1 };
}

function flags(values: readonly number[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (const value of values) if (value >= 0 && value < size) out[value] = 1;
  return out;
}

/** Build the lookup tables of a parsed expression (once per expression). */
export function compileCronMatcher(fields: CronFields): CronMatcher {
  const seconds = unitTable(fields.seconds, 60);
  const minutes = unitTable(fields.minutes, 60);
  const hours = unitTable(fields.hours, 24);
  const months = flags(fields.months, 13);
  const daysOfMonth = flags(fields.daysOfMonth, 32);
  const daysOfWeek = flags(fields.daysOfWeek, 7);
  const lastWeekdays = flags(fields.lastWeekdaysOfMonth, 7);
  const { lastDayOfMonth, nthWeekdayOfMonth, dayOfMonthIsWildcard, dayOfWeekIsWildcard } = fields;

  // The day rules of cron-parser (CronExpression#matchDayOfMonth): both fields restricted → either
  // may match; one restricted → that one decides; neither → every day.
  const dateMatches = (day: number, weekday: number, monthLength: number): boolean => {
    const domMatch = daysOfMonth[day] === 1 || (lastDayOfMonth && day === monthLength);
    const dowMatch =
      (daysOfWeek[weekday] === 1 && (nthWeekdayOfMonth <= 0 || Math.ceil(day / 7) === nthWeekdayOfMonth)) ||
      (lastWeekdays[weekday] === 1 && day > monthLength - 7);
    if (!dayOfMonthIsWildcard && !dayOfWeekIsWildcard) return domMatch || dowMatch;
    if (!dayOfWeekIsWildcard) return dowMatch;
    return domMatch;
  };

  const secondsFirst = seconds.first;
  const secondsLast = seconds.last;
  const minutesFirst = minutes.first;
  const minutesLast = minutes.last;

  return {
    fields,
    matchesDay(dayNumber) {
      const { year, month, day } = civilDateOf(dayNumber);
      return months[month] === 1 && dateMatches(day, weekdayOf(dayNumber), daysInMonth(year, month));
    },
    nextMatchingDay(fromDay, lastDay) {
      let d = fromDay;
      let { year, month, day } = civilDateOf(d);
      let weekday = weekdayOf(d);
      let monthLength = daysInMonth(year, month);
      while (d <= lastDay) {
        if (months[month] !== 1) {
          const skip = monthLength - day + 1;
          d += skip;
          weekday = (weekday + skip) % 7;
          day = 1;
          month = month === 12 ? 1 : month + 1;
          if (month === 1) year++;
          monthLength = daysInMonth(year, month);
          continue;
        }
        if (dateMatches(day, weekday, monthLength)) return d;
        d++;
        weekday = (weekday + 1) % 7;
        if (++day > monthLength) {
          day = 1;
          month = month === 12 ? 1 : month + 1;
          if (month === 1) year++;
          monthLength = daysInMonth(year, month);
        }
      }
      return null;
    },
    prevMatchingDay(fromDay, firstDay) {
      let d = fromDay;
      let { year, month, day } = civilDateOf(d);
      let weekday = weekdayOf(d);
      let monthLength = daysInMonth(year, month);
      while (d >= firstDay) {
        if (months[month] !== 1) {
          d -= day;
          weekday = (((weekday - day) % 7) + 7) % 7;
          month = month === 1 ? 12 : month - 1;
          if (month === 12) year--;
          monthLength = daysInMonth(year, month);
          day = monthLength;
          continue;
        }
        if (dateMatches(day, weekday, monthLength)) return d;
        d--;
        weekday = (weekday + 6) % 7;
        if (--day < 1) {
          month = month === 1 ? 12 : month - 1;
          if (month === 12) year--;
          monthLength = daysInMonth(year, month);
          day = monthLength;
        }
      }
      return null;
    },
    nextSecondOfDay(secondOfDay) {
      if (secondOfDay >= SECONDS_PER_DAY) return -1;
      const sod = Math.max(0, secondOfDay);
      const h = Math.floor(sod / 3600);
      const m = Math.floor(sod / 60) % 60;
      const s = sod % 60;
      if (hours.match[h] === 1) {
        if (minutes.match[m] === 1) {
          const s2 = seconds.next[s] ?? -1;
          if (s2 >= 0) return h * 3600 + m * 60 + s2;
        }
        const m2 = minutes.next[m + 1] ?? -1;
        if (m2 >= 0) return h * 3600 + m2 * 60 + secondsFirst;
      }
      const h2 = hours.next[h + 1] ?? -1;
      return h2 < 0 ? -1 : h2 * 3600 + minutesFirst * 60 + secondsFirst;
    },
    prevSecondOfDay(secondOfDay) {
      if (secondOfDay < 0) return -1;
      const sod = Math.min(SECONDS_PER_DAY - 1, secondOfDay);
      const h = Math.floor(sod / 3600);
      const m = Math.floor(sod / 60) % 60;
      const s = sod % 60;
      if (hours.match[h] === 1) {
        if (minutes.match[m] === 1) {
          const s2 = seconds.prev[s] ?? -1;
          if (s2 >= 0) return h * 3600 + m * 60 + s2;
        }
        const m2 = m > 0 ? (minutes.prev[m - 1] ?? -1) : -1;
        if (m2 >= 0) return h * 3600 + m2 * 60 + secondsLast;
      }
      const h2 = h > 0 ? (hours.prev[h - 1] ?? -1) : -1;
      return h2 < 0 ? -1 : h2 * 3600 + minutesLast * 60 + secondsLast;
    },
  };
}
