/**
 * The schedule of a task, as the task definition (ADMIN-API.md) carries it after defaults.
 * Times are epoch milliseconds (UTC) inside the core; ISO strings live only at the edges.
 */
export type CronSchedule = {
  type: 'cron';
  /** 5 fields (minute precision) or 6 fields (leading seconds field); supports L, ranges, steps, names. */
  expr: string;
  /** IANA zone the expression is read in. Default `UTC`. */
  timezone: string;
};

export type FixedRateSchedule = {
  type: 'fixed_rate';
  everySeconds: number;
  /** Anchor of the slot grid (DESIGN R1): slots are `startAt + k·everySeconds`. Default: the task's creation time. */
  startAt?: string | undefined;
  timezone: string;
};

export type OnceSchedule = { type: 'once'; at: string; timezone: string };

export type NoneSchedule = { type: 'none'; timezone: string };

export type Schedule = CronSchedule | FixedRateSchedule | OnceSchedule | NoneSchedule;
