/**
 * The retention purge's read (DESIGN §9): final instances that ended before a cutoff, oldest
 * end first, locked for the transaction that aggregates and deletes them.
 *
 * By `ended_at`, not `updated_at`: `ended_at` is written once, when the instance becomes final
 * (transitions.ts fills it in when a caller does not) and cleared by a rerun, so its index
 * (`idx_instance_ended`, migration 0002) is not rewritten by every state change the way an
 * index on `updated_at` was. On schema 1 the same query still works, through a `state` index
 * and a sort.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';

/** A final instance the purge may delete, with what the daily aggregates need. */
export interface EndedInstance {
  readonly id: string;
  readonly taskName: string;
  readonly state: 'SUCCESS' | 'FAILED' | 'CANCELED';
  readonly expectedTime: Date;
  readonly startedAt: Date | null;
  readonly endedAt: Date;
  /** The UTC day (`YYYY-MM-DD`) it counts in on the dashboard (`due_time`): its rollup is forgotten with it. */
  readonly dueDay: string;
}

type Row = RowDataPacket & {
  id: string;
  task_name: string;
  state: EndedInstance['state'];
  expected_time: Date;
  started_at: Date | null;
  ended_at: Date;
  due_day: string;
};

/**
 * Locks (`FOR UPDATE`) up to `limit` SUCCESS, FAILED or CANCELED instances whose `ended_at` is
 * before `endedBefore`, oldest end first. Call inside a transaction.
 */
export async function lockEndedInstances(conn: Queryable, endedBefore: Date, limit: number): Promise<EndedInstance[]> {
  const [rows] = await conn.query<Row[]>(
    `SELECT id, task_name, state, expected_time, started_at, ended_at, DATE_FORMAT(due_time, '%Y-%m-%d') AS due_day FROM task_instance
      WHERE ended_at < ? AND state IN ('SUCCESS', 'FAILED', 'CANCELED')
      ORDER BY ended_at
      LIMIT ?
      FOR UPDATE`,
    [endedBefore, limit],
  );
  return rows.map((r) => ({
    id: String(r.id),
    taskName: r.task_name,
    state: r.state,
    expectedTime: r.expected_time,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    dueDay: r.due_day,
  }));
}

/** Chunk rows deleted per statement by {@link purgeLogsOfInstances} (a chunk is at most 256 KiB). */
export const LOG_PURGE_BATCH_ROWS = 100;

/** What {@link purgeLogsOfInstances} deleted. */
export interface LogPurgeOutcome {
  readonly executions: number;
  readonly chunks: number;
  readonly statements: number;
}

/**
 * Deletes the job output (`job_log_chunk`, `job_log_end`) of every execution of `instanceIds`,
 * `batchRows` chunks per statement, each statement its own short transaction (call it on the
 * pool, not inside the purge's transaction): a 16 MiB log never becomes one large delete that
 * holds locks, fills the undo log or delays the replicas, and dispatch never waits on it.
 * Call it before the executions are deleted (it finds the output through them); a run cut short
 * is finished by the next, as the instances are still there.
 */
export async function purgeLogsOfInstances(db: Queryable, instanceIds: readonly string[], batchRows = LOG_PURGE_BATCH_ROWS): Promise<LogPurgeOutcome> {
  if (instanceIds.length === 0) return { executions: 0, chunks: 0, statements: 0 };
  const [rows] = await db.query<Array<RowDataPacket & { execution_id: string }>>('SELECT execution_id FROM task_execution WHERE instance_id IN (?)', [instanceIds]);
  const executionIds = rows.map((r) => String(r.execution_id));
  if (executionIds.length === 0) return { executions: 0, chunks: 0, statements: 1 };
  let chunks = 0;
  let statements = 1;
  for (;;) {
    const [result] = await db.query<ResultSetHeader>(
      'DELETE FROM job_log_chunk WHERE execution_id IN (?) ORDER BY execution_id, stream, byte_offset LIMIT ?',
      [executionIds, batchRows],
    );
    statements += 1;
    chunks += result.affectedRows;
    if (result.affectedRows < batchRows) break;
  }
  await db.query('DELETE FROM job_log_end WHERE execution_id IN (?)', [executionIds]);
  return { executions: executionIds.length, chunks, statements: statements + 1 };
}

/** One (day, task) sum of purged instances, added to `task_daily_stats` before they go. */
export interface DailyStatsDelta {
  /** UTC date of the slot, `YYYY-MM-DD`. */
  readonly day: string;
  readonly taskName: string;
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly canceled: number;
  /** Mean start delay of those that started, ms; null when none started. */
  readonly avgTriggerDelayMs: number | null;
  /** Longest run of those that started, ms; null when none started. */
  readonly maxDurationMs: number | null;
}

/**
 * Adds the purged instances' sums to `task_daily_stats`: counts add up, the mean start delay is
 * weighted by the totals, the longest run is the larger. Call in the purge's transaction.
 */
export async function addToDailyStats(conn: Queryable, deltas: readonly DailyStatsDelta[]): Promise<void> {
  if (deltas.length === 0) return;
  // avg is assigned first: ON DUPLICATE KEY UPDATE reads already-updated columns.
  await conn.query(
    `INSERT INTO task_daily_stats (day, task_name, total, succeeded, failed, canceled, avg_trigger_delay_ms, max_duration_ms)
     VALUES ${deltas.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
     ON DUPLICATE KEY UPDATE
       avg_trigger_delay_ms = CASE WHEN VALUES(avg_trigger_delay_ms) IS NULL THEN avg_trigger_delay_ms
                                   WHEN avg_trigger_delay_ms IS NULL THEN VALUES(avg_trigger_delay_ms)
                                   ELSE ROUND((avg_trigger_delay_ms * total + VALUES(avg_trigger_delay_ms) * VALUES(total)) / (total + VALUES(total))) END,
       total = total + VALUES(total), succeeded = succeeded + VALUES(succeeded),
       failed = failed + VALUES(failed), canceled = canceled + VALUES(canceled),
       max_duration_ms = GREATEST(COALESCE(max_duration_ms, 0), COALESCE(VALUES(max_duration_ms), 0))`,
    deltas.flatMap((d) => [d.day, d.taskName, d.total, d.succeeded, d.failed, d.canceled, d.avgTriggerDelayMs, d.maxDurationMs]),
  );
}

/**
 * Deletes instances with their events, executions and claims (children first). Call in the
 * purge's transaction, after {@link purgeLogsOfInstances} (which finds the output through the
 * executions deleted here).
 */
export async function deleteInstancesWithHistory(conn: Queryable, instanceIds: readonly string[]): Promise<void> {
  if (instanceIds.length === 0) return;
  await conn.query('DELETE FROM event_log WHERE instance_id IN (?)', [instanceIds]);
  await conn.query('DELETE FROM task_execution WHERE instance_id IN (?)', [instanceIds]);
  await conn.query('DELETE FROM execution_claim WHERE instance_id IN (?)', [instanceIds]);
  await conn.query('DELETE FROM task_instance WHERE id IN (?)', [instanceIds]);
}
