/**
 * Rows of `task` in keyset pages by name (uk_task_name), for the scheduler's reads that touch
 * every task: one statement for 100,000 rows held every row object, name and date alive at once
 * while its caller walked them, and V8 sizes the heap by what is alive at its full collections
 * (#24). A task is never renamed, so each row is read once. The rows are handed on as the driver
 * made them (not copied into new objects) for the same reason.
 */
import type { RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';

/** Rows per page. */
export const TASK_ROWS_PER_PAGE = 5_000;

/** A task's identity and version: what the scheduler's cache compares to find changed tasks. */
export type TaskHead = RowDataPacket & { id: string; name: string; version: number };

/** A scheduled task's watermark (`last_fire_time`) and next fire, as refill reconciles them. */
export type TaskWatermarkRow = RowDataPacket & { name: string; version: number; last_fire_time: Date | null; next_fire_time: Date | null };

const WATERMARK_COLUMNS = 'name, version, last_fire_time, next_fire_time';
const SCHEDULED = "enabled = 1 AND schedule_type <> 'none'";

/** `SELECT <columns> FROM task [WHERE <where>]`, a page at a time in name order. */
async function* taskPages<Row extends RowDataPacket & { name: string }>(db: Queryable, columns: string, where: string | null = null): AsyncGenerator<Row[]> {
  const statement = (afterName: boolean): string => {
    const conditions = [...(where === null ? [] : [where]), ...(afterName ? ['name > ?'] : [])];
    return `SELECT ${columns} FROM task${conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : ''} ORDER BY name LIMIT ?`;
  };
  let after: string | null = null;
  for (;;) {
    const page: Row[] = (
      after === null
        ? await db.query<Row[]>(statement(false), [TASK_ROWS_PER_PAGE])
        : await db.query<Row[]>(statement(true), [after, TASK_ROWS_PER_PAGE])
    )[0];
    if (page.length > 0) yield page;
    if (page.length < TASK_ROWS_PER_PAGE) return;
    after = (page[page.length - 1] as Row).name;
  }
}

/** Every task's id, name and version, a page at a time in name order. */
export function taskHeadPages(db: Queryable): AsyncGenerator<TaskHead[]> {
  return taskPages<TaskHead>(db, 'id, name, version');
}

/** The watermarks of every enabled task with a schedule, a page at a time in name order. */
export function scheduledTaskWatermarkPages(db: Queryable): AsyncGenerator<TaskWatermarkRow[]> {
  return taskPages<TaskWatermarkRow>(db, WATERMARK_COLUMNS, SCHEDULED);
}

/** The watermarks of the enabled, scheduled tasks among `names` (one statement: keep the list bounded). */
export async function scheduledTaskWatermarksOf(db: Queryable, names: readonly string[]): Promise<TaskWatermarkRow[]> {
  if (names.length === 0) return [];
  const [rows] = await db.query<TaskWatermarkRow[]>(`SELECT ${WATERMARK_COLUMNS} FROM task WHERE ${SCHEDULED} AND name IN (?)`, [names]);
  return rows;
}
