/**
 * The schedule of a task, as the task definition (ADMIN-API.md) carries it after defaults.
 * Times are epoch milliseconds (UTC) inside the core; ISO strings live only at the edges.
 */

/** Fires when the wall clock of `timezone` matches `expr`, by the DST rule of DESIGN §3. */
export type CronSchedule = {
  type: 'cron';
  /** 5 fields (minute precision) or 6 fields (leading seconds field); supports L, ranges, steps, names. */
  expr: string;
  /** IANA zone the expression is read in. Default `UTC`. */
  timezone: string;
};

/** Fires every `everySeconds` of elapsed time from an anchor; DST does not move it. */
export type FixedRateSchedule = {
  type: 'fixed_rate';
  /** Whole seconds between slots, at least 1. */
  everySeconds: number;
  /** Anchor of the slot grid (DESIGN R1): slots are `startAt + k·everySeconds`. Default: the task's creation time. */
  startAt?: string | undefined;
  timezone: string;
};

/** Fires once, at `at` (ISO-8601 with `Z` or an offset); `timezone` serves only `biz_date`. */
export type OnceSchedule = { type: 'once'; at: string; timezone: string };

/** Never fires by itself: manual and dependency triggers only; `timezone` serves `biz_date`. */
export type NoneSchedule = { type: 'none'; timezone: string };

/** A task's schedule, told apart by `type`. */
export type Schedule = CronSchedule | FixedRateSchedule | OnceSchedule | NoneSchedule;
