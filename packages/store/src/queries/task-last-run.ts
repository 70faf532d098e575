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
 * The latest instance of each of `names`, in one query for the whole page: the greatest id per
 * name (ids grow in creation order), joined back by primary key. Each task's id is one read of
 * `idx_instance_task`, which is (task_name) with the id InnoDB appends, from its end: a
 * correlated `ORDER BY id DESC LIMIT 1` per task. The `MAX(id) … GROUP BY task_name` this
 * replaced was meant to be a loose index scan, but MariaDB 10.11 does not use the appended id for
 * one and read every instance of the page's tasks instead: 2,500 index entries for a page of 50
 * on the bench's history, 3.0 ms against 1.0 ms warm (#24). The names come from the `task`
 * table, so a name without a task (deleted) is absent, as is one without an instance.
 */
export async function lastRunsOf(db: Queryable, names: readonly string[]): Promise<Map<string, LastRun>> {
  if (names.length === 0) return new Map();
  const [rows] = await db.query<Array<RowDataPacket & { id: number | string; task_name: string; state: string; ended_at: Date | null }>>(
    `SELECT i.id, i.task_name, i.state, i.ended_at
       FROM (SELECT (SELECT task_instance.id FROM task_instance WHERE task_instance.task_name = t.name ORDER BY task_instance.id DESC LIMIT 1) AS id
               FROM task t WHERE t.name IN (?)) m
       JOIN task_instance i ON i.id = m.id`,
    [names],
  );
  return new Map(rows.map((r) => [r.task_name, { instanceId: String(r.id), state: r.state, endedAt: r.ended_at === null ? null : r.ended_at.toISOString() }]));
}
