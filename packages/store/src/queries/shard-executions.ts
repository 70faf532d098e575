/**
 * SQL of broadcast shards (DESIGN R21), for the broker. A shard is (instance, run_no,
 * shard_index); its *current* execution is the latest `task_execution` row of that shard
 * (highest `id`): every earlier one is superseded, so fencing is per (instance, runNo, shard).
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { decodeJson } from '../json.js';
import type { Queryable } from '../schema-version.js';
import type { ClaimedInstance } from './dispatch.js';

type Row = RowDataPacket & Record<string, unknown>;

const NOT_SUPERSEDED = `NOT EXISTS (SELECT 1 FROM task_execution x
   WHERE x.instance_id = e.instance_id AND x.run_no = e.run_no AND x.shard_index = e.shard_index AND x.id > e.id)`;

/** The current execution of one shard. */
export interface ShardExecution {
  readonly executionId: string;
  readonly shardIndex: number;
  readonly state: string;
  readonly workerId: string;
  readonly attempt: number;
}

/** The current execution of every shard of a run, ordered by shard. */
export async function latestShardExecutions(db: Queryable, instanceId: string, runNo: number): Promise<ShardExecution[]> {
  const [rows] = await db.query<Row[]>(
    `SELECT e.execution_id, e.shard_index, e.state, e.worker_id, e.attempt
       FROM task_execution e
      WHERE e.instance_id = ? AND e.run_no = ? AND e.shard_index IS NOT NULL AND ${NOT_SUPERSEDED}
      ORDER BY e.shard_index`,
    [instanceId, runNo],
  );
  return rows.map((r) => ({
    executionId: String(r.execution_id),
    shardIndex: Number(r.shard_index),
    state: String(r.state),
    workerId: String(r.worker_id),
    attempt: Number(r.attempt),
  }));
}

/** ACK timeouts of one shard within one attempt of a run (the per-shard re-route cap). */
export async function countShardAckTimeouts(db: Queryable, s: { instanceId: string; runNo: number; shardIndex: number; attempt: number }): Promise<number> {
  const [rows] = await db.query<Row[]>(
    `SELECT COUNT(*) AS n FROM task_execution
      WHERE instance_id = ? AND run_no = ? AND shard_index = ? AND attempt = ? AND state = 'ACK_TIMEOUT'`,
    [s.instanceId, s.runNo, s.shardIndex, s.attempt],
  );
  return Number(rows[0]?.n ?? 0);
}

/** A shard execution created after the claim: DISPATCHED now (re-route) or RETRY_WAIT until `delayMs`. */
export async function insertShardExecution(
  db: Queryable,
  e: { executionId: string; instanceId: string; attempt: number; runNo: number; shardIndex: number; shardTotal: number; workerId: string; state: 'DISPATCHED' | 'RETRY_WAIT'; delayMs: number },
): Promise<void> {
  await db.query(
    `INSERT INTO task_execution (execution_id, instance_id, attempt, run_no, shard_index, shard_total, worker_id, state, dispatched_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, NOW(3) + INTERVAL ? MICROSECOND)`,
    [e.executionId, e.instanceId, e.attempt, e.runNo, e.shardIndex, e.shardTotal, e.workerId, e.state, Math.round(e.delayMs) * 1000],
  );
}

/** A due shard retry goes out: RETRY_WAIT → DISPATCHED on `workerId`, dispatched now. */
export async function dispatchShardRetry(db: Queryable, executionId: string, workerId: string): Promise<boolean> {
  const [result] = await db.query<ResultSetHeader>(
    `UPDATE task_execution SET state = 'DISPATCHED', worker_id = ?, dispatched_at = NOW(3) WHERE execution_id = ? AND state = 'RETRY_WAIT'`,
    [workerId, executionId],
  );
  return result.affectedRows === 1;
}

/** R8 per shard: the shard's ACK clock (`dispatched_at`) restarts when the publish is confirmed. */
export async function restartShardAckClocks(db: Queryable, executionIds: readonly string[]): Promise<number> {
  if (executionIds.length === 0) return 0;
  const [result] = await db.query<ResultSetHeader>(
    `UPDATE task_execution SET dispatched_at = NOW(3)
      WHERE execution_id IN (?) AND shard_index IS NOT NULL AND state = 'DISPATCHED' AND acked_at IS NULL`,
    [[...executionIds]],
  );
  return result.affectedRows;
}

/** Instances as the claim reads them (to build the items of shard re-dispatches). */
export async function loadInstancesForDispatch(db: Queryable, ids: readonly string[]): Promise<Map<string, ClaimedInstance>> {
  if (ids.length === 0) return new Map();
  const [rows] = await db.query<Row[]>(
    `SELECT id, task_id, task_name, team, expected_time, run_no, biz_date, \`trigger\`, attempt, max_attempts, priority,
            params, worker_id, reroute_count, rerun_batch_id, trace_parent, NOW(3) AS db_now
       FROM task_instance WHERE id IN (?)`,
    [[...new Set(ids)]],
  );
  return new Map(
    rows.map((r) => [
      String(r.id),
      {
        id: String(r.id),
        taskId: String(r.task_id),
        taskName: String(r.task_name),
        team: r.team == null ? null : String(r.team),
        expectedTime: r.expected_time as Date,
        runNo: Number(r.run_no),
        bizDate: r.biz_date instanceof Date ? r.biz_date.toISOString().slice(0, 10) : String(r.biz_date),
        trigger: String(r.trigger),
        attempt: Number(r.attempt),
        maxAttempts: Number(r.max_attempts),
        priority: Number(r.priority),
        params: decodeJson<Record<string, unknown>>(r.params),
        workerId: (r.worker_id as string | null) ?? null,
        rerouteCount: Number(r.reroute_count),
        rerunBatchId: r.rerun_batch_id == null ? null : String(r.rerun_batch_id),
        lateMs: 0,
        waitingMs: 0,
        dbNow: r.db_now as Date,
        traceParent: (r.trace_parent as string | null) ?? null,
      } satisfies ClaimedInstance,
    ]),
  );
}

/** A shard execution found by a timer scan, with its instance. */
export interface TimedShard {
  readonly executionId: string;
  readonly instanceId: string;
  readonly taskId: string;
  readonly taskName: string;
  readonly bizDate: string;
  readonly instanceState: 'DISPATCHED' | 'RUNNING';
  readonly runNo: number;
  readonly shardIndex: number;
  readonly shardTotal: number;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly workerId: string;
  /** When its dispatch was confirmed (ACK expiry counts from it), or the earliest re-dispatch of a retry. */
  readonly dispatchedAt: Date | null;
}

/**
 * The broadcast instances in flight (R21), found once per timer round: finding them walks every
 * DISPATCHED and RUNNING instance (no index holds `shard_total`), which the three shard scans
 * used to do each.
 */
export async function inFlightBroadcasts(conn: Queryable): Promise<string[]> {
  const [rows] = await conn.query<Row[]>(`SELECT id FROM task_instance WHERE state IN ('DISPATCHED', 'RUNNING') AND shard_total IS NOT NULL`);
  return rows.map((r) => String(r.id));
}

async function scanShards(conn: Queryable, instanceIds: readonly string[], where: string, params: unknown[], limit: number): Promise<TimedShard[]> {
  if (instanceIds.length === 0) return [];
  const [rows] = await conn.query<Row[]>(
    `SELECT e.execution_id, e.instance_id, i.task_id, i.task_name, i.biz_date, i.state, e.run_no, e.shard_index, e.shard_total,
            e.attempt, i.max_attempts, e.worker_id, e.dispatched_at
       FROM task_instance i JOIN task_execution e ON e.instance_id = i.id
      WHERE i.id IN (?) AND i.state IN ('DISPATCHED', 'RUNNING') AND i.shard_total IS NOT NULL
        AND e.shard_index IS NOT NULL AND e.run_no = i.run_no AND ${where}
      ORDER BY e.id
      LIMIT ?
      FOR UPDATE SKIP LOCKED`,
    [instanceIds, ...params, limit],
  );
  return rows.map((r) => ({
    executionId: String(r.execution_id),
    instanceId: String(r.instance_id),
    taskId: String(r.task_id),
    taskName: String(r.task_name),
    bizDate: r.biz_date instanceof Date ? r.biz_date.toISOString().slice(0, 10) : String(r.biz_date),
    instanceState: r.state as 'DISPATCHED' | 'RUNNING',
    runNo: Number(r.run_no),
    shardIndex: Number(r.shard_index),
    shardTotal: Number(r.shard_total),
    attempt: Number(r.attempt),
    maxAttempts: Number(r.max_attempts),
    workerId: String(r.worker_id),
    dispatchedAt: r.dispatched_at instanceof Date ? r.dispatched_at : null,
  }));
}

/** Shard retries whose time has come (`RETRY_WAIT`, `dispatched_at` = earliest re-dispatch). */
export function scanShardRetryDue(conn: Queryable, instanceIds: readonly string[], limit: number): Promise<TimedShard[]> {
  return scanShards(conn, instanceIds, `e.state = 'RETRY_WAIT' AND e.dispatched_at <= NOW(3)`, [], limit);
}

/** Shard executions not ACKed `ms` after their confirmed dispatch (R8 per shard). */
export function scanShardAckExpired(conn: Queryable, instanceIds: readonly string[], ms: number, limit: number): Promise<TimedShard[]> {
  return scanShards(conn, instanceIds, `e.state = 'DISPATCHED' AND e.acked_at IS NULL AND e.dispatched_at + INTERVAL ? MICROSECOND < NOW(3)`, [Math.round(ms) * 1000], limit);
}

/** RUNNING shard executions ACKed more than `ms` ago: their lease is checked in the registry (R14). */
export function scanShardsRunning(conn: Queryable, instanceIds: readonly string[], ms: number, limit: number): Promise<TimedShard[]> {
  return scanShards(conn, instanceIds, `e.state = 'RUNNING' AND e.acked_at + INTERVAL ? MICROSECOND < NOW(3)`, [Math.round(ms) * 1000], limit);
}
