/**
 * R19, the read half of the dependency timeout: WAITING instances whose due time is more than
 * their task's `dependency_timeout_s` before the database's `NOW(3)` (R6/R7: the predicate is a
 * column comparison on the database clock, whatever the caller's clock says). An instance is
 * joined to its task by the immutable `task_id` (R3), so a task re-created under the same name
 * does not lend its timeout to the old task's instances; an instance whose task row is gone
 * waits the fallback timeout instead of forever. The scheduler cancels them one by one with a
 * conditional write, so this read takes no locks.
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
 * The task's own timeout, or the fallback (a parameter) when the task sets none (migration
 * 0016: `dependency_timeout_default`, #47) or is gone.
 */
const OWN_OR_FALLBACK = 'IF(t.id IS NULL OR t.dependency_timeout_default = 1, ?, t.dependency_timeout_s)';

/**
 * Up to `limit` WAITING instances with `due_at <= NOW(3) - dependency_timeout_s` of their task
 * (`fallbackTimeoutSeconds`, AX_DEPENDENCY_TIMEOUT_S, when the task sets none or was deleted), by id.
 */
export async function waitingPastDependencyTimeout(db: Queryable, fallbackTimeoutSeconds: number, limit: number): Promise<TimedOutWaiting[]> {
  const [rows] = await db.query<Array<RowDataPacket & { id: string; task_name: string; dependency_timeout_s: number }>>(
    `SELECT i.id, i.task_name, ${OWN_OR_FALLBACK} AS dependency_timeout_s
       FROM task_instance i LEFT JOIN task t ON t.id = i.task_id
      WHERE i.state = 'WAITING' AND i.due_at <= NOW(3) - INTERVAL ${OWN_OR_FALLBACK} SECOND
      ORDER BY i.id LIMIT ?`,
    [fallbackTimeoutSeconds, fallbackTimeoutSeconds, limit],
  );
  return rows.map((r) => ({ id: String(r.id), taskName: r.task_name, dependencyTimeoutSeconds: Number(r.dependency_timeout_s) }));
}
