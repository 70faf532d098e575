/**
 * Instances people create or stop through the admin API: manual triggers (R1: the request
 * time, moved 1 ms later on a unique conflict; `Idempotency-Key` → the same instance within
 * 24 h) and cancels (a conditional UPDATE from the state read, DESIGN §2).
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { assertTransition, type InstanceState } from '@ax/core';
import { isDuplicateKeyError } from '../errors.js';
import { encodeJson } from '../json.js';
import type { Queryable } from '../schema-version.js';
import { appendEvents } from './events.js';

/** How long an `Idempotency-Key` of a trigger keeps answering with the same instance. */
export const TRIGGER_IDEMPOTENCY_WINDOW_HOURS = 24;

/** Attempts at the next free millisecond before a manual trigger gives up. */
const MANUAL_SLOT_ATTEMPTS = 1_000;

/** A manual instance to create. */
export interface ManualInstance {
  readonly taskId: string;
  readonly taskName: string;
  /** The request time (R1). */
  readonly requestedAt: Date;
  readonly bizDate: string;
  readonly params: Record<string, unknown>;
  readonly priority: number;
  readonly maxAttempts: number;
  /** `manual` (trigger) or `rerun` (a backfill slot). */
  readonly trigger: 'manual' | 'rerun';
  readonly rerunBatchId?: string | null;
  /** Earliest dispatch; default the expected time. */
  readonly dueAt?: Date;
  /**
   * Earliest dispatch in milliseconds after the database's `NOW(3)` (R6: on the database
   * clock); takes precedence over `dueAt`. A backfill slot orders its batch by it.
   */
  readonly dueAfterMs?: number;
  /** Exact slot: no +1 ms move (a backfill slot meets its existing row instead). */
  readonly exact?: boolean;
  readonly message?: string;
}

/**
 * Inserts a `PENDING` instance at `requestedAt`, moving 1 ms later while the slot is taken (R1),
 * and its `CREATED` event. Returns the id and the expected time used, or null with `exact` when
 * the slot exists.
 */
export async function insertManualInstance(db: Queryable, inst: ManualInstance): Promise<{ id: string; expectedTime: Date } | null> {
  let at = inst.requestedAt.getTime();
  const dueExpr = inst.dueAfterMs === undefined ? '?' : 'NOW(3) + INTERVAL ? MICROSECOND';
  for (let i = 0; i < MANUAL_SLOT_ATTEMPTS; i++, at++) {
    const expected = new Date(at);
    try {
      const [result] = await db.query<ResultSetHeader>(
        // The team (R23: the claim reads it from the row) and the version (#47) are the task's
        // at insert, read in the same statement so no caller can pass others.
        `INSERT INTO task_instance (task_id, task_name, team, task_version, expected_time, run_no, biz_date, \`trigger\`, state, attempt, max_attempts,
                                    due_at, params, priority, rerun_batch_id)
         VALUES (?, ?, (SELECT t.team FROM task t WHERE t.id = ?), (SELECT t.version FROM task t WHERE t.id = ?),
                 ?, 1, ?, ?, 'PENDING', 1, ?, ${dueExpr}, ?, ?, ?)`,
        [
          inst.taskId,
          inst.taskName,
          inst.taskId,
          inst.taskId,
          expected,
          inst.bizDate,
          inst.trigger,
          inst.maxAttempts,
          inst.dueAfterMs === undefined ? (inst.dueAt ?? expected) : Math.round(inst.dueAfterMs) * 1000,
          encodeJson(inst.params),
          inst.priority,
          inst.rerunBatchId ?? null,
        ],
      );
      const id = String(result.insertId);
      await appendEvents(db, [{ instanceId: id, type: 'CREATED', message: inst.message ?? `created by a ${inst.trigger} request` }]);
      return { id, expectedTime: expected };
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      if (inst.exact === true) return null;
    }
  }
  throw new Error(`no free slot for ${inst.taskName} within ${MANUAL_SLOT_ATTEMPTS} ms of ${inst.requestedAt.toISOString()}`);
}

/**
 * Reserves an `Idempotency-Key` of a task (inside a transaction, before creating the instance).
 * Returns the instance id it already names (a repeat within 24 h), or null when this request
 * holds the key now and must call {@link bindIdempotencyKey}. A concurrent request with the
 * same key waits on the row until this transaction ends.
 */
export async function reserveIdempotencyKey(db: Queryable, taskName: string, key: string): Promise<string | null> {
  await db.query(
    `DELETE FROM trigger_idempotency WHERE task_name = ? AND idempotency_key = ?
        AND created_at < CURRENT_TIMESTAMP(3) - INTERVAL ${TRIGGER_IDEMPOTENCY_WINDOW_HOURS} HOUR`,
    [taskName, key],
  );
  try {
    await db.query('INSERT INTO trigger_idempotency (task_name, idempotency_key, instance_id) VALUES (?, ?, 0)', [taskName, key]);
    return null;
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
  }
  const [rows] = await db.query<Array<RowDataPacket & { instance_id: string }>>(
    'SELECT instance_id FROM trigger_idempotency WHERE task_name = ? AND idempotency_key = ?',
    [taskName, key],
  );
  const id = rows[0]?.instance_id;
  return id === undefined ? null : String(id);
}

/** Points a reserved key at the instance it created. */
export async function bindIdempotencyKey(db: Queryable, taskName: string, key: string, instanceId: string): Promise<void> {
  await db.query('UPDATE trigger_idempotency SET instance_id = ? WHERE task_name = ? AND idempotency_key = ?', [instanceId, taskName, key]);
}

/** Outcome of {@link cancelInstance}. */
export type CancelOutcome =
  | { kind: 'canceled'; from: InstanceState; workerId: string | null; executionId: string | null }
  | { kind: 'final'; state: InstanceState }
  | { kind: 'lost_race' };

/**
 * Cancels a non-final instance by the user: `CANCELED` with `CANCELED_BY_USER` by a conditional
 * UPDATE from the state it was read in, a `CANCELED` event, and the business claim of its run
 * released. Returns the worker and execution to stop when it was dispatched or running.
 */
export async function cancelInstance(
  db: Queryable,
  instance: { id: string; state: InstanceState; workerId: string | null; currentExecutionId: string | null },
  actor: string,
): Promise<CancelOutcome> {
  if (instance.state === 'SUCCESS' || instance.state === 'FAILED' || instance.state === 'CANCELED') {
    return { kind: 'final', state: instance.state };
  }
  assertTransition(instance.state, 'CANCELED');
  const [result] = await db.query<ResultSetHeader>(
    `UPDATE task_instance SET state = 'CANCELED', reason = 'CANCELED_BY_USER', ended_at = CURRENT_TIMESTAMP(3),
            ack_deadline = NULL, lease_until = NULL
      WHERE id = ? AND state = ?`,
    [instance.id, instance.state],
  );
  if (result.affectedRows !== 1) return { kind: 'lost_race' };
  const running = instance.state === 'DISPATCHED' || instance.state === 'RUNNING';
  await appendEvents(db, [
    {
      instanceId: instance.id,
      type: 'CANCELED',
      executionId: running ? instance.currentExecutionId : null,
      workerId: running ? instance.workerId : null,
      message: `canceled by ${actor}`,
      data: { reason: 'CANCELED_BY_USER', from: instance.state },
    },
  ]);
  await db.query('DELETE FROM execution_claim WHERE instance_id = ?', [instance.id]);
  return {
    kind: 'canceled',
    from: instance.state,
    workerId: running ? instance.workerId : null,
    executionId: running ? instance.currentExecutionId : null,
  };
}
