// Schedule math of @ax/core: pure (no I/O, no clock), times in epoch milliseconds.
export type { CronSchedule, FixedRateSchedule, NoneSchedule, OnceSchedule, Schedule } from './types.js';
export { cronProblem } from './cron-fields.js';
export { CRON_SEARCH_HORIZON_DAYS } from './cron-dst.js';
export { compileSchedule, nextFireTimes, scheduleProblem } from './compile.js';
export type { CompileOptions, CompiledSchedule } from './compile.js';
export { InvalidScheduleError } from './errors.js';
export { bizDateOf, startOfBizDate } from './biz-date.js';
export { formatInZone, formatUtcOffset, isValidTimeZone, localDateTimeParts, utcOffsetMs } from './zone.js';
export type { LocalDateTimeParts } from './zone.js';
export { MAX_JITTER_SECONDS, slotJitterMs } from './jitter.js';
export { dateInZone, excludeCalendarDates, isExcludedByCalendar } from './calendar-filter.js';
export type { CalendarDates } from './calendar-filter.js';
