/**
 * The dashboard's figures (`GET /api/v1/stats/today`, UTC day) and charts
 * (`GET /api/v1/stats/hourly`), from `task_instance` and `task_execution`.
 *
 * An instance counts in the day and hour it became due:
 * - its `due_at` (slot time plus jitter; a retry's or a rerun's time),
 * - a `dependency` instance (created PENDING once its parents were satisfied) at its
 *   `created_at`: its `expected_time` and `due_at` are the start of its biz date, hours earlier,
 * - an instance created WAITING for parents when it was last promoted to PENDING (its
 *   `DEPS_MET` event; the promotion sets `promoted_at` and leaves `due_at` alone),
 * whichever is latest. Trigger delay = start of its current execution − that time; durations
 * are those of executions (started → ended), not the instance row's times.
 */
import type { RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';
import { instanceTeamFilter, instanceTeamSql } from './instances-read.js';
import { CURRENT_EXECUTION_ID_SQL, EXECUTION_START_SQL } from './run-times.js';

/** The figures of one UTC day. */
export interface DayStats {
  total: number;
  succeeded: number;
  failed: number;
  running: number;
  /** Mean of (start of the current execution − when the instance became due) over started instances, ms; null without any. */
  avgTriggerDelayMs: number | null;
  /** Longest execution (started → ended) of the day's instances, ms; null without any. */
  maxDurationMs: number | null;
  topFailing: Array<{ task: string; count: number }>;
}

/** One hour of a day. */
export interface HourStats {
  /** Start of the hour, ISO UTC. */
  hour: string;
  runs: number;
  succeeded: number;
  failed: number;
  /** Mean of instance commit − expected time over `schedule` instances (the scheduler's fire lag), ms; null without any. */
  avgFireLagMs: number | null;
  /** Mean of start − due time over started instances, ms; null without any. */
  avgTriggerDelayMs: number | null;
}

const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** A WHERE condition on `task_instance i` and its values. */
export interface Condition {
  readonly sql: string;
  readonly values: unknown[];
}

/**
 * The instances of `teams` (null = every team) that became due in `[from, to)`: one range of
 * `idx_instance_due_time` and the team filter. Every statement of a day's figures takes its
 * rows from this one condition, so they cannot count different instances.
 *
 * `due_time` is the generated column of migration 0006 (the latest of `due_at`, `created_at`
 * for a dependency instance, and `promoted_at`, the DEPS_MET promotion), so the day is one
 * range of the index: the day's rows, not the table's.
 */
export function dueIn(from: Date, to: Date, teams: readonly string[] | null): Condition {
  const team = instanceTeamFilter(teams, { alias: 'i' });
  return {
    sql: `i.due_time >= ? AND i.due_time < ?${team === null ? '' : ` AND ${team.sql}`}`,
    values: [from, to, ...(team === null ? [] : team.values)],
  };
}

/**
 * SQL of the instances of `due` ({@link dueIn}), one row each: `id, task_id, task_name, team, state,
 * trg, expected_time, created_at, due_time, run_started, longest_us`; its values are
 * `due.values`. The hourly rollup (stats-rollup.ts) reads the same rows.
 */
export function dueInstances(due: Condition): string {
  return `SELECT i.id, i.task_id, i.task_name, ${instanceTeamSql('i')} AS team, i.state, i.\`trigger\` AS trg, i.expected_time, i.created_at, i.due_time,
             (SELECT ${EXECUTION_START_SQL} FROM task_execution x WHERE x.id = ${CURRENT_EXECUTION_ID_SQL}) AS run_started,
             (SELECT MAX(TIMESTAMPDIFF(MICROSECOND, ${EXECUTION_START_SQL}, x.ended_at)) FROM task_execution x
               WHERE x.instance_id = i.id AND x.ended_at IS NOT NULL AND ${EXECUTION_START_SQL} IS NOT NULL) AS longest_us
        FROM task_instance i
       WHERE ${due.sql}`;
}

/** SQL of the trigger delay of a row of {@link dueInstances}, µs (a start before the due time, from a worker's clock, is 0). */
export const DELAY_US_SQL = 'CASE WHEN run_started IS NOT NULL THEN GREATEST(0, TIMESTAMPDIFF(MICROSECOND, due_time, run_started)) END';

/** Microseconds (a driver value) as whole milliseconds, never negative; null stays null. */
export const ms = (v: unknown): number | null => (v == null ? null : Math.max(0, Math.round(Number(v) / 1000)));

/** Figures of the instances that became due in `[dayStart, dayStart + 1 day)`. */
export async function dayStats(db: Queryable, dayStart: Date, topN = 5, teams: readonly string[] | null = null): Promise<DayStats> {
  const due = dueIn(dayStart, new Date(dayStart.getTime() + DAY_MS), teams);
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT COUNT(*) AS total,
            COALESCE(SUM(state = 'SUCCESS'), 0) AS succeeded,
            COALESCE(SUM(state = 'FAILED'), 0) AS failed,
            COALESCE(SUM(state IN ('DISPATCHED', 'RUNNING')), 0) AS running,
            AVG(${DELAY_US_SQL}) AS delay_us,
            MAX(longest_us) AS max_us
       FROM (${dueInstances(due)}) s`,
    due.values,
  );
  // The failing tasks need no execution read: the range and the state, nothing per row.
  const [top] = await db.query<Array<RowDataPacket & { task_name: string; n: string }>>(
    `SELECT i.task_name, COUNT(*) AS n FROM task_instance i
      WHERE ${due.sql} AND i.state = 'FAILED'
      GROUP BY i.task_name ORDER BY n DESC, i.task_name LIMIT ?`,
    [...due.values, topN],
  );
  const r = (rows[0] ?? {}) as Record<string, unknown>;
  return {
    total: Number(r['total'] ?? 0),
    succeeded: Number(r['succeeded'] ?? 0),
    failed: Number(r['failed'] ?? 0),
    running: Number(r['running'] ?? 0),
    avgTriggerDelayMs: ms(r['delay_us']),
    maxDurationMs: ms(r['max_us']),
    topFailing: top.map((t) => ({ task: t.task_name, count: Number(t.n) })),
  };
}

/** 24 hours from `dayStart` (a UTC midnight), each present (zero or null when nothing was due); an instance counts in the hour it became due. */
export async function hourlyStats(db: Queryable, dayStart: Date, teams: readonly string[] | null = null): Promise<HourStats[]> {
  const due = dueIn(dayStart, new Date(dayStart.getTime() + DAY_MS), teams);
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT FLOOR(TIMESTAMPDIFF(SECOND, ?, due_time) / 3600) AS h,
            COUNT(*) AS runs,
            COALESCE(SUM(state = 'SUCCESS'), 0) AS succeeded,
            COALESCE(SUM(state = 'FAILED'), 0) AS failed,
            AVG(CASE WHEN trg = 'schedule' THEN TIMESTAMPDIFF(MICROSECOND, expected_time, created_at) END) AS lag_us,
            AVG(${DELAY_US_SQL}) AS delay_us
       FROM (${dueInstances(due)}) s
      GROUP BY h`,
    [dayStart, ...due.values],
  );
  return hoursOfDay(dayStart, rows);
}

/**
 * The 24 hours of `dayStart` from rows of `h` (0-23), `runs`, `succeeded`, `failed`, `lag_us`
 * and `delay_us` (the means, µs): the live query's and the rollup's (stats-rollup.ts).
 */
export function hoursOfDay(dayStart: Date, rows: readonly RowDataPacket[]): HourStats[] {
  const byHour = new Map(rows.map((r) => [Number(r['h']), r]));
  return Array.from({ length: 24 }, (_unused, h) => {
    const r = byHour.get(h);
    return {
      hour: new Date(dayStart.getTime() + h * HOUR_MS).toISOString(),
      runs: Number(r?.['runs'] ?? 0),
      succeeded: Number(r?.['succeeded'] ?? 0),
      failed: Number(r?.['failed'] ?? 0),
      avgFireLagMs: ms(r?.['lag_us']),
      avgTriggerDelayMs: ms(r?.['delay_us']),
    };
  });
}
