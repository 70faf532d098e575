/**
 * When an instance's current run started and ended, read from its executions (ADMIN-API.md
 * "Instance resource": `startedAt` is when its current execution started running). The
 * instance row's own `started_at`/`ended_at` are written by the broker when it processes the
 * ACK or the result, often in the same batch: they cannot tell how long a job ran.
 *
 * An execution started at its `started_at` (reported by the worker with the result), or, while
 * it runs and that is not known yet, at its ACK (`acked_at`).
 */
import type { RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';

/** SQL: the start of execution `x` (its reported start, else its ACK). */
export const EXECUTION_START_SQL = 'COALESCE(x.started_at, x.acked_at)';

/**
 * SQL: the row id of the current execution of instance `i`: `current_execution_id`, or for a
 * run without one (broadcast shards) the latest execution of the instance's current `run_no`.
 * Served by `uk_execution_id` / `idx_execution_instance`.
 */
export const CURRENT_EXECUTION_ID_SQL = `(SELECT MAX(y.id) FROM task_execution y
    WHERE y.instance_id = i.id AND y.run_no = i.run_no
      AND (i.current_execution_id IS NULL OR y.execution_id = i.current_execution_id))`;

/** Times of an instance's current execution. */
export interface RunTimes {
  readonly executionId: string;
  /** Reported start, else the ACK; null while dispatched and not yet acknowledged. */
  readonly startedAt: Date | null;
  readonly endedAt: Date | null;
  /** `endedAt − startedAt`, ms; null until both are known. */
  readonly durationMs: number | null;
}

/** Duration of an execution, ms, from its start (reported, else ACK) to its end; null until both are known. */
export function runDurationMs(startedAt: Date | null, endedAt: Date | null): number | null {
  if (startedAt === null || endedAt === null) return null;
  return Math.max(0, endedAt.getTime() - startedAt.getTime());
}

/** The times of the current execution of each of these instances (absent: no execution yet). */
export async function currentRunTimes(db: Queryable, instanceIds: readonly string[]): Promise<Map<string, RunTimes>> {
  const out = new Map<string, RunTimes>();
  if (instanceIds.length === 0) return out;
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT i.id AS instance_id, x.execution_id, ${EXECUTION_START_SQL} AS run_started_at, x.ended_at
       FROM task_instance i JOIN task_execution x ON x.id = ${CURRENT_EXECUTION_ID_SQL}
      WHERE i.id IN (?)`,
    [instanceIds],
  );
  for (const r of rows) {
    const startedAt = (r['run_started_at'] as Date | null) ?? null;
    const endedAt = (r['ended_at'] as Date | null) ?? null;
    out.set(String(r['instance_id']), { executionId: String(r['execution_id']), startedAt, endedAt, durationMs: runDurationMs(startedAt, endedAt) });
  }
  return out;
}
