/**
 * What the broker reads and writes when ACKs, refusals and results arrive (DESIGN §4,
 * R15–R17): executions with their instance, locked so that two brokers applying replies of the
 * same instance serialize, and the execution run log.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { backoffPolicyOf, type InstanceState } from '@ax/core';
import { decodeJson, encodeJsonNullable } from '../json.js';
import type { Queryable } from '../schema-version.js';

/** An execution and the instance it belongs to, as locked by `lockExecutions`. */
export interface ExecutionWithInstance {
  readonly executionId: string;
  readonly executionState: string;
  readonly executionWorkerId: string;
  readonly executionAttempt: number;
  readonly ackedAt: Date | null;
  readonly endedAt: Date | null;
  /** Milliseconds from dispatch to now, on the database clock. */
  readonly sinceDispatchMs: number;
  readonly instanceId: string;
  readonly taskId: string;
  readonly taskName: string;
  readonly bizDate: string;
  readonly state: InstanceState;
  readonly currentExecutionId: string | null;
  readonly workerId: string | null;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly lostCount: number;
  readonly timeoutSeconds: number | null;
  readonly retry: { backoffSeconds: number; factor: number; jitterSeconds: number } | null;
  /** Broadcast shard of the execution (R21), or null. */
  readonly executionShardIndex: number | null;
  readonly executionShardTotal: number | null;
  readonly executionRunNo: number;
  /** The instance's current run number (R18). */
  readonly runNo: number;
  /** The instance's `shard_total` (R21), or null. */
  readonly shardTotal: number | null;
  /** True unless a later execution of the same (instance, run, shard) exists (R21 fencing). */
  readonly latestOfShard: boolean;
}

type Row = RowDataPacket & Record<string, unknown>;

function toRecord(r: Row): ExecutionWithInstance {
  const bizDate = r.biz_date instanceof Date ? r.biz_date.toISOString().slice(0, 10) : String(r.biz_date);
  const retryRaw = r.retry == null ? null : decodeJson<Record<string, unknown>>(r.retry);
  return {
    executionId: String(r.execution_id),
    executionState: String(r.exec_state),
    executionWorkerId: String(r.exec_worker_id),
    executionAttempt: Number(r.exec_attempt),
    ackedAt: (r.acked_at as Date | null) ?? null,
    endedAt: (r.exec_ended_at as Date | null) ?? null,
    sinceDispatchMs: Math.floor(Number(r.since_dispatch_us) / 1000),
    instanceId: String(r.instance_id),
    taskId: String(r.task_id),
    taskName: String(r.task_name),
    bizDate,
    state: r.state as InstanceState,
    currentExecutionId: (r.current_execution_id as string | null) ?? null,
    workerId: (r.worker_id as string | null) ?? null,
    attempt: Number(r.attempt),
    maxAttempts: Number(r.max_attempts),
    lostCount: Number(r.lost_count),
    timeoutSeconds: r.timeout_s == null ? null : Number(r.timeout_s),
    retry: retryRaw === null ? null : backoffPolicyOf(retryRaw),
    executionShardIndex: r.shard_index == null ? null : Number(r.shard_index),
    executionShardTotal: r.exec_shard_total == null ? null : Number(r.exec_shard_total),
    executionRunNo: Number(r.exec_run_no),
    runNo: Number(r.run_no),
    shardTotal: r.inst_shard_total == null ? null : Number(r.inst_shard_total),
    latestOfShard: Number(r.latest_of_shard) === 1,
  };
}

const SELECT = `SELECT e.execution_id, e.state AS exec_state, e.worker_id AS exec_worker_id, e.attempt AS exec_attempt,
         e.acked_at, e.ended_at AS exec_ended_at,
         TIMESTAMPDIFF(MICROSECOND, e.dispatched_at, NOW(3)) AS since_dispatch_us,
         i.id AS instance_id, i.task_id, i.task_name, i.biz_date, i.state, i.current_execution_id, i.worker_id,
         i.attempt, i.max_attempts, i.lost_count, t.timeout_s, t.retry,
         e.shard_index, e.shard_total AS exec_shard_total, e.run_no AS exec_run_no, i.run_no, i.shard_total AS inst_shard_total,
         (e.shard_index IS NULL OR NOT EXISTS (SELECT 1 FROM task_execution x
            WHERE x.instance_id = e.instance_id AND x.run_no = e.run_no AND x.shard_index = e.shard_index AND x.id > e.id)) AS latest_of_shard
    FROM task_execution e
    JOIN task_instance i ON i.id = e.instance_id
    LEFT JOIN task t ON t.id = i.task_id`;

/**
 * The executions with these ids and their instances, instance rows locked `FOR UPDATE` (in id
 * order, so two brokers never deadlock on them). Unknown ids are absent from the map.
 *
 * `instanceIdHints` (the instance ids the replies name) saves the lookup of which instances to
 * lock. They are only hints: when a row read belongs to an instance that was not locked (a
 * reply naming the wrong instance), the lookup is done and the rows are read again.
 */
export async function lockExecutions(
  conn: Queryable,
  executionIds: readonly string[],
  instanceIdHints?: readonly string[],
): Promise<Map<string, ExecutionWithInstance>> {
  const ids = [...new Set(executionIds)];
  if (ids.length === 0) return new Map();
  if (instanceIdHints !== undefined && instanceIdHints.length > 0 && instanceIdHints.every((id) => INSTANCE_ID.test(id))) {
    const locked = new Set(await lockInstances(conn, instanceIdHints));
    const out = await readLocked(conn, ids);
    if ([...out.values()].every((r) => locked.has(r.instanceId))) return out;
  }
  const [idRows] = await conn.query<Row[]>(`SELECT DISTINCT instance_id FROM task_execution WHERE execution_id IN (?)`, [ids]);
  if (idRows.length === 0) return new Map();
  await lockInstances(conn, idRows.map((r) => String(r.instance_id)));
  return readLocked(conn, ids);
}

/** What an instance id looks like (BIGINT UNSIGNED); a hint that does not is not used. */
const INSTANCE_ID = /^[0-9]{1,20}$/;

/** Locks instance rows in id order; returns the ids (deduplicated). */
async function lockInstances(conn: Queryable, instanceIds: readonly string[]): Promise<string[]> {
  const sorted = [...new Set(instanceIds)].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  await conn.query(`SELECT id FROM task_instance WHERE id IN (?) ORDER BY id FOR UPDATE`, [sorted]);
  return sorted;
}

async function readLocked(conn: Queryable, executionIds: readonly string[]): Promise<Map<string, ExecutionWithInstance>> {
  const out = new Map<string, ExecutionWithInstance>();
  const [rows] = await conn.query<Row[]>(`${SELECT} WHERE e.execution_id IN (?)`, [executionIds]);
  for (const row of rows) {
    const record = toRecord(row);
    out.set(record.executionId, record);
  }
  return out;
}

/** Reads executions with their instances without locking (tests, admin). */
export async function readExecutions(db: Queryable, executionIds: readonly string[]): Promise<Map<string, ExecutionWithInstance>> {
  const out = new Map<string, ExecutionWithInstance>();
  if (executionIds.length === 0) return out;
  const [rows] = await db.query<Row[]>(`${SELECT} WHERE e.execution_id IN (?)`, [[...executionIds]]);
  for (const row of rows) out.set(String(row.execution_id), toRecord(row));
  return out;
}

/** Marks an execution ACKed (first ACK only). */
export async function markExecutionAcked(db: Queryable, executionId: string): Promise<boolean> {
  const [result] = await db.query<ResultSetHeader>(
    `UPDATE task_execution SET acked_at = NOW(3), state = IF(state = 'DISPATCHED', 'RUNNING', state)
      WHERE execution_id = ? AND acked_at IS NULL`,
    [executionId],
  );
  return result.affectedRows === 1;
}

/** The recorded outcome of an execution. */
export interface ExecutionOutcome {
  readonly state: string;
  readonly reason?: string | null;
  readonly exitCode?: number | null;
  readonly outputTail?: string | null;
  readonly outputTruncated?: boolean;
  readonly error?: string | null;
  readonly result?: Record<string, unknown> | null;
  readonly startedAt?: Date | null;
  readonly endedAt?: Date | null;
  /** Keep `ended_at` NULL (an accepted async execution is not over). */
  readonly open?: boolean;
}

/** Records an execution's outcome (the run log). */
export async function recordExecutionOutcome(db: Queryable, executionId: string, o: ExecutionOutcome): Promise<void> {
  await db.query(
    `UPDATE task_execution
        SET state = ?, reason = ?, exit_code = ?, output_tail = ?, output_truncated = ?, error = ?,
            result = COALESCE(?, result),
            started_at = COALESCE(?, started_at, acked_at),
            ended_at = ${o.open ? 'NULL' : 'COALESCE(?, NOW(3))'}
      WHERE execution_id = ?`,
    [
      o.state,
      o.reason ?? null,
      o.exitCode ?? null,
      o.outputTail ?? null,
      o.outputTruncated ? 1 : 0,
      o.error ?? null,
      encodeJsonNullable(o.result ?? null),
      o.startedAt ?? null,
      ...(o.open ? [] : [o.endedAt ?? null]),
      executionId,
    ],
  );
}

/** Stores a message that failed validation or processing (`dead_letter`). */
export async function insertDeadLetter(
  db: Queryable,
  letter: { sourceQueue: string; reason: string; payload: string | null; headers: Record<string, unknown> | null },
): Promise<void> {
  await db.query(`INSERT INTO dead_letter (source_queue, reason, payload, headers) VALUES (?, ?, ?, ?)`, [
    letter.sourceQueue.slice(0, 255),
    letter.reason.slice(0, 2_048),
    letter.payload === null ? null : letter.payload.slice(0, 1_000_000),
    encodeJsonNullable(letter.headers),
  ]);
}
