/** Today's figures for the dashboard (`GET /api/v1/stats/today`, UTC day), from `task_instance`. */
import type { RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';
import { instanceTeamFilter } from './instances-read.js';

/** The figures of one UTC day. */
export interface DayStats {
  total: number;
  succeeded: number;
  failed: number;
  running: number;
  avgTriggerDelayMs: number | null;
  maxDurationMs: number | null;
  topFailing: Array<{ task: string; count: number }>;
}

/** Figures of the instances whose slot lies in `[dayStart, dayStart + 1 day)`. */
export async function dayStats(db: Queryable, dayStart: Date, topN = 5, teams: readonly string[] | null = null): Promise<DayStats> {
  const dayEnd = new Date(dayStart.getTime() + 86_400_000);
  // Only the instances of these teams' tasks (null: all).
  const team = instanceTeamFilter(teams);
  const teamSql = team === null ? '' : ` AND ${team.sql}`;
  const teamValues = team === null ? [] : team.values;
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT COUNT(*) AS total,
            COALESCE(SUM(state = 'SUCCESS'), 0) AS succeeded,
            COALESCE(SUM(state = 'FAILED'), 0) AS failed,
            COALESCE(SUM(state IN ('DISPATCHED', 'RUNNING')), 0) AS running,
            AVG(CASE WHEN started_at IS NOT NULL THEN TIMESTAMPDIFF(MICROSECOND, expected_time, started_at) END) AS delay_us,
            MAX(CASE WHEN started_at IS NOT NULL AND ended_at IS NOT NULL THEN TIMESTAMPDIFF(MICROSECOND, started_at, ended_at) END) AS max_us
       FROM task_instance WHERE expected_time >= ? AND expected_time < ?${teamSql}`,
    [dayStart, dayEnd, ...teamValues],
  );
  const [top] = await db.query<Array<RowDataPacket & { task_name: string; n: string }>>(
    `SELECT task_name, COUNT(*) AS n FROM task_instance
      WHERE expected_time >= ? AND expected_time < ? AND state = 'FAILED'${teamSql}
      GROUP BY task_name ORDER BY n DESC, task_name LIMIT ?`,
    [dayStart, dayEnd, ...teamValues, topN],
  );
  const r = (rows[0] ?? {}) as Record<string, unknown>;
  const ms = (v: unknown): number | null => (v == null ? null : Math.max(0, Math.round(Number(v) / 1000)));
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
