/**
 * `pauseAfterFailures` (ADMIN-API.md "Task definition"): after the N-th consecutive FAILED
 * run of a task, the task disables itself with `paused_reason = 'FAILURES'` and raises one
 * `TASK_PAUSED` alert.
 *
 * "Consecutive" is read from the instances themselves, not kept in a counter: the task's last
 * N instances that ended SUCCESS or FAILED (by `ended_at`, read backwards on
 * `idx_instance_task_ended`), counting only those that ended at or after `failures_reset_at`
 * (set by every enable, so enabling clears the count). CANCELED instances neither count nor
 * break a run of failures. A success therefore resets the count without any write of its own.
 *
 * The pause itself is one conditional write (`… WHERE id = ? AND enabled = 1`): two brokers
 * failing two instances at once both see N failures, one of them pauses and alerts.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { raiseAlert } from './alerts.js';
import { getTaskById, withdrawPrecreatedSlots } from './tasks.js';
import { recordTaskVersion, recordVersionBeingReplaced } from './task-versions.js';
import type { Queryable } from '../schema-version.js';

/** `paused_reason` of a task disabled by `pauseAfterFailures`. */
export const PAUSED_BY_FAILURES = 'FAILURES';

/** A task this call paused. */
export interface PausedTask {
  readonly taskId: string;
  readonly taskName: string;
  readonly failures: number;
}

type TaskPauseRow = RowDataPacket & { id: string; name: string; version: number; pause_after_failures: number | null; failures_reset_at: Date | null; enabled: number };

/**
 * Call after `instanceId` reached FAILED (final), in the same transaction. Pauses its task
 * when that makes N consecutive failures; returns the paused task, or null (no limit, not yet
 * N, already disabled, or another caller paused it first).
 */
export async function pauseTaskAfterFailures(conn: Queryable, instanceId: string): Promise<PausedTask | null> {
  const [tasks] = await conn.query<TaskPauseRow[]>(
    `SELECT t.id, t.name, t.version, t.pause_after_failures, t.failures_reset_at, t.enabled
       FROM task_instance i JOIN task t ON t.id = i.task_id
      WHERE i.id = ?`,
    [instanceId],
  );
  const task = tasks[0];
  if (task === undefined || task.pause_after_failures === null || Number(task.enabled) !== 1) return null;
  const n = Number(task.pause_after_failures);
  const [last] = await conn.query<Array<RowDataPacket & { state: string }>>(
    `SELECT state FROM task_instance
      WHERE task_id = ? AND ended_at IS NOT NULL AND state IN ('SUCCESS', 'FAILED')${task.failures_reset_at === null ? '' : ' AND ended_at >= ?'}
      ORDER BY ended_at DESC, id DESC
      LIMIT ?`,
    task.failures_reset_at === null ? [task.id, n] : [task.id, task.failures_reset_at, n],
  );
  if (last.length < n || last.some((r) => r.state !== 'FAILED')) return null;
  const before = await getTaskById(conn, String(task.id));
  if (before !== null) await recordVersionBeingReplaced(conn, before);
  const [result] = await conn.query<ResultSetHeader>(
    `UPDATE task SET enabled = 0, paused_reason = ?, version = version + 1, updated_at = CURRENT_TIMESTAMP(3)
      WHERE id = ? AND enabled = 1`,
    [PAUSED_BY_FAILURES, task.id],
  );
  if (result.affectedRows !== 1) return null;
  const paused = await getTaskById(conn, String(task.id));
  if (paused !== null) await recordTaskVersion(conn, paused, null); // the system saved it: no actor
  await withdrawPrecreatedSlots(conn, task.name);
  await raiseAlert(conn, {
    kind: 'TASK_PAUSED',
    severity: 'critical',
    // One alert per pause: the version the pause replaced names it.
    subject: `task:${task.id}:v${task.version}`,
    taskName: task.name,
    instanceId,
    reason: PAUSED_BY_FAILURES,
    message: `${task.name} disabled itself after ${n} consecutive failed runs (pauseAfterFailures ${n}); enable it to resume`,
  });
  return { taskId: String(task.id), taskName: task.name, failures: n };
}
