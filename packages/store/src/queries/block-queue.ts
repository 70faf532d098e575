/**
 * `block: {"queue": N}` at claim (R4): the instances of such a task run one after another in
 * slot order. The broker dispatches an instance only when no DISPATCHED/RUNNING one of its task
 * exists (as for `serial`) and it is the task's earliest waiting slot: no instance with an
 * earlier `expected_time` is still WAITING, PENDING or RETRY_WAIT (a retry of an earlier slot
 * runs before the later ones). Served by `idx_instance_task_state (task_name, state)`.
 */
import type { RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';

/** Per task name: the earliest `expected_time` (epoch ms) among its waiting instances. */
export async function earliestWaitingSlots(db: Queryable, taskNames: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (taskNames.length === 0) return out;
  const [rows] = await db.query<Array<RowDataPacket & { task_name: string; first: Date }>>(
    `SELECT task_name, MIN(expected_time) AS first FROM task_instance
      WHERE task_name IN (?) AND state IN ('WAITING', 'PENDING', 'RETRY_WAIT')
      GROUP BY task_name`,
    [[...new Set(taskNames)]],
  );
  for (const r of rows) out.set(r.task_name, r.first.getTime());
  return out;
}
