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
 * The latest instance of each of `names`, in one query for the whole page: the greatest
 * `created_at` per name (a loose scan of `idx_instance_task_created`), joined back on the same
 * index; a tie of `created_at` goes to the greater id. Names without an instance are absent.
 */
export async function lastRunsOf(db: Queryable, names: readonly string[]): Promise<Map<string, LastRun>> {
  const out = new Map<string, LastRun & { id: bigint }>();
  if (names.length === 0) return out;
  const [rows] = await db.query<Array<RowDataPacket & { id: number | string; task_name: string; state: string; ended_at: Date | null }>>(
    `SELECT i.id, i.task_name, i.state, i.ended_at
       FROM task_instance i
       JOIN (SELECT task_name, MAX(created_at) AS latest FROM task_instance WHERE task_name IN (?) GROUP BY task_name) m
         ON i.task_name = m.task_name AND i.created_at = m.latest`,
    [names],
  );
  for (const r of rows) {
    const id = BigInt(r.id);
    const seen = out.get(r.task_name);
    if (seen !== undefined && seen.id > id) continue;
    out.set(r.task_name, { id, instanceId: String(r.id), state: r.state, endedAt: r.ended_at === null ? null : r.ended_at.toISOString() });
  }
  return new Map([...out].map(([name, { instanceId, state, endedAt }]) => [name, { instanceId, state, endedAt }]));
}
