/**
 * A calendar (ADMIN-API.md "Calendars"): `{"team","timezone","dates":["YYYY-MM-DD",…]}`, at
 * most 10,000 dates, stored per name. The body of `PUT /api/v1/calendars/{name}`.
 */
import { z } from 'zod';
import { parseIsoDate } from '../schedule/calendar.js';
import { DEFAULT_TEAM, teamNameSchema, type ValidationResult } from './definition.js';
import { convertZodIssue, describeValue } from './issues.js';
import { timeZoneSchema } from './schedule-schema.js';

/** `^[a-z0-9][a-z0-9_.-]{0,63}$`: a calendar name. */
export const CALENDAR_NAME_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/** Most dates one calendar holds. */
export const MAX_CALENDAR_DATES = 10_000;

/** A calendar name (path, and a task's `calendar`). */
export const calendarNameSchema = z.string().regex(CALENDAR_NAME_PATTERN, {
  error: (iss) => `must be a calendar name matching ^[a-z0-9][a-z0-9_.-]{0,63}$, got ${describeValue(iss.input)}`,
});

const dateSchema = z.string().refine((d) => parseIsoDate(d) !== null, {
  error: (iss) => `must be a calendar date YYYY-MM-DD, got ${describeValue(iss.input)}`,
});

/** The calendar body: dates deduplicated and sorted. */
export const calendarBodySchema = z.strictObject({
  /** The owning team (must exist); default `default`. */
  team: teamNameSchema.default(DEFAULT_TEAM),
  /** IANA zone in which a slot's date is read; default `UTC`. */
  timezone: timeZoneSchema.default('UTC'),
  /** Excluded dates. */
  dates: z
    .array(dateSchema)
    .max(MAX_CALENDAR_DATES)
    .transform((dates) => [...new Set(dates)].sort()),
});

/** A calendar body after defaults. */
export type CalendarBody = z.output<typeof calendarBodySchema>;

/** Validates a calendar body and applies its defaults; issues name the field (`dates[3]`, `holidays`). Never throws. */
export function parseCalendarBody(input: unknown): ValidationResult<CalendarBody> {
  const parsed = calendarBodySchema.safeParse(input, { reportInput: true });
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, issues: parsed.error.issues.flatMap((issue) => convertZodIssue(issue, (path) => (path.length === 0 ? ['team', 'timezone', 'dates'] : []))) };
}
