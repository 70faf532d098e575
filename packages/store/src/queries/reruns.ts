/**
 * Reruns (ADMIN-API.md "Reruns", R18, R20): a `rerun_batch` row holds the request and its
 * concurrency limit (checked by brokers at claim); a final instance moves back to `PENDING`
 * (or `WAITING` below a rerun parent) with `run_no + 1`, a fresh attempt budget and a
 * `RERUN_REQUESTED` event, by a conditional UPDATE from the state it was read in.
 */
import type { ResultSetHeader } from 'mysql2';
import { assertTransition, type InstanceState } from '@ax/core';
import { encodeJson } from '../json.js';
import type { Queryable } from '../schema-version.js';
import { appendEvents } from './events.js';

/** A rerun request to record. */
export interface NewRerunBatch {
  mode: string;
  reason: string;
  actor: string;
  concurrency: number | null;
  forceDownstream: boolean;
  request: unknown;
}

/** Inserts a `rerun_batch` row; returns its id. */
export async function insertRerunBatch(db: Queryable, batch: NewRerunBatch): Promise<string> {
  const [result] = await db.query<ResultSetHeader>(
    'INSERT INTO rerun_batch (mode, reason, actor, concurrency, force_downstream, request) VALUES (?, ?, ?, ?, ?, ?)',
    [batch.mode, batch.reason.slice(0, 2048), batch.actor.slice(0, 128), batch.concurrency, batch.forceDownstream ? 1 : 0, encodeJson(batch.request)],
  );
  return String(result.insertId);
}

/** One instance to run again. */
export interface RerunTarget {
  readonly id: string;
  /** The state it was read in (final). */
  readonly from: InstanceState;
  readonly to: 'PENDING' | 'WAITING';
  readonly maxAttempts: number;
  readonly batchId: string;
  /**
   * Earliest dispatch, in milliseconds after the database's `NOW(3)` (R6: written on the
   * database clock); a batch orders its items oldest first by it.
   */
  readonly dueAfterMs: number;
  readonly actor: string;
  readonly reason: string;
}

/**
 * Moves a final instance back for a rerun. Returns false when it is no longer in `from`
 * (someone else changed it first).
 */
export async function rerunInstance(db: Queryable, t: RerunTarget): Promise<boolean> {
  assertTransition(t.from, t.to);
  const [result] = await db.query<ResultSetHeader>(
    `UPDATE task_instance
        SET state = ?, reason = NULL, run_no = run_no + 1, attempt = 1, max_attempts = ?, \`trigger\` = 'rerun',
            due_at = NOW(3) + INTERVAL ? MICROSECOND, worker_id = NULL, current_execution_id = NULL, dispatch_count = 0, reroute_count = 0,
            lost_count = 0, ack_deadline = NULL, lease_until = NULL, shard_total = NULL, rerun_batch_id = ?,
            started_at = NULL, ended_at = NULL
      WHERE id = ? AND state = ?`,
    [t.to, t.maxAttempts, Math.round(t.dueAfterMs) * 1000, t.batchId, t.id, t.from],
  );
  if (result.affectedRows !== 1) return false;
  await appendEvents(db, [
    {
      instanceId: t.id,
      type: 'RERUN_REQUESTED',
      message: `rerun requested by ${t.actor}: ${t.reason}`.slice(0, 2048),
      data: { batchId: t.batchId, from: t.from, to: t.to },
    },
  ]);
  return true;
}
