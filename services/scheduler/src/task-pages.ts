/**
 * Rows of `task` in keyset pages by name (uk_task_name), for the reads that touch every task:
 * one statement for 100,000 rows held every row object, name and date alive at once while its
 * caller walked them, and V8 sizes the heap by what is alive at its full collections (#24). A
 * task is never renamed, so each row is read once.
 */
import type { RowDataPacket } from 'mysql2';
import type { Queryable } from '@ax/store';

/** Rows per page. */
export const TASK_ROWS_PER_PAGE = 5_000;

/** `SELECT <columns> FROM task [WHERE <where>]`, a page at a time in name order. */
export async function* taskPages<Row extends RowDataPacket & { name: string }>(db: Queryable, columns: string, where: string | null = null): AsyncGenerator<Row[]> {
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
