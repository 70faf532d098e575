/**
 * Calendars (ADMIN-API.md "Calendars"): a named set of dates in a time zone. A task with
 * `"calendar": name` does not fire on a slot whose date, in the calendar's zone, is listed.
 * {@link excludeCalendarDates} wraps a compiled schedule so that every question the scheduler,
 * the preview and the backfill ask (next fire, fires in a range, last fire) skips those slots:
 * one rule, one place. {@link isExcludedByCalendar} tells a skipped slot from a fire.
 */
import type { CompiledSchedule } from './compile.js';
import { localDateTimeParts } from './zone.js';

/** The dates a calendar excludes, in its zone. */
export interface CalendarDates {
  /** IANA zone in which a slot's date is read. */
  readonly timezone: string;
  /** `YYYY-MM-DD` dates. */
  readonly dates: ReadonlySet<string>;
}

/** Most consecutive excluded fires skipped by one question before giving up (a calendar holds at most 10,000 dates). */
const MAX_SKIPPED_IN_A_ROW = 1_000_000;

/** `YYYY-MM-DD` of the instant `ms` in `timezone`. */
export function dateInZone(ms: number, timezone: string): string {
  const p = localDateTimeParts(ms, timezone);
  return `${String(p.year).padStart(4, '0')}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
}

/** Whether the slot at `ms` falls on a date the calendar lists. */
export function isExcludedByCalendar(ms: number, calendar: CalendarDates): boolean {
  return calendar.dates.size > 0 && calendar.dates.has(dateInZone(ms, calendar.timezone));
}

/** `compiled` without the fires on the calendar's dates (the same object when it lists none). */
export function excludeCalendarDates(compiled: CompiledSchedule, calendar: CalendarDates): CompiledSchedule {
  if (calendar.dates.size === 0) return compiled;
  const excluded = (ms: number): boolean => isExcludedByCalendar(ms, calendar);
  return {
    schedule: compiled.schedule,
    nextAfter(afterMs) {
      let t = compiled.nextAfter(afterMs);
      for (let i = 0; t !== null && excluded(t) && i < MAX_SKIPPED_IN_A_ROW; i++) t = compiled.nextAfter(t);
      return t !== null && excluded(t) ? null : t;
    },
    lastAtOrBefore(untilMs) {
      let t = compiled.lastAtOrBefore(untilMs);
      for (let i = 0; t !== null && excluded(t) && i < MAX_SKIPPED_IN_A_ROW; i++) t = compiled.lastAtOrBefore(t - 1);
      return t !== null && excluded(t) ? null : t;
    },
    between(afterMs, untilMs, limit) {
      const out: number[] = [];
      let from = afterMs;
      // Ask in pages of `limit` until enough kept fires are found or the range is exhausted: a
      // page cut short by the limit must not read as the end of the range.
      for (let pages = 0; out.length < limit && pages < MAX_SKIPPED_IN_A_ROW; pages++) {
        const page = compiled.between(from, untilMs, Math.max(limit, 16));
        for (const t of page) {
          if (!excluded(t)) out.push(t);
          if (out.length === limit) break;
        }
        if (page.length < Math.max(limit, 16)) break;
        from = page[page.length - 1] as number;
      }
      return out;
    },
  };
}
