/**
 * The `schedule` field of a task definition (ADMIN-API.md): `cron`, `fixed_rate`, `once`, `none`,
 * each with a `timezone` (IANA, default `UTC`) used for cron evaluation and `bizDate`.
 */
import { z } from 'zod';
import { cronProblem, isValidTimeZone } from '../schedule/index.js';
import { describeValue } from './issues.js';

/** The time zone a schedule uses when it names none. */
export const DEFAULT_TIME_ZONE = 'UTC';

/** An IANA time zone name, checked against the runtime's zone database. */
export const timeZoneSchema = z.string().refine((tz) => isValidTimeZone(tz), {
  error: (iss) => `unknown time zone ${describeValue(iss.input)}`,
});

/**
 * An ISO-8601 date-time with `Z` or an explicit offset, normalised to UTC with milliseconds
 * (`2026-12-01T10:00:00+08:00` → `2026-12-01T02:00:00.000Z`). A local time without offset is
 * refused: it would be ambiguous.
 */
export const isoInstantSchema = z
  .iso.datetime({
    offset: true,
    error: (iss) => `must be an ISO-8601 date-time with Z or an offset (e.g. "2026-12-01T02:00:00.000Z"), got ${describeValue(iss.input)}`,
  })
  .transform((text) => new Date(text).toISOString());

const cronExprSchema = z.string().superRefine((expr, ctx) => {
  const problem = cronProblem(expr);
  if (problem !== null) {
    ctx.addIssue({ code: 'custom', message: `invalid cron expression ${describeValue(expr)}: ${problem}`, input: expr });
  }
});

/** `{"type":"cron","expr":"0 2 * * *","timezone":"Asia/Shanghai"}`; 6 fields = leading seconds. */
export const cronScheduleSchema = z.strictObject({
  type: z.literal('cron'),
  expr: cronExprSchema,
  timezone: timeZoneSchema.default(DEFAULT_TIME_ZONE),
});

/**
 * `{"type":"fixed_rate","everySeconds":30}`; extension: `startAt` (ISO) anchors the slot grid
 * (DESIGN R1: slots are `startAt + k·everySeconds`; default the task's creation time).
 */
export const fixedRateScheduleSchema = z.strictObject({
  type: z.literal('fixed_rate'),
  everySeconds: z.int().min(1),
  startAt: isoInstantSchema.optional(),
  timezone: timeZoneSchema.default(DEFAULT_TIME_ZONE),
});

/** `{"type":"once","at":"2026-12-01T02:00:00.000Z"}`. */
export const onceScheduleSchema = z.strictObject({
  type: z.literal('once'),
  at: isoInstantSchema,
  timezone: timeZoneSchema.default(DEFAULT_TIME_ZONE),
});

/** `{"type":"none"}`: manual or dependency triggers only. */
export const noneScheduleSchema = z.strictObject({
  type: z.literal('none'),
  timezone: timeZoneSchema.default(DEFAULT_TIME_ZONE),
});

/** Any schedule, told apart by `type`. */
export const scheduleSchema = z.discriminatedUnion('type', [
  cronScheduleSchema,
  fixedRateScheduleSchema,
  onceScheduleSchema,
  noneScheduleSchema,
]);

/** Field names of each schedule type (used to suggest a field for a typo). */
export const SCHEDULE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  cron: Object.keys(cronScheduleSchema.shape),
  fixed_rate: Object.keys(fixedRateScheduleSchema.shape),
  once: Object.keys(onceScheduleSchema.shape),
  none: Object.keys(noneScheduleSchema.shape),
};
