/**
 * Business dates (DESIGN §3, R1): `biz_date` is the expected time's date in the task's zone,
 * moved by the task's `bizDateOffsetDays` (−1 for "T-1": a 02:00 run processes yesterday).
 */
import { formatIsoDate, parseIsoDate } from './calendar.js';
import { zoneFor } from './zone.js';

function checkOffsetDays(offsetDays: number): void {
  if (!Number.isSafeInteger(offsetDays)) throw new RangeError(`offsetDays must be a whole number of days, got ${String(offsetDays)}`);
}

/**
 * The business date (`YYYY-MM-DD`) of a slot: the date of the instant `expectedMs` on the wall
 * clock of `timezone`, plus `offsetDays`.
 * @throws RangeError for an unknown zone or a fractional `offsetDays`.
 */
export function bizDateOf(expectedMs: number, timezone: string, offsetDays: number): string {
  checkOffsetDays(offsetDays);
  if (!Number.isFinite(expectedMs)) throw new RangeError(`expectedMs must be a finite number of epoch milliseconds, got ${String(expectedMs)}`);
  return formatIsoDate(zoneFor(timezone).locate(expectedMs).day.dayNumber + offsetDays);
}

/**
 * The first instant whose {@link bizDateOf} (same zone and offset) is `bizDate`: local midnight
 * of the date `bizDate − offsetDays`, or, when that midnight does not exist (a DST change at
 * 00:00), the first instant after the gap. This is the expected time of a dependency-only
 * child's instance (R1).
 * @throws RangeError for a malformed date, an unknown zone or a fractional `offsetDays`.
 */
export function startOfBizDate(bizDate: string, timezone: string, offsetDays: number): number {
  checkOffsetDays(offsetDays);
  const dayNumber = parseIsoDate(bizDate);
  if (dayNumber === null) throw new RangeError(`bizDate ${JSON.stringify(bizDate)} is not a YYYY-MM-DD calendar date`);
  return zoneFor(timezone).localDay(dayNumber - offsetDays).firstMs;
}
