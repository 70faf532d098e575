/**
 * R19, the read half of the dependency timeout: WAITING instances whose due time is more than
 * their task's `dependency_timeout_s` before `now`. The scheduler cancels them one by one with
 * a conditional write, so this read takes no locks.
 *
 * Served by `idx_instance_claim (state, priority DESC, due_at)`: equality on `state`, `due_at`
 * checked inside the index (migration 0002 dropped the `(state, due_at)` index; WAITING rows
 * are few next to the final ones).
 */
import type { RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';

/** A WAITING instance past its task's dependency timeout. */
export interface TimedOutWaiting {
  readonly id: string;
  readonly taskName: string;
  readonly dependencyTimeoutSeconds: number;
}

/**
 * Up to `limit` WAITING instances with `due_at <= now - dependency_timeout_s`, by id. `now` is
 * the caller's clock (the scheduler's, kept near MySQL's by its skew check).
 */
export async function waitingPastDependencyTimeout(db: Queryable, now: Date, limit: number): Promise<TimedOutWaiting[]> {
  const [rows] = await db.query<Array<RowDataPacket & { id: string; task_name: string; dependency_timeout_s: number }>>(
    `SELECT i.id, i.task_name, t.dependency_timeout_s FROM task_instance i JOIN task t ON t.name = i.task_name
      WHERE i.state = 'WAITING' AND i.due_at <= DATE_SUB(?, INTERVAL t.dependency_timeout_s SECOND)
      ORDER BY i.id LIMIT ?`,
    [now, limit],
  );
  return rows.map((r) => ({ id: String(r.id), taskName: r.task_name, dependencyTimeoutSeconds: Number(r.dependency_timeout_s) }));
}
