/**
 * The latest instance of each task of a page, for the task list's "last run" (`lastRun` of
 * `GET /api/v1/tasks` items): one query for the whole page, never one per task.
 */
import type { RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';

/** The latest instance of a task as the task list shows it. */
export interface LastRun {
  instanceId: string;
  state: string;
  endedAt: string | null;
}

/**
 * The latest instance of each of `names`, in one query for the whole page: the greatest id
 * per name (ids grow in creation order; a loose scan of `idx_instance_task`, which is
 * (task_name) with the id InnoDB appends), joined back by primary key. Names without an
 * instance are absent.
 */
export async function lastRunsOf(db: Queryable, names: readonly string[]): Promise<Map<string, LastRun>> {
  if (names.length === 0) return new Map();
  const [rows] = await db.query<Array<RowDataPacket & { id: number | string; task_name: string; state: string; ended_at: Date | null }>>(
    `SELECT i.id, i.task_name, i.state, i.ended_at
       FROM (SELECT MAX(id) AS id FROM task_instance WHERE task_name IN (?) GROUP BY task_name) m
       JOIN task_instance i ON i.id = m.id`,
    [names],
  );
  return new Map(rows.map((r) => [r.task_name, { instanceId: String(r.id), state: r.state, endedAt: r.ended_at === null ? null : r.ended_at.toISOString() }]));
}
