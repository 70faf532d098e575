/**
 * `calendar` (ADMIN-API.md "Calendars"): named sets of excluded dates in a zone, one team each,
 * and `task_calendar_skip`, the fires a calendar suppressed (each counted once).
 *
 * A calendar change is a change of the behaviour of every task that names it: the write bumps
 * those tasks' `version` in its transaction (and withdraws their slots created ahead of time),
 * so a scheduler still holding the old dates can insert none of their slots (R3) and every
 * scheduler re-reads them. The caller publishes `task-changed` for the names returned.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { StoreError } from '../errors.js';
import { decodeJson, encodeJson } from '../json.js';
import type { Queryable } from '../schema-version.js';
import { getTask, withdrawPrecreatedSlots } from './tasks.js';
import { recordTaskVersion, recordVersionBeingReplaced } from './task-versions.js';

/** A calendar as stored. */
export interface CalendarRecord {
  readonly name: string;
  readonly team: string;
  readonly timezone: string;
  /** `YYYY-MM-DD`, sorted. */
  readonly dates: readonly string[];
  readonly version: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A calendar delete refused: tasks still name it. */
export class CalendarInUseError extends StoreError {
  constructor(
    readonly calendar: string,
    readonly tasks: readonly string[],
  ) {
    super(`calendar ${JSON.stringify(calendar)} is used by task(s) ${tasks.map((t) => JSON.stringify(t)).join(', ')}`);
    this.name = 'CalendarInUseError';
  }
}

type CalendarRow = RowDataPacket & { name: string; team: string; timezone: string; dates: unknown; version: number; created_at: Date; updated_at: Date };

const COLUMNS = 'name, team, timezone, dates, version, created_at, updated_at';

function calendarOf(r: CalendarRow): CalendarRecord {
  const dates = decodeJson<unknown>(r.dates);
  return {
    name: r.name,
    team: r.team,
    timezone: r.timezone,
    dates: Array.isArray(dates) ? dates.map(String) : [],
    version: Number(r.version),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** One calendar, or null. `forUpdate` locks the row (inside a transaction). */
export async function getCalendar(db: Queryable, name: string, opts: { forUpdate?: boolean } = {}): Promise<CalendarRecord | null> {
  const [rows] = await db.query<CalendarRow[]>(`SELECT ${COLUMNS} FROM calendar WHERE name = ?${opts.forUpdate === true ? ' FOR UPDATE' : ''}`, [name]);
  const row = rows[0];
  return row === undefined ? null : calendarOf(row);
}

/** Calendars by name (the scheduler loads those its tasks name). */
export async function getCalendars(db: Queryable, names: readonly string[]): Promise<Map<string, CalendarRecord>> {
  const out = new Map<string, CalendarRecord>();
  if (names.length === 0) return out;
  const [rows] = await db.query<CalendarRow[]>(`SELECT ${COLUMNS} FROM calendar WHERE name IN (?)`, [[...new Set(names)]]);
  for (const r of rows) out.set(r.name, calendarOf(r));
  return out;
}

/** Calendars ordered by name, of these teams (null: every team), after `afterName`, at most `limit`. */
export async function listCalendars(
  db: Queryable,
  opts: { teams?: readonly string[] | null; afterName?: string; limit?: number } = {},
): Promise<CalendarRecord[]> {
  const where: string[] = [];
  const values: unknown[] = [];
  if (opts.teams !== undefined && opts.teams !== null) {
    if (opts.teams.length === 0) return [];
    where.push('team IN (?)');
    values.push(opts.teams);
  }
  if (opts.afterName !== undefined) {
    where.push('name > ?');
    values.push(opts.afterName);
  }
  if (opts.limit !== undefined) values.push(opts.limit);
  const [rows] = await db.query<CalendarRow[]>(
    `SELECT ${COLUMNS} FROM calendar${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY name${opts.limit !== undefined ? ' LIMIT ?' : ''}`,
    values,
  );
  return rows.map(calendarOf);
}

/** Names of the tasks that name the calendar. */
export async function tasksUsingCalendar(db: Queryable, name: string): Promise<string[]> {
  const [rows] = await db.query<Array<RowDataPacket & { name: string }>>('SELECT name FROM task WHERE calendar = ? ORDER BY name', [name]);
  return rows.map((r) => r.name);
}

/**
 * Creates or replaces a calendar (inside a transaction) and bumps the version of every task
 * naming it (R3, see the file comment). Returns the calendar, whether it was created, and the
 * tasks whose version moved.
 */
export async function putCalendar(
  db: Queryable,
  name: string,
  body: { team: string; timezone: string; dates: readonly string[] },
): Promise<{ calendar: CalendarRecord; created: boolean; tasks: string[] }> {
  const [result] = await db.query<ResultSetHeader>(
    `INSERT INTO calendar (name, team, timezone, dates) VALUES (?, ?, ?, ?)
     ON DUPLICATE KEY UPDATE team = VALUES(team), timezone = VALUES(timezone), dates = VALUES(dates),
                             version = version + 1, updated_at = CURRENT_TIMESTAMP(3)`,
    [name, body.team, body.timezone, encodeJson(body.dates)],
  );
  const tasks = await tasksUsingCalendar(db, name);
  if (tasks.length > 0) {
    for (const t of tasks) {
      const before = await getTask(db, t);
      if (before !== null) await recordVersionBeingReplaced(db, before);
    }
    await db.query('UPDATE task SET version = version + 1, updated_at = CURRENT_TIMESTAMP(3) WHERE calendar = ?', [name]);
    for (const t of tasks) {
      await withdrawPrecreatedSlots(db, t);
      // Same definition, new version: recorded so the version an instance names is listed.
      const after = await getTask(db, t);
      if (after !== null) await recordTaskVersion(db, after, null);
    }
  }
  const calendar = await getCalendar(db, name);
  if (calendar === null) throw new StoreError(`calendar ${name} vanished right after its write`);
  // affectedRows: 1 = inserted, 2 = updated (MySQL and MariaDB alike).
  return { calendar, created: result.affectedRows === 1, tasks };
}

/**
 * Deletes a calendar that no task names.
 * @throws CalendarInUseError naming the tasks that still do.
 */
export async function deleteCalendar(db: Queryable, name: string): Promise<boolean> {
  const tasks = await tasksUsingCalendar(db, name);
  if (tasks.length > 0) throw new CalendarInUseError(name, tasks);
  const [result] = await db.query<ResultSetHeader>('DELETE FROM calendar WHERE name = ?', [name]);
  return result.affectedRows === 1;
}

/** A fire a calendar suppressed. */
export interface CalendarSkip {
  readonly taskId: string;
  readonly expectedMs: number;
  readonly calendar: string;
}

/**
 * Records skipped fires: `INSERT IGNORE` against `(task_id, expected_time)`, so each skip is
 * counted once whoever meets it, then `calendar_skipped_count` grows by what was new. Returns
 * the number of new skips.
 */
export async function recordCalendarSkips(db: Queryable, skips: readonly CalendarSkip[]): Promise<number> {
  let total = 0;
  const byTask = new Map<string, CalendarSkip[]>();
  for (const s of skips) byTask.set(s.taskId, [...(byTask.get(s.taskId) ?? []), s]);
  for (const [taskId, list] of byTask) {
    for (let i = 0; i < list.length; i += 500) {
      const chunk = list.slice(i, i + 500);
      const [result] = await db.query<ResultSetHeader>(
        `INSERT IGNORE INTO task_calendar_skip (task_id, expected_time, calendar) VALUES ${chunk.map(() => '(?, ?, ?)').join(', ')}`,
        chunk.flatMap((s) => [s.taskId, new Date(s.expectedMs), s.calendar]),
      );
      if (result.affectedRows > 0) {
        await db.query('UPDATE task SET calendar_skipped_count = calendar_skipped_count + ? WHERE id = ?', [result.affectedRows, taskId]);
        total += result.affectedRows;
      }
    }
  }
  return total;
}
