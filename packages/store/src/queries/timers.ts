/**
 * Timed transitions as predicates on the database clock (R6, R7): every broker scans them and
 * applies conditional UPDATEs, so no in-process timer owns a transition. Each scan locks what
 * it found with `FOR UPDATE SKIP LOCKED`: call inside a transaction.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';
import { NAMES_PER_IN_LIST } from './instances-create.js';

/**
 * Whether any instance is unfinished (WAITING, PENDING, DISPATCHED, RUNNING or RETRY_WAIT): the
 * one plain read an idle timers pass takes instead of its transactions and scans (#24). Every
 * timed transition and alert starts from such a row; none locks here.
 */
export async function anyUnfinished(db: Queryable): Promise<boolean> {
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT 1 AS n FROM task_instance WHERE state IN ('WAITING', 'PENDING', 'DISPATCHED', 'RUNNING', 'RETRY_WAIT') LIMIT 1`,
  );
  return rows.length > 0;
}

/** An instance found by a timer scan. */
export interface TimedInstance {
  readonly id: string;
  readonly taskId: string;
  readonly taskName: string;
  readonly bizDate: string;
  readonly workerId: string | null;
  readonly executionId: string | null;
  /** State of the current execution row (`ASYNC` = accepted by an HTTP endpoint, R15). */
  readonly executionState: string | null;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly rerouteCount: number;
  readonly lostCount: number;
  /** The ACK deadline (R8), null outside DISPATCHED. */
  readonly ackDeadline: Date | null;
}

type Row = RowDataPacket & Record<string, unknown>;

function toTimed(r: Row): TimedInstance {
  return {
    id: String(r.id),
    taskId: String(r.task_id),
    taskName: String(r.task_name),
    bizDate: r.biz_date instanceof Date ? r.biz_date.toISOString().slice(0, 10) : String(r.biz_date),
    workerId: (r.worker_id as string | null) ?? null,
    executionId: (r.current_execution_id as string | null) ?? null,
    executionState: (r.exec_state as string | null) ?? null,
    attempt: Number(r.attempt),
    maxAttempts: Number(r.max_attempts),
    rerouteCount: Number(r.reroute_count),
    lostCount: Number(r.lost_count),
    ackDeadline: r.ack_deadline instanceof Date ? r.ack_deadline : null,
  };
}

async function scan(conn: Queryable, where: string, params: unknown[], limit: number): Promise<TimedInstance[]> {
  const [rows] = await conn.query<Row[]>(
    `SELECT i.id, i.task_id, i.task_name, i.biz_date, i.worker_id, i.current_execution_id, i.attempt, i.max_attempts,
            i.reroute_count, i.lost_count, i.ack_deadline,
            (SELECT e.state FROM task_execution e WHERE e.execution_id = i.current_execution_id) AS exec_state
       FROM task_instance i
      WHERE ${where}
      ORDER BY i.id
      LIMIT ?
      FOR UPDATE SKIP LOCKED`,
    [...params, limit],
  );
  return rows.map(toTimed);
}

/** RETRY_WAIT instances whose `due_at` has passed. */
export function scanRetryDue(conn: Queryable, limit: number): Promise<TimedInstance[]> {
  return scan(conn, `i.state = 'RETRY_WAIT' AND i.due_at <= NOW(3)`, [], limit);
}

/**
 * In how many ms (database clock) the earliest RETRY_WAIT instance falls due, looking `withinMs`
 * ahead; null when none does. 0 = one is due now.
 */
export async function nextRetryDueInMs(conn: Queryable, withinMs: number): Promise<number | null> {
  const [rows] = await conn.query<Array<RowDataPacket & { us: number | string | null }>>(
    `SELECT GREATEST(0, TIMESTAMPDIFF(MICROSECOND, NOW(3), MIN(due_at))) AS us
       FROM task_instance WHERE state = 'RETRY_WAIT' AND due_at <= NOW(3) + INTERVAL ? MICROSECOND`,
    [withinMs * 1000],
  );
  const us = rows[0]?.us;
  return us === null || us === undefined ? null : Number(us) / 1000;
}

/**
 * In how many ms (database clock) the earliest ACK deadline not yet expired passes `graceMs`
 * (R8), looking `withinMs` ahead; null when none does. Deadlines already expired are left out:
 * one the expiry pass saw and kept (its worker holds it while its RabbitMQ link is down) would
 * otherwise wake the pass over and over; the poll looks at those again.
 */
export async function nextAckExpiryInMs(conn: Queryable, graceMs: number, withinMs: number): Promise<number | null> {
  const [rows] = await conn.query<Array<RowDataPacket & { us: number | string | null }>>(
    `SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), MIN(ack_deadline) + INTERVAL ? MICROSECOND) AS us
       FROM task_instance
      WHERE state = 'DISPATCHED'
        AND ack_deadline > NOW(3) - INTERVAL ? MICROSECOND
        AND ack_deadline <= NOW(3) + INTERVAL ? MICROSECOND`,
    [graceMs * 1000, graceMs * 1000, (withinMs - graceMs) * 1000],
  );
  const us = rows[0]?.us;
  return us === null || us === undefined ? null : Math.max(0, Number(us) / 1000);
}

/**
 * Workers of DISPATCHED instances whose ACK deadline passed more than `graceMs` ago (at most
 * `limit`): the broker reads their queues when they have no registry entry (#23: a dispatch still
 * queued for a worker that left never reached it).
 */
export async function ackExpiredWorkerIds(conn: Queryable, graceMs: number, limit = 100): Promise<string[]> {
  const [rows] = await conn.query<Array<RowDataPacket & { worker_id: string | null }>>(
    `SELECT DISTINCT worker_id FROM task_instance
      WHERE state = 'DISPATCHED' AND ack_deadline < NOW(3) - INTERVAL ? MICROSECOND AND worker_id IS NOT NULL
      LIMIT ?`,
    [graceMs * 1000, limit],
  );
  return rows.flatMap((r) => (r.worker_id === null ? [] : [String(r.worker_id)]));
}

/** DISPATCHED instances whose ACK deadline passed more than `graceMs` ago (R8: 3 s). */
export function scanAckExpired(conn: Queryable, graceMs: number, limit: number): Promise<TimedInstance[]> {
  return scan(conn, `i.state = 'DISPATCHED' AND i.ack_deadline < NOW(3) - INTERVAL ? MICROSECOND`, [graceMs * 1000], limit);
}

/** RUNNING instances whose lease passed more than `graceMs` ago (R14; async attempt deadlines too). */
export function scanLeaseExpired(conn: Queryable, graceMs: number, limit: number): Promise<TimedInstance[]> {
  return scan(conn, `i.state = 'RUNNING' AND i.lease_until < NOW(3) - INTERVAL ? MICROSECOND`, [graceMs * 1000], limit);
}

/** DISPATCHED instances whose current execution is one of `executionIds`. */
export function scanDispatchedExecutions(conn: Queryable, executionIds: readonly string[], limit: number): Promise<TimedInstance[]> {
  if (executionIds.length === 0) return Promise.resolve([]);
  return scan(conn, `i.state = 'DISPATCHED' AND i.current_execution_id IN (?)`, [executionIds], limit);
}

/**
 * RUNNING instances of `workerIds` whose current execution is running on its worker (not
 * accepted-async, R15), whatever their lease: those workers are known gone (the broker's
 * worker-presence signal, R14).
 */
export function scanRunningOfWorkers(conn: Queryable, workerIds: readonly string[], limit: number): Promise<TimedInstance[]> {
  if (workerIds.length === 0) return Promise.resolve([]);
  return scan(
    conn,
    `i.state = 'RUNNING' AND i.worker_id IN (?)
     AND EXISTS (SELECT 1 FROM task_execution e WHERE e.execution_id = i.current_execution_id AND e.state = 'RUNNING')`,
    [workerIds],
    limit,
  );
}

/**
 * Moves the lease (or attempt deadline) of a RUNNING instance to now + `ms`, fenced by its
 * execution. Not a state change; true when the row matched.
 */
export async function extendLease(db: Queryable, instanceId: string, executionId: string, ms: number): Promise<boolean> {
  const [result] = await db.query<ResultSetHeader>(
    `UPDATE task_instance SET lease_until = NOW(3) + INTERVAL ? MICROSECOND
      WHERE id = ? AND state = 'RUNNING' AND current_execution_id = ?`,
    [Math.round(ms) * 1000, instanceId, executionId],
  );
  return result.affectedRows === 1;
}

/** A RUNNING instance past 80 % of its task's timeout without a LONG_RUNNING alert yet. */
export interface LongRunning {
  readonly id: string;
  readonly taskName: string;
  readonly workerId: string | null;
  readonly executionId: string | null;
  readonly timeoutSeconds: number;
}

/**
 * RUNNING instances whose attempt passed `fraction` (0.8) of the task's `timeout_s` on the
 * database clock and that have no `LONG_RUNNING` alert yet (DESIGN §7).
 */
export async function scanLongRunning(db: Queryable, fraction: number, limit: number): Promise<LongRunning[]> {
  const [rows] = await db.query<Row[]>(
    `SELECT i.id, i.task_name, i.worker_id, i.current_execution_id, t.timeout_s
       FROM task_instance i JOIN task t ON t.id = i.task_id
      WHERE i.state = 'RUNNING' AND i.started_at IS NOT NULL
        AND i.started_at + INTERVAL (t.timeout_s * ?) MICROSECOND < NOW(3)
        AND NOT EXISTS (SELECT 1 FROM alert_log a WHERE a.dedup_key = CONCAT('LONG_RUNNING:instance:', i.id))
      LIMIT ?`,
    [Math.round(fraction * 1_000_000), limit],
  );
  return rows.map((r) => ({
    id: String(r.id),
    taskName: String(r.task_name),
    workerId: (r.worker_id as string | null) ?? null,
    executionId: (r.current_execution_id as string | null) ?? null,
    timeoutSeconds: Number(r.timeout_s),
  }));
}

/** Which limit of a task's `sla` an instance missed. */
export type SlaMiss = 'START' | 'FINISH';

/** An instance past its task's `sla` without an `SLA_MISSED` alert yet. */
export interface SlaMissed {
  readonly id: string;
  readonly taskName: string;
  readonly expectedTime: Date;
  readonly miss: SlaMiss;
  /** The limit it missed, seconds after `expectedTime`. */
  readonly withinSeconds: number;
}

/**
 * `sla` (ADMIN-API.md "Task definition"), on the database clock: instances not final whose task
 * has `sla.startWithinSeconds` and that have not started (`started_at` NULL, not RUNNING) that
 * long after `expected_time`, or `sla.finishWithinSeconds` and are still not final that long
 * after it — and that have no `SLA_MISSED` alert yet (one per instance, whichever limit it
 * missed first; a start miss is reported as such when both are past). Only the first run of a
 * slot outside rerun batches counts: a rerun or a backfill of an old slot is late by
 * construction.
 *
 * The names of the tasks with an `sla` (none: done), read through migration 0007's
 * idx_task_sla_start and idx_task_sla_finish (an index_merge union: only those tasks, where it
 * read every task row every tick); then their open instances as ranges of
 * `idx_instance_task_state (task_name, state)`, one per name and state, NAMES_PER_IN_LIST names a
 * statement (one IN list of every name grew with the tasks), each chunk's first `limit` by
 * `expected_time` (then id), merged and cut to `limit`: what one statement would return. As one
 * join, MariaDB walked idx_instance_expected (migration 0006) from its oldest entry for the ORDER
 * BY ... LIMIT, or a task's whole history by (task_id, ended_at): with no task under an sla that
 * was every instance ever kept, every tick (the soak of 2026-12-03: seconds per scan at 300,000
 * rows).
 */
export async function scanSlaMissed(db: Queryable, limit: number): Promise<SlaMissed[]> {
  const [tasks] = await db.query<Array<RowDataPacket & { name: string }>>(
    'SELECT name FROM task WHERE sla_start_s IS NOT NULL OR sla_finish_s IS NOT NULL',
  );
  if (tasks.length === 0) return [];
  const names = tasks.map((t) => t.name);
  const found: SlaRow[] = [];
  for (let k = 0; k < names.length; k += NAMES_PER_IN_LIST) {
    found.push(...(await openSlaMisses(db, names.slice(k, k + NAMES_PER_IN_LIST), limit)));
  }
  found.sort(bySlotThenId);
  return found.slice(0, limit).map((r) => ({
    id: String(r.id),
    taskName: r.task_name,
    expectedTime: r.expected_time,
    miss: r.miss === 'START' ? 'START' : 'FINISH',
    withinSeconds: Number(r.within_s),
  }));
}

type SlaRow = RowDataPacket & { id: string; task_name: string; expected_time: Date; miss: string; within_s: number };

/** The scan's ORDER BY: `expected_time`, then the instance id. */
function bySlotThenId(a: SlaRow, b: SlaRow): number {
  const bySlot = a.expected_time.getTime() - b.expected_time.getTime();
  if (bySlot !== 0) return bySlot;
  const x = BigInt(a.id);
  const y = BigInt(b.id);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The first `limit` late open instances of the tasks `names` (scanSlaMissed's second statement). */
async function openSlaMisses(db: Queryable, names: string[], limit: number): Promise<SlaRow[]> {
  const [rows] = await db.query<SlaRow[]>(
    `SELECT id, task_name, expected_time, miss, within_s FROM (
       SELECT i.id, i.task_name, i.expected_time,
              CASE WHEN t.sla_start_s IS NOT NULL AND i.started_at IS NULL AND i.state <> 'RUNNING'
                        AND i.expected_time <= NOW(3) - INTERVAL t.sla_start_s SECOND
                   THEN 'START' ELSE 'FINISH' END AS miss,
              CASE WHEN t.sla_start_s IS NOT NULL AND i.started_at IS NULL AND i.state <> 'RUNNING'
                        AND i.expected_time <= NOW(3) - INTERVAL t.sla_start_s SECOND
                   THEN t.sla_start_s ELSE t.sla_finish_s END AS within_s
         FROM task_instance i FORCE INDEX (idx_instance_task_state)
         JOIN task t ON t.id = i.task_id AND t.name = i.task_name
        WHERE i.task_name IN (?)
          AND i.state IN ('WAITING', 'PENDING', 'DISPATCHED', 'RUNNING', 'RETRY_WAIT')
          AND i.run_no = 1 AND i.rerun_batch_id IS NULL
          AND ((t.sla_start_s IS NOT NULL AND i.started_at IS NULL AND i.state <> 'RUNNING'
                AND i.expected_time <= NOW(3) - INTERVAL t.sla_start_s SECOND)
            OR (t.sla_finish_s IS NOT NULL AND i.expected_time <= NOW(3) - INTERVAL t.sla_finish_s SECOND))
          AND NOT EXISTS (SELECT 1 FROM alert_log a WHERE a.dedup_key = CONCAT('SLA_MISSED:instance:', i.id))
        ORDER BY i.expected_time, i.id
        LIMIT ?) m`,
    [names, limit],
  );
  return rows;
}
