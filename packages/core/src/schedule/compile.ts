/**
 * One entry point for every kind of schedule: validate the definition once, compile it into an
 * object that answers "when next?" in microseconds. The scheduler compiles each task when its
 * definition is loaded and keeps the result; cron expressions are parsed once per distinct
 * expression and time zones are shared, so 10,000 tasks cost little more than one.
 */
import { compileCronMatcher, type CronMatcher } from './cron-enumerate.js';
import { InvalidCronExpressionError, parseCron } from './cron-fields.js';
import { zonedCron, type ZonedCron } from './cron-dst.js';
import { InvalidScheduleError } from './errors.js';
import { fixedRateLastAtOrBefore, fixedRateNextAfter, type FixedRateGrid } from './fixed-rate.js';
import { parseIsoInstantMs } from './iso-instant.js';
import type { Schedule } from './types.js';
import { isValidTimeZone, zoneFor } from './zone.js';

/** Options of {@link compileSchedule}. */
export interface CompileOptions {
  /**
   * The task's creation time, epoch milliseconds: slot 0 of a `fixed_rate` schedule without
   * `startAt` (DESIGN R1). Required; ignored by the other kinds.
   */
  anchorMs: number;
}

/** A schedule compiled for fast, repeated questions. All times are epoch milliseconds (UTC). */
export interface CompiledSchedule {
  /** The definition it was compiled from. */
  readonly schedule: Schedule;
  /** The first fire strictly after `afterMs`, or null when there is none (`none`, a past `once`, a cron that never matches again). */
  nextAfter(afterMs: number): number | null;
  /** The last fire at or before `untilMs` (for misfire `fire_once`: the latest missed slot), or null. */
  lastAtOrBefore(untilMs: number): number | null;
  /**
   * The fires in `(afterMsExclusive, untilMsInclusive]`, ascending and distinct, at most `limit`
   * of them (the earliest). `untilMsInclusive` may be `Infinity`.
   */
  between(afterMsExclusive: number, untilMsInclusive: number, limit: number): number[];
}

/** Parsed expressions kept before the cache is emptied. */
const MAX_CACHED_EXPRESSIONS = 10_000;
const matchers = new Map<string, CronMatcher>();

/** The matcher of `expr`, parsed once per distinct expression; or the sentence saying why it is invalid. */
function matcherFor(expr: string): CronMatcher | string {
  let matcher = matchers.get(expr);
  if (matcher === undefined) {
    try {
      matcher = compileCronMatcher(parseCron(expr));
    } catch (error) {
      if (error instanceof InvalidCronExpressionError) return error.message;
      throw error;
    }
    if (matchers.size >= MAX_CACHED_EXPRESSIONS) matchers.clear();
    matchers.set(expr, matcher);
  }
  return matcher;
}

const zonedCrons = new Map<string, ZonedCron>();

/**
 * The fire functions of `expr` in `timezone`, built once per distinct pair: they are pure
 * functions of the matcher and the zone, and a task's own (six closures and their context,
 * ~400 B) was a fifth of a scheduler's live heap with 100,000 tasks that share about 1,500
 * schedules (#24). Emptied as the matchers are, past MAX_CACHED_EXPRESSIONS.
 */
function zonedCronFor(expr: string, timezone: string, matcher: CronMatcher): ZonedCron {
  const key = `${timezone}\u0000${expr}`;
  let zoned = zonedCrons.get(key);
  if (zoned === undefined) {
    zoned = zonedCron(matcher, zoneFor(timezone));
    if (zonedCrons.size >= MAX_CACHED_EXPRESSIONS) zonedCrons.clear();
    zonedCrons.set(key, zoned);
  }
  return zoned;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/**
 * Why `schedule` cannot be compiled, as one human sentence naming the field, or null when it can.
 * Checks the shape too, so it may be given a definition straight from JSON.
 */
export function scheduleProblem(schedule: Schedule): string | null {
  if (typeof schedule !== 'object' || schedule === null) return 'schedule must be an object';
  const s = schedule as Partial<Record<string, unknown>>;
  const tz = s['timezone'];
  if (typeof tz !== 'string' || !isValidTimeZone(tz)) {
    return `schedule timezone ${describe(tz)} is not an IANA time-zone name (e.g. "UTC", "Asia/Shanghai")`;
  }
  switch (s['type']) {
    case 'cron': {
      const expr = s['expr'];
      if (typeof expr !== 'string') return 'schedule expr must be a cron expression string';
      const matcher = matcherFor(expr);
      return typeof matcher === 'string' ? matcher : null;
    }
    case 'fixed_rate': {
      const every = s['everySeconds'];
      if (typeof every !== 'number' || !Number.isSafeInteger(every) || every < 1) {
        return `schedule everySeconds ${describe(every)} must be a whole number of seconds, at least 1`;
      }
      const startAt = s['startAt'];
      if (startAt !== undefined && startAt !== null && parseIsoInstantMs(startAt as string) === null) {
        return `schedule startAt ${describe(startAt)} is not an ISO-8601 time with a zone, e.g. "2026-12-01T02:00:00.000Z"`;
      }
      return null;
    }
    case 'once':
      if (parseIsoInstantMs(s['at'] as string) === null) {
        return `schedule at ${describe(s['at'])} is not an ISO-8601 time with a zone, e.g. "2026-12-01T02:00:00.000Z"`;
      }
      return null;
    case 'none':
      return null;
    default:
      return `schedule type ${describe(s['type'])} is unknown; expected cron, fixed_rate, once or none`;
  }
}

function checkTime(name: string, value: number, allowInfinity: boolean): void {
  if (typeof value !== 'number' || Number.isNaN(value) || (!allowInfinity && !Number.isFinite(value))) {
    throw new RangeError(`${name} must be ${allowInfinity ? 'a number' : 'a finite number'} of epoch milliseconds, got ${String(value)}`);
  }
}

class Compiled implements CompiledSchedule {
  readonly #next: (afterMs: number) => number | null;
  readonly #last: (untilMs: number) => number | null;

  constructor(
    readonly schedule: Schedule,
    next: (afterMs: number) => number | null,
    last: (untilMs: number) => number | null,
  ) {
    this.#next = next;
    this.#last = last;
  }

  nextAfter(afterMs: number): number | null {
    checkTime('afterMs', afterMs, false);
    return this.#next(afterMs);
  }

  lastAtOrBefore(untilMs: number): number | null {
    checkTime('untilMs', untilMs, false);
    return this.#last(untilMs);
  }

  between(afterMsExclusive: number, untilMsInclusive: number, limit: number): number[] {
    checkTime('afterMsExclusive', afterMsExclusive, false);
    checkTime('untilMsInclusive', untilMsInclusive, true);
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`limit must be a whole number ≥ 0, got ${String(limit)}`);
    const out: number[] = [];
    let t = afterMsExclusive;
    while (out.length < limit) {
      const next = this.#next(t);
      if (next === null || next > untilMsInclusive) break;
      out.push(next);
      t = next;
    }
    return out;
  }
}

/**
 * Compile a schedule. `cron` follows the DST rule of DESIGN §3 in the schedule's zone;
 * `fixed_rate` fires at `anchor + k·everySeconds` (k ≥ 0; anchor = `startAt`, else
 * `opts.anchorMs`); `once` fires at `at`; `none` never fires.
 * @throws InvalidScheduleError when {@link scheduleProblem} finds a problem.
 * @throws RangeError when a `fixed_rate` schedule without `startAt` gets a non-finite `anchorMs`.
 */
export function compileSchedule(schedule: Schedule, opts: CompileOptions): CompiledSchedule {
  const problem = scheduleProblem(schedule);
  if (problem !== null) throw new InvalidScheduleError(problem);
  switch (schedule.type) {
    case 'cron': {
      const matcher = matcherFor(schedule.expr);
      if (typeof matcher === 'string') throw new InvalidScheduleError(matcher); // unreachable: checked above
      const zoned = zonedCronFor(schedule.expr, schedule.timezone, matcher);
      return new Compiled(schedule, zoned.nextAfter, zoned.lastAtOrBefore);
    }
    case 'fixed_rate': {
      const anchorMs = schedule.startAt === undefined || schedule.startAt === null ? opts.anchorMs : parseIsoInstantMs(schedule.startAt);
      if (typeof anchorMs !== 'number' || !Number.isFinite(anchorMs)) {
        throw new RangeError(`opts.anchorMs must be a finite number of epoch milliseconds, got ${String(anchorMs)}`);
      }
      const grid: FixedRateGrid = { anchorMs, periodMs: schedule.everySeconds * 1000 };
      return new Compiled(
        schedule,
        (afterMs) => fixedRateNextAfter(grid, afterMs),
        (untilMs) => fixedRateLastAtOrBefore(grid, untilMs),
      );
    }
    case 'once': {
      const atMs = parseIsoInstantMs(schedule.at) ?? NaN;
      return new Compiled(
        schedule,
        (afterMs) => (atMs > afterMs ? atMs : null),
        (untilMs) => (atMs <= untilMs ? atMs : null),
      );
    }
    case 'none':
      return new Compiled(schedule, () => null, () => null);
  }
}

/**
 * The next `count` fire times strictly after `afterMs` (fewer if the schedule ends), e.g. for a
 * preview. Compiles the schedule each call: keep a {@link CompiledSchedule} for repeated use.
 * @throws InvalidScheduleError for an invalid schedule.
 */
export function nextFireTimes(schedule: Schedule, afterMs: number, count: number, opts: CompileOptions): number[] {
  return compileSchedule(schedule, opts).between(afterMs, Infinity, count);
}
