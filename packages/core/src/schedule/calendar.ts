/**
 * Proleptic Gregorian calendar arithmetic on day numbers (days since 1970-01-01) and "wall
 * milliseconds" (a local date-time written as if it were UTC: `Date.UTC(y, m - 1, d, h, mi, s)`).
 * No time zones here: zone.ts maps wall milliseconds to instants.
 */

/** Milliseconds in a calendar day of 24 hours. */
export const MS_PER_DAY = 86_400_000;

/** Seconds in a calendar day of 24 hours. */
export const SECONDS_PER_DAY = 86_400;

/** A calendar date; `month` is 1-12, `day` 1-31. */
export interface CivilDate {
  year: number;
  month: number;
  day: number;
}

/** True when `year` has a 29 February. */
export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/** Number of days of `month` (1-12) in `year`. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2 && isLeapYear(year)) return 29;
  return DAYS_IN_MONTH[month - 1] ?? 31;
}

/** Day number (days since 1970-01-01) of a calendar date (H. Hinnant's `days_from_civil`). */
export function dayNumberOf(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** Calendar date of a day number (H. Hinnant's `civil_from_days`). */
export function civilDateOf(dayNumber: number): CivilDate {
  const z = dayNumber + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** Day of the week of a day number: 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday). */
export function weekdayOf(dayNumber: number): number {
  return (((dayNumber + 4) % 7) + 7) % 7;
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/** `YYYY-MM-DD` of a day number (years 0000-9999). */
export function formatIsoDate(dayNumber: number): string {
  const { year, month, day } = civilDateOf(dayNumber);
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
}

/** Day number of a strict `YYYY-MM-DD` calendar date, or null when the text is not one. */
export function parseIsoDate(text: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (match === null) return null;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  return dayNumberOf(year, month, day);
}
