/**
 * The hourly figures of past days, kept once computed (migration 0008, #24): the live query of
 * {@link hourlyStats} reads every instance due that day and its executions (55,000 instances a
 * day on the bench's history: about a second each, 13 s at p99 with 20 dashboards asking), while
 * a finished day's figures no longer change. XXL-JOB keeps such a report table too
 * (`xxl_job_log_report`); here a day is rolled up only when nothing can change it any more:
 * - it ended at least {@link ROLLUP_AFTER_MS} ago, and
 * - every instance due in it is final (a day with one still RUNNING stays live).
 * After that only a rerun (the instance becomes due again now: it leaves the day), a retention
 * purge (rows deleted) or a task's deletion or move to another team (its runs change team)
 * alters the live figures; each of those forgets the day (or every day the task can count in)
 * with {@link forgetRolledUpDays} / {@link forgetRolledUpDaysFrom}, and the day is answered live
 * until it is rolled up again.
 *
 * Why a forget never loses a race with a rollup computing the same day: {@link rollUpDay} locks
 * the day's `instance_stats_day` row (its first statement inserts it) before it takes the
 * snapshot it reads the instances in, and a writer forgets the day after its own change. If the
 * writer's change came first, the rollup's snapshot, taken after the lock, sees it; if the
 * rollup holds the lock, the forget waits for the rollup's commit and then deletes its row.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { FINAL_STATES } from '@ax/core';
import { unlessNoSuchTable } from '../errors.js';
import type { Queryable } from '../schema-version.js';
import { DAY_MS, DELAY_US_SQL, dueIn, dueInstances, hoursOfDay, type HourStats } from './stats.js';

/** How long after its end a day may be rolled up: late results and retries land within it. */
export const ROLLUP_AFTER_MS = DAY_MS;

const FINAL_SQL = FINAL_STATES.map((s) => `'${s}'`).join(', ');

/** The UTC day (`YYYY-MM-DD`) of a midnight. */
const dayOf = (dayStart: Date): string => dayStart.toISOString().slice(0, 10);

/** Whether the UTC day starting at `dayStart` can have been rolled up at `nowMs` (it ended {@link ROLLUP_AFTER_MS} ago). */
export function mayBeRolledUp(dayStart: Date, nowMs: number): boolean {
  return dayStart.getTime() + DAY_MS + ROLLUP_AFTER_MS <= nowMs;
}

/**
 * The rolled-up figures of the UTC day starting at `dayStart` for `teams` (null = every team),
 * or null when the day is not rolled up (or the schema predates 0008): answer it live.
 */
export async function rolledUpHourlyStats(db: Queryable, dayStart: Date, teams: readonly string[] | null = null): Promise<HourStats[] | null> {
  if (teams !== null && teams.length === 0) return null; // no team: the live query's FALSE filter, no read worth saving
  const team = teams === null ? '' : ' AND h.team IN (?)';
  return unlessNoSuchTable(null, async () => {
    // One statement, one snapshot: the day's row and its hours as one rollup wrote them. A day
    // without instances in a team's hours has its row and no hour: one row of NULLs.
    const [rows] = await db.query<RowDataPacket[]>(
      `SELECT h.hour AS h, SUM(h.runs) AS runs, SUM(h.succeeded) AS succeeded, SUM(h.failed) AS failed,
              SUM(h.fire_lag_us) / NULLIF(SUM(h.fire_lag_n), 0) AS lag_us,
              SUM(h.delay_us) / NULLIF(SUM(h.delay_n), 0) AS delay_us
         FROM instance_stats_day d
         LEFT JOIN instance_stats_hour h ON h.day = d.day${team}
        WHERE d.day = ?
        GROUP BY h.hour`,
      teams === null ? [dayOf(dayStart)] : [teams, dayOf(dayStart)],
    );
    if (rows.length === 0) return null;
    return hoursOfDay(dayStart, rows.filter((r) => r['h'] !== null));
  });
}

/** What {@link rollUpDay} did. */
export type RollUpOutcome =
  | { readonly rolledUp: true; readonly instances: number }
  | { readonly rolledUp: false; readonly reason: 'too-recent' | 'open'; readonly instances: number };

/**
 * Computes and keeps the hourly figures of the UTC day starting at `dayStart` when it may be
 * rolled up (module comment); `nowMs` is the caller's clock. Runs its own transaction on
 * `conn` (a connection, not a pool: the lock and the snapshot must be one session's).
 */
export async function rollUpDay(
  conn: Queryable & { beginTransaction(): Promise<void>; commit(): Promise<void>; rollback(): Promise<void> },
  dayStart: Date,
  nowMs: number,
): Promise<RollUpOutcome> {
  if (!mayBeRolledUp(dayStart, nowMs)) return { rolledUp: false, reason: 'too-recent', instances: 0 };
  const day = dayOf(dayStart);
  await conn.beginTransaction();
  try {
    // The lock first, the snapshot after it (module comment).
    await conn.query(
      'INSERT INTO instance_stats_day (day, instances) VALUES (?, 0) ON DUPLICATE KEY UPDATE instances = 0, rolled_up_at = CURRENT_TIMESTAMP(3)',
      [day],
    );
    const due = dueIn(dayStart, new Date(dayStart.getTime() + DAY_MS), null);
    const [groups] = await conn.query<RowDataPacket[]>(
      `SELECT FLOOR(TIMESTAMPDIFF(SECOND, ?, s.due_time) / 3600) AS h,
              COALESCE(s.team, '') AS team,
              COUNT(*) AS runs,
              COALESCE(SUM(s.state = 'SUCCESS'), 0) AS succeeded,
              COALESCE(SUM(s.state = 'FAILED'), 0) AS failed,
              COALESCE(SUM(CASE WHEN s.trg = 'schedule' THEN TIMESTAMPDIFF(MICROSECOND, s.expected_time, s.created_at) END), 0) AS lag_us,
              COUNT(CASE WHEN s.trg = 'schedule' THEN 1 END) AS lag_n,
              COALESCE(SUM(${DELAY_US_SQL}), 0) AS delay_us,
              COUNT(${DELAY_US_SQL}) AS delay_n,
              COALESCE(SUM(s.state NOT IN (${FINAL_SQL})), 0) AS open
         FROM (${dueInstances(due)}) s
        GROUP BY h, team`,
      [dayStart, ...due.values],
    );
    const instances = groups.reduce((sum, g) => sum + Number(g['runs']), 0);
    if (groups.some((g) => Number(g['open']) > 0)) {
      await conn.rollback();
      return { rolledUp: false, reason: 'open', instances };
    }
    await conn.query('DELETE FROM instance_stats_hour WHERE day = ?', [day]);
    if (groups.length > 0) {
      await conn.query(
        `INSERT INTO instance_stats_hour (day, hour, team, runs, succeeded, failed, fire_lag_us, fire_lag_n, delay_us, delay_n) VALUES ?`,
        [groups.map((g): unknown[] => [day, g['h'], g['team'], g['runs'], g['succeeded'], g['failed'], g['lag_us'], g['lag_n'], g['delay_us'], g['delay_n']])],
      );
    }
    await conn.query('UPDATE instance_stats_day SET instances = ? WHERE day = ?', [instances, day]);
    await conn.commit();
    return { rolledUp: true, instances };
  } catch (err) {
    await conn.rollback().catch(() => undefined); // the original error is the one to report
    throw err;
  }
}

/**
 * The past days that may be rolled up and are not yet, oldest first, at most `limit`: from the
 * day of the oldest instance (one end of `idx_instance_due_time`) to the last day
 * {@link rollUpDay} accepts at `nowMs`. Empty on a schema before 0008.
 */
export async function daysToRollUp(db: Queryable, nowMs: number, limit = 1_000): Promise<Date[]> {
  const lastStartMs = Math.floor((nowMs - ROLLUP_AFTER_MS) / DAY_MS) * DAY_MS - DAY_MS;
  const [[oldest]] = await db.query<RowDataPacket[]>('SELECT MIN(due_time) AS t FROM task_instance');
  if (oldest?.['t'] == null) return [];
  const firstStartMs = Math.floor((oldest['t'] as Date).getTime() / DAY_MS) * DAY_MS;
  if (firstStartMs > lastStartMs) return [];
  const done = await unlessNoSuchTable(null, async () => {
    const [rows] = await db.query<RowDataPacket[]>(
      'SELECT DATE_FORMAT(day, \'%Y-%m-%d\') AS day FROM instance_stats_day WHERE day >= ? AND day <= ?',
      [dayOf(new Date(firstStartMs)), dayOf(new Date(lastStartMs))],
    );
    return new Set(rows.map((r) => String(r['day'])));
  });
  if (done === null) return [];
  const days: Date[] = [];
  for (let t = firstStartMs; t <= lastStartMs && days.length < limit; t += DAY_MS) {
    if (!done.has(dayOf(new Date(t)))) days.push(new Date(t));
  }
  return days;
}

/**
 * Forgets the rolled-up figures of these UTC days (`YYYY-MM-DD`): call after a change to their
 * instances (a rerun, a purge), in the same transaction or after it. Nothing on a schema before 0008.
 */
export async function forgetRolledUpDays(db: Queryable, days: readonly string[]): Promise<void> {
  if (days.length === 0) return;
  await unlessNoSuchTable(undefined, async () => {
    // The day's row first: a reader needs it, so its hours never show without it.
    await db.query<ResultSetHeader>('DELETE FROM instance_stats_day WHERE day IN (?)', [[...new Set(days)]]);
    await db.query<ResultSetHeader>('DELETE FROM instance_stats_hour WHERE day IN (?)', [[...new Set(days)]]);
  });
}

/**
 * Forgets every rolled-up day from `fromDay` (`YYYY-MM-DD`) on, or every day when null: a task
 * was deleted or moved to another team, so its past runs count for another team (or none) in
 * the live figures. Their hours stay until each day is rolled up again, unread. Nothing on a
 * schema before 0008.
 */
export async function forgetRolledUpDaysFrom(db: Queryable, fromDay: string | null): Promise<void> {
  await unlessNoSuchTable(undefined, async () => {
    await db.query<ResultSetHeader>(`DELETE FROM instance_stats_day${fromDay === null ? '' : ' WHERE day >= ?'}`, fromDay === null ? [] : [fromDay]);
  });
}

/**
 * The first UTC day (`YYYY-MM-DD`) any instance of task `name` can count in, or null when it has
 * none: the earlier of its first slot and its first row's creation, two ends of index ranges
 * (uk_instance_slot, idx_instance_task_created). An instance becomes due (`due_time`) no earlier
 * than both: a slot is due at its time plus a jitter that is never negative, a row created late
 * (a caught-up slot) at its slot time, a manual or dependency instance after it was created.
 */
export async function firstDayOfTask(db: Queryable, name: string): Promise<string | null> {
  const [[row]] = await db.query<RowDataPacket[]>(
    `SELECT DATE_FORMAT(LEAST((SELECT MIN(expected_time) FROM task_instance WHERE task_name = ?),
                              (SELECT MIN(created_at) FROM task_instance WHERE task_name = ?)), '%Y-%m-%d') AS day`,
    [name, name],
  );
  return row?.['day'] == null ? null : String(row['day']);
}

/** The UTC day (`YYYY-MM-DD`) each instance is due in now, for {@link forgetRolledUpDays}. */
export async function dueDaysOf(db: Queryable, instanceIds: readonly string[]): Promise<string[]> {
  if (instanceIds.length === 0) return [];
  const [rows] = await db.query<RowDataPacket[]>(
    "SELECT DISTINCT DATE_FORMAT(due_time, '%Y-%m-%d') AS day FROM task_instance WHERE id IN (?)",
    [instanceIds],
  );
  return rows.map((r) => String(r['day']));
}
