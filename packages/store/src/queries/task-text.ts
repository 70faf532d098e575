/**
 * The substring index of task search (migration 0009, #24): `task_text_trigram` holds each
 * task's trigrams (text-trigrams.ts) of its name and of its description, `task_text_indexed`
 * the task's `updated_at` when they were written.
 *
 * Written in the transaction of every definition write of this build (insertTask, replaceTask).
 * A task whose `updated_at` moved without it (the previous build during a rolling upgrade, R22;
 * an enable, a pause or a calendar edit, which change no text; a hand-made row) is re-indexed
 * by `reindexStaleTaskTexts`, which admin-api runs every minute.
 *
 * On schemas before 0009 (R22: this build runs on 6 to 9) there is no index: nothing is
 * written, and a search answers undefined, so the caller takes the plain LIKE path.
 *
 * A search (`findTasksByText`) reads the rarest of the term's trigrams (by the optimizer's
 * estimate) in name order, checks each row against the others by the same key and confirms it
 * with the LIKE the plain path uses, until the page is full: the work is that trigram's rows up
 * to the page, not the table up to the page.
 */
import type { RowDataPacket } from 'mysql2';
import type { Pool } from 'mysql2/promise';
import { unlessNoSuchTable } from '../errors.js';
import { withTransaction } from '../pool.js';
import { spreadTrigrams, textTrigrams, TRIGRAM_CHARS } from '../text-trigrams.js';
import { trigramEstimatesOf } from '../trigram-estimates.js';
import type { Queryable } from '../schema-version.js';

/** How many of a term's trigrams are weighed and checked (spread over the term). */
const PROBED_TRIGRAMS = 6;
/** Rows per INSERT of one task's trigrams (a 2,048-character description has up to 2,046). */
const INSERT_ROWS = 1_000;

/** The LIKE pattern of "contains `q`" (its `\`, `%` and `_` taken literally): both paths of a search confirm rows with it. */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Whether `q` is long enough for the index (shorter terms take the plain LIKE path). */
export function isIndexedTerm(q: string): boolean {
  return Array.from(q).length >= TRIGRAM_CHARS;
}

/**
 * Rewrites the trigrams of task `name` from its name and `description`, and records the task's
 * current `updated_at` as indexed. Call it in the transaction that wrote the task, after the
 * write. `textChanged: false` (an edit that kept the description) only records `updated_at`.
 */
export async function indexTaskText(db: Queryable, name: string, description: string, opts: { textChanged?: boolean } = {}): Promise<void> {
  await unlessNoSuchTable(undefined, () => writeTaskText(db, name, description, opts.textChanged !== false));
}

async function writeTaskText(db: Queryable, name: string, description: string, textChanged: boolean): Promise<void> {
  if (textChanged) {
    await db.query('DELETE FROM task_text_trigram WHERE task_name = ?', [name]);
    const trigrams = [...new Set([...textTrigrams(name), ...textTrigrams(description)])];
    for (let i = 0; i < trigrams.length; i += INSERT_ROWS) {
      const rows = trigrams.slice(i, i + INSERT_ROWS);
      // IGNORE: two trigrams that differ only in case are one row under the collation.
      await db.query(`INSERT IGNORE INTO task_text_trigram (trigram, task_name) VALUES ${rows.map(() => '(?, ?)').join(', ')}`, rows.flatMap((t) => [t, name]));
    }
  }
  await db.query(
    `INSERT INTO task_text_indexed (task_name, updated_at) SELECT name, updated_at FROM task WHERE name = ?
     ON DUPLICATE KEY UPDATE updated_at = VALUES(updated_at)`,
    [name],
  );
}

/**
 * Re-indexes up to `limit` tasks whose `updated_at` differs from the one indexed (or that have
 * none), each read under its row lock so a concurrent edit is not undone. Returns how many.
 * One scan of task beside task_text_indexed (both by name): ~100 ms for 100,000 tasks.
 */
export async function reindexStaleTaskTexts(pool: Pool, limit: number): Promise<number> {
  const stale = await unlessNoSuchTable([], async () => {
    const [rows] = await pool.query<RowDataPacket[]>(
      `SELECT t.name FROM task t LEFT JOIN task_text_indexed i ON i.task_name = t.name
        WHERE i.task_name IS NULL OR i.updated_at <> t.updated_at LIMIT ?`,
      [limit],
    );
    return rows;
  });
  if (stale.length === 0) return 0;
  return withTransaction(pool, async (tx) => {
    const [rows] = await tx.query<RowDataPacket[]>('SELECT name, description FROM task WHERE name IN (?) ORDER BY name FOR UPDATE', [
      stale.map((r) => String(r.name)),
    ]);
    for (const row of rows) await writeTaskText(tx, String(row.name), String(row.description), true);
    return rows.length;
  });
}

/**
 * `trigrams`, rarest first, by the optimizer's estimate of each one's rows (EXPLAIN of one range
 * of the primary key per trigram: a few B-tree dives, whatever the counts). Small ranges are
 * counted exactly, large ones estimated within about 2×, which is all the choice needs: any
 * trigram of the term gives the same page, the rarest the fewest rows to read. Counting instead
 * (`COUNT(*)` up to a cap) cost as much as reading: 6 trigrams counted to 10,000 each were half
 * of a search's time on the bench's 100,000 tasks. Estimates read in the last minute are reused
 * (trigram-estimates.ts): a search whose trigrams are all known sends no EXPLAIN.
 */
async function rarestFirst(db: Queryable, trigrams: readonly string[]): Promise<string[]> {
  const known = trigramEstimatesOf(db);
  const nowMs = Date.now();
  const unknown = [...new Set(trigrams.filter((t) => known.get(t, nowMs) === undefined))];
  if (unknown.length > 0) {
    const [plan] = await db.query<RowDataPacket[]>(
      `EXPLAIN ${unknown.map(() => 'SELECT 1 FROM task_text_trigram WHERE trigram = ?').join(' UNION ALL ')}`,
      [...unknown],
    );
    // One plan row per SELECT, numbered from 1 in the order written.
    for (const r of plan) {
      const trigram = r.id === null ? undefined : unknown[Number(r.id) - 1];
      if (trigram !== undefined) known.set(trigram, Number(r.rows ?? 0), nowMs);
    }
  }
  const rowsOf = (t: string): number => known.get(t, nowMs) ?? Number.MAX_SAFE_INTEGER;
  return [...trigrams].sort((x, y) => rowsOf(x) - rowsOf(y));
}

/** The filters of a task list besides the text, on `task`'s own columns. */
export interface TaskTextFilter {
  readonly where: readonly string[];
  readonly values: readonly unknown[];
}

/**
 * Tasks whose name or description contains `q` (of 3 characters or more), in name order after
 * `afterName`, at most `limit` (default: all), also matching `filter`: the rows of `columns`.
 * Undefined on a schema without the index (before 0009).
 */
export function findTasksByText(
  db: Queryable,
  q: string,
  columns: string,
  filter: TaskTextFilter,
  opts: { afterName?: string; limit?: number } = {},
): Promise<RowDataPacket[] | undefined> {
  return unlessNoSuchTable(undefined, () => readTasksByText(db, q, columns, filter, opts));
}

/**
 * The page read along the rarest of the term's trigrams (its rows in task-name order, after the
 * cursor), each row checked by key against the others (index lookups, before its task row is
 * read) and confirmed with the LIKE the plain path uses. Any trigram of the term would give the
 * same page: a match has every one.
 */
async function readTasksByText(
  db: Queryable,
  q: string,
  columns: string,
  filter: TaskTextFilter,
  opts: { afterName?: string; limit?: number },
): Promise<RowDataPacket[]> {
  const [first, ...checked] = await rarestFirst(db, spreadTrigrams(textTrigrams(q), PROBED_TRIGRAMS));
  const like = containsPattern(q);
  const where = ['g.trigram = ?', '(task.name LIKE ? OR task.description LIKE ?)', ...filter.where];
  const values: unknown[] = [...checked, first, like, like, ...filter.values];
  if (opts.afterName !== undefined) {
    where.push('g.task_name > ?');
    values.push(opts.afterName);
  }
  if (opts.limit !== undefined) values.push(opts.limit);
  // STRAIGHT_JOIN: the first trigram's rows in key order (task_name: the page's order, so no
  // sort and an early stop), each checked by key against the others, then its task.
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT STRAIGHT_JOIN ${columns}
       FROM task_text_trigram g
       ${checked.map((_, k) => `JOIN task_text_trigram h${k} ON h${k}.trigram = ? AND h${k}.task_name = g.task_name`).join('\n       ')}
       JOIN task ON task.name = g.task_name
      WHERE ${where.join(' AND ')}
      ORDER BY g.task_name${opts.limit === undefined ? '' : ' LIMIT ?'}`,
    values,
  );
  return rows;
}
