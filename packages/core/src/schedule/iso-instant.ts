/**
 * Strict ISO-8601 instants for `once.at` and `fixed_rate.startAt`. `Date.parse` is not used
 * because it accepts 30 February and reads a string without a zone designator in the process's
 * own zone; here a designator (`Z`, `±HH:MM`, `±HHMM` or `±HH`) is required and the calendar is checked.
 */
import { MS_PER_DAY, daysInMonth, dayNumberOf } from './calendar.js';

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?)$/;

/**
 * Epoch milliseconds of an ISO-8601 date-time with a zone designator, such as
 * `2026-12-01T02:00:00.000Z` or `2026-12-01T10:00:00+08:00` (also `+0800`, `+08`); digits past the millisecond are
 * dropped. Null when the text is not one (including impossible dates and a missing designator).
 */
export function parseIsoInstantMs(text: string): number | null {
  if (typeof text !== 'string') return null;
  const m = ISO_INSTANT.exec(text);
  if (m === null) return null;
  const [, y, mo, d, h, mi, s = '0', fraction = '', zulu, sign, oh = '0', om = '0'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const offsetHours = Number(oh);
  const offsetMinutes = Number(om);
  if (zulu === undefined && (offsetHours > 23 || offsetMinutes > 59)) return null;
  const offsetMs = zulu === undefined ? (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000 : 0;
  const millisecond = Number(fraction.padEnd(3, '0').slice(0, 3));
  return dayNumberOf(year, month, day) * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000 + millisecond - offsetMs;
}
