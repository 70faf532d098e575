/**
 * Per-hour figures of one UTC day for the console's charts (`GET /api/v1/stats/hourly`), from
 * `task_instance` like `dayStats` of @ax/store; the same slot rule (an instance counts in the
 * hour of its `expected_time`). Kept here until it moves next to `dayStats` in @ax/store.
 */
import type { RowDataPacket } from 'mysql2';
import { instanceTeamFilter, type StorePool } from '@ax/store';

/** One hour of a day. */
export interface HourStats {
  /** Start of the hour, ISO UTC. */
  hour: string;
  runs: number;
  succeeded: number;
  failed: number;
  /** Mean of instance commit − expected time over `schedule` instances (the scheduler's fire lag), ms; null without any. */
  avgFireLagMs: number | null;
  /** Mean of start − expected time over started instances, ms; null without any. */
  avgTriggerDelayMs: number | null;
}

const HOUR_MS = 3_600_000;

/** 24 hours from `dayStart` (a UTC midnight), each present (zero or null when nothing ran). */
export async function hourlyStats(pool: StorePool, dayStart: Date, teams: readonly string[] | null = null): Promise<HourStats[]> {
  const dayEnd = new Date(dayStart.getTime() + 24 * HOUR_MS);
  // Only the instances of these teams' tasks (null: all).
  const team = instanceTeamFilter(teams);
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT FLOOR(TIMESTAMPDIFF(SECOND, ?, expected_time) / 3600) AS h,
            COUNT(*) AS runs,
            COALESCE(SUM(state = 'SUCCESS'), 0) AS succeeded,
            COALESCE(SUM(state = 'FAILED'), 0) AS failed,
            AVG(CASE WHEN \`trigger\` = 'schedule' THEN TIMESTAMPDIFF(MICROSECOND, expected_time, created_at) END) AS lag_us,
            AVG(CASE WHEN started_at IS NOT NULL THEN TIMESTAMPDIFF(MICROSECOND, expected_time, started_at) END) AS delay_us
       FROM task_instance
      WHERE expected_time >= ? AND expected_time < ?${team === null ? '' : ` AND ${team.sql}`}
      GROUP BY h`,
    [dayStart, dayStart, dayEnd, ...(team === null ? [] : team.values)],
  );
  const byHour = new Map(rows.map((r) => [Number(r['h']), r]));
  const ms = (v: unknown): number | null => (v == null ? null : Math.max(0, Math.round(Number(v) / 1000)));
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
