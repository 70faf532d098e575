/**
 * Backlog deferral's queries (#22; the policy is @ax/core `backlog-deferral.ts`, the loop the
 * broker's `backlog-deferral.ts`): the load of each task's instances by priority, the held
 * instances of held pools, and their `DEFERRED` events, once per instance and hold.
 */
import type { RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';

/** One task's instances, split at the deferral priority. */
export interface TaskDeferralLoad {
  readonly taskId: string;
  /** Instances of priority ≥ `belowPriority` that are due PENDING, DISPATCHED or RUNNING. */
  readonly important: number;
  /** Instances of priority < `belowPriority` that are due PENDING (held while their pool holds). */
  readonly deferrable: number;
}

/**
 * Per task with any due PENDING, DISPATCHED or RUNNING instance: how many of them are at or
 * above `belowPriority` (wanting or holding a slot) and how many below it wait. One grouped
 * read over the claim index (`state, priority, due_at`), no lock.
 */
export async function deferralLoadByTask(db: Queryable, belowPriority: number): Promise<TaskDeferralLoad[]> {
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT task_id,
            SUM(priority >= ?) AS important,
            SUM(priority < ? AND state = 'PENDING') AS deferrable
       FROM task_instance
      WHERE (state = 'PENDING' AND due_at <= NOW(3)) OR state IN ('DISPATCHED', 'RUNNING')
      GROUP BY task_id`,
    [belowPriority, belowPriority],
  );
  return rows.map((r) => ({ taskId: String(r.task_id), important: Number(r.important), deferrable: Number(r.deferrable) }));
}

/** The database clock (`NOW(3)`), e.g. the start of a hold (R6). */
export async function databaseNow(db: Queryable): Promise<Date> {
  const [rows] = await db.query<RowDataPacket[]>('SELECT NOW(3) AS now');
  return (rows[0] as { now: Date }).now;
}

/**
 * Locks (`FOR UPDATE SKIP LOCKED`) up to `limit` due PENDING instances of `taskIds` below
 * `belowPriority`: the held instances a pass records. Rows a claim holds are skipped (that claim
 * defers them itself). Call inside a transaction.
 */
export async function lockDeferrable(conn: Queryable, taskIds: readonly string[], belowPriority: number, limit: number): Promise<string[]> {
  if (taskIds.length === 0 || limit <= 0) return [];
  const [rows] = await conn.query<RowDataPacket[]>(
    `SELECT id FROM task_instance
      WHERE state = 'PENDING' AND due_at <= NOW(3) AND priority < ? AND task_id IN (?)
      ORDER BY priority DESC, due_at ASC
      LIMIT ?
      FOR UPDATE SKIP LOCKED`,
    [belowPriority, [...new Set(taskIds)], limit],
  );
  return rows.map((r) => String(r.id));
}

/**
 * Appends one `DEFERRED` event per instance that has none since `since` (the start of the
 * hold), so an instance held through many passes and claims gets one per hold, and one again
 * in a later hold. The rows must be the caller's (locked `FOR UPDATE`, READ COMMITTED), so no
 * other broker writes the same event meanwhile. Returns the ids that got one now.
 */
export async function recordDeferredOnce(
  db: Queryable,
  instanceIds: readonly string[],
  since: Date,
  message: string,
  data: Record<string, unknown>,
): Promise<string[]> {
  if (instanceIds.length === 0) return [];
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT DISTINCT instance_id FROM event_log WHERE instance_id IN (?) AND type = 'DEFERRED' AND at >= ?`,
    [instanceIds, since],
  );
  const seen = new Set(rows.map((r) => String(r.instance_id)));
  const fresh = instanceIds.filter((id) => !seen.has(id));
  if (fresh.length > 0) {
    const json = JSON.stringify(data);
    await db.query(
      `INSERT INTO event_log (instance_id, type, message, data) VALUES ${fresh.map(() => "(?, 'DEFERRED', ?, ?)").join(', ')}`,
      fresh.flatMap((id) => [id, message.slice(0, 2_048), json]),
    );
  }
  return fresh;
}
