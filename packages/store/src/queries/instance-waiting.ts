/**
 * Why a due instance waits (migration 0013, ADMIN-API.md "Waiting instances", R23): the reads
 * of the brokers' backlog scan and the one write it makes, plus the API's read.
 *
 * None of this is on the claim's path: the claim reads only startable rows and never names
 * these columns. The scan reads held rows with plain reads (no lock) along the claim's own
 * index, `idx_instance_team_claim (state, team, priority DESC, due_at)`, one bounded range
 * per team, and locks only the few rows whose reason changed, with `SKIP LOCKED`, in a short
 * transaction of its own, so it never waits for a claim and a claim never waits for it.
 *
 * On a schema before 0013 (R22: this build accepts 10–13) the columns are missing: the reads
 * fall back to reading no reason, the write is skipped, and the API shows `waiting: null`.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { isWaitingReason, type WaitingReason } from '@ax/core';
import { isNoSuchColumnError, isNoSuchIndexError } from '../errors.js';
import type { Queryable } from '../schema-version.js';
import { perRowValue } from './bulk-transitions.js';
import { appendEvents, type NewEvent } from './events.js';
import { instanceTeamSql } from './instances-read.js';

/** States a held instance can be in: WAITING (its DAG parents) or PENDING. */
export type HeldState = 'WAITING' | 'PENDING';

/** A (state, team) with rows: `team` null = rows written before 0010 (their task's team applies). */
export interface BacklogGroup {
  readonly state: HeldState;
  readonly team: string | null;
}

/** One due, undispatched row as the scan reads it. */
export interface BacklogRow {
  readonly id: string;
  readonly taskId: string;
  readonly taskName: string;
  /** The row's team, or its task's for a row written before 0010; null when neither is known. */
  readonly team: string | null;
  readonly state: HeldState;
  readonly priority: number;
  readonly expectedTime: Date;
  /** How long it has been due, on the database clock. */
  readonly dueForMs: number;
  readonly rerunBatchId: string | null;
  /** The stored reason (null: none, or a schema before 0013). */
  readonly waitingReason: WaitingReason | null;
}

/** A stored wait as the API shows it. */
export interface InstanceWaiting {
  readonly reason: WaitingReason;
  readonly since: Date;
  readonly message: string;
}

/**
 * The (state, team) pairs that have WAITING or PENDING rows: a loose scan of the prefix of
 * `idx_instance_team_claim` (one index entry per group). Groups whose rows are all due later
 * are listed too; their read then finds nothing.
 */
export async function backlogGroups(db: Queryable): Promise<BacklogGroup[]> {
  const [rows] = await db.query<RowDataPacket[]>(`SELECT state, team FROM task_instance WHERE state IN ('WAITING', 'PENDING') GROUP BY state, team`);
  return rows.map((r) => ({ state: r.state === 'WAITING' ? 'WAITING' : 'PENDING', team: r.team === null ? null : String(r.team) }));
}

/**
 * Up to `limit` due rows of one group, in the claim's order (priority DESC, due_at): the
 * range of `idx_instance_team_claim` for (state, team), read without a lock.
 */
export async function readBacklog(db: Queryable, group: BacklogGroup, limit: number): Promise<BacklogRow[]> {
  const where = `i.state = ? AND ${group.team === null ? 'i.team IS NULL' : 'i.team = ?'} AND i.due_at <= NOW(3)`;
  const params: unknown[] = group.team === null ? [group.state, limit] : [group.state, group.team, limit];
  const select = (withReason: boolean): string =>
    `SELECT i.id, i.task_id, i.task_name, ${instanceTeamSql('i')} AS team,
            i.state, i.priority, i.expected_time, i.rerun_batch_id,
            TIMESTAMPDIFF(MICROSECOND, i.due_at, NOW(3)) AS due_us${withReason ? ', i.waiting_reason' : ''}
       FROM task_instance i FORCE INDEX (idx_instance_team_claim)
      WHERE ${where}
      ORDER BY i.priority DESC, i.due_at ASC
      LIMIT ?`;
  let rows: RowDataPacket[];
  try {
    [rows] = await db.query<RowDataPacket[]>(select(true), params);
  } catch (err) {
    if (!isNoSuchColumnError(err)) throw err;
    [rows] = await db.query<RowDataPacket[]>(select(false), params); // before 0013: no stored reasons
  }
  return rows.map((r) => ({
    id: String(r.id),
    taskId: String(r.task_id),
    taskName: String(r.task_name),
    team: r.team === null ? null : String(r.team),
    state: r.state === 'WAITING' ? 'WAITING' : 'PENDING',
    priority: Number(r.priority),
    expectedTime: r.expected_time as Date,
    dueForMs: Math.max(0, Math.floor(Number(r.due_us) / 1000)),
    rerunBatchId: r.rerun_batch_id === null ? null : String(r.rerun_batch_id),
    waitingReason: isWaitingReason(r.waiting_reason) ? r.waiting_reason : null,
  }));
}

/** A rerun batch's concurrency and its DISPATCHED + RUNNING instances, read without a lock. */
export async function batchLoadsUnlocked(db: Queryable, batchIds: readonly string[]): Promise<Map<string, { concurrency: number | null; active: number }>> {
  const out = new Map<string, { concurrency: number | null; active: number }>();
  if (batchIds.length === 0) return out;
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT b.id, b.concurrency,
            (SELECT COUNT(*) FROM task_instance i WHERE i.rerun_batch_id = b.id AND i.state IN ('DISPATCHED', 'RUNNING')) AS active
       FROM rerun_batch b WHERE b.id IN (?)`,
    [[...new Set(batchIds)]],
  );
  for (const r of rows) out.set(String(r.id), { concurrency: r.concurrency === null ? null : Number(r.concurrency), active: Number(r.active) });
  return out;
}

/** A change of one row's reason, as the scan decided it. */
export interface WaitingChange {
  readonly id: string;
  /** The state the scan read; the row is left alone if it moved on. */
  readonly state: HeldState;
  /** The reason the scan read (the row is left alone if another scan changed it meanwhile). */
  readonly from: WaitingReason | null;
  /** The new reason; null = not held any more. */
  readonly to: WaitingReason | null;
  readonly message: string | null;
}

/**
 * Writes the changed reasons in one statement and one `WAITING` event per row that got a
 * (new) reason, inside the caller's transaction. The rows are locked first with `SKIP
 * LOCKED` (a row the claim holds is the claim's: skipped, decided again next pass) and
 * re-checked against what the scan read, so two brokers scanning at once write each change
 * and its event once. `waiting_since` is the row's due time for its first reason (it has been
 * held since it was due) and the database clock for a later one. `updated_at` is kept: the
 * reason is not a change of state. Returns the ids written; nothing on a schema before 0013.
 */
export async function writeWaitingChanges(db: Queryable, changes: readonly WaitingChange[]): Promise<string[]> {
  if (changes.length === 0) return [];
  let locked: RowDataPacket[];
  try {
    [locked] = await db.query<RowDataPacket[]>(
      `SELECT id, state, waiting_reason FROM task_instance WHERE id IN (?) AND state IN ('WAITING', 'PENDING') ORDER BY id FOR UPDATE SKIP LOCKED`,
      [changes.map((c) => c.id)],
    );
  } catch (err) {
    if (isNoSuchColumnError(err)) return []; // before 0013: nowhere to keep a reason
    throw err;
  }
  const current = new Map(locked.map((r) => [String(r.id), { state: String(r.state), reason: r.waiting_reason === null ? null : String(r.waiting_reason) }]));
  const won = changes.filter((c) => {
    const now = current.get(c.id);
    return now !== undefined && now.state === c.state && now.reason === c.from;
  });
  if (won.length === 0) return [];
  const ids = won.map((c) => c.id);
  const params: unknown[] = [];
  // Assignments apply left to right (MySQL and MariaDB): `waiting_since` is set first, while
  // `waiting_reason` still holds the old reason.
  const sinceNext = perRowValue('id', ids, (i) => won[i]?.to ?? null, params);
  const reasonNext = perRowValue('id', ids, (i) => won[i]?.to ?? null, params);
  const messageNext = perRowValue('id', ids, (i) => won[i]?.message?.slice(0, MESSAGE_MAX_CHARS) ?? null, params);
  params.push(ids);
  await db.query(
    `UPDATE task_instance
        SET waiting_since = CASE WHEN (${sinceNext}) IS NULL THEN NULL WHEN waiting_reason IS NULL THEN due_at ELSE NOW(3) END,
            waiting_reason = ${reasonNext},
            waiting_message = ${messageNext},
            updated_at = updated_at
      WHERE id IN (?)`,
    params,
  );
  const events: NewEvent[] = [];
  for (const c of won) {
    if (c.to === null) continue; // a wait that ends needs no event: DISPATCHED (or the next reason) says it
    events.push({ instanceId: c.id, type: 'WAITING', message: c.message, data: { reason: c.to, message: c.message, ...(c.from === null ? {} : { previous: c.from }) } });
  }
  await appendEvents(db, events);
  return ids;
}

/** Longest stored message (the column's size). */
const MESSAGE_MAX_CHARS = 512;

/**
 * Clears the reasons left on rows that are no longer held (final, or back in RETRY_WAIT; the
 * dispatch clears its own rows' reasons as it moves them) through `idx_instance_waiting`, which
 * holds entries only for rows with a reason, so that a later wait of the same row starts afresh
 * (its first reason gets its event). Reads the ids without a lock, locks them `SKIP LOCKED`
 * and clears them by primary key: call it inside a transaction, so that a row a claim or a
 * result holds is skipped (cleared next pass) rather than waited for, which held every row
 * cleared so far and stalled the dispatch behind it (#45). Returns how many.
 */
export async function clearStaleWaiting(db: Queryable, limit: number): Promise<number> {
  let rows: RowDataPacket[];
  try {
    [rows] = await db.query<RowDataPacket[]>(
      `SELECT id FROM task_instance FORCE INDEX (idx_instance_waiting)
        WHERE waiting_reason IS NOT NULL AND state NOT IN ('WAITING', 'PENDING') LIMIT ?`,
      [limit],
    );
  } catch (err) {
    if (isNoSuchColumnError(err) || isNoSuchIndexError(err)) return 0;
    throw err;
  }
  if (rows.length === 0) return 0;
  const [locked] = await db.query<RowDataPacket[]>(
    `SELECT id FROM task_instance WHERE id IN (?) AND state NOT IN ('WAITING', 'PENDING') ORDER BY id FOR UPDATE SKIP LOCKED`,
    [rows.map((r) => String(r.id))],
  );
  if (locked.length === 0) return 0;
  const [result] = await db.query<ResultSetHeader>(
    `UPDATE task_instance SET waiting_reason = NULL, waiting_since = NULL, waiting_message = NULL, updated_at = updated_at
      WHERE id IN (?) AND state NOT IN ('WAITING', 'PENDING')`,
    [locked.map((r) => String(r.id))],
  );
  return result.affectedRows;
}

/**
 * The waits of these instances, for the API: only rows WAITING or PENDING with a reason (a
 * reason left on a row that moved on is not shown). Empty on a schema before 0013.
 */
export async function waitingOfInstances(db: Queryable, ids: readonly string[]): Promise<Map<string, InstanceWaiting>> {
  const out = new Map<string, InstanceWaiting>();
  if (ids.length === 0) return out;
  let rows: RowDataPacket[];
  try {
    [rows] = await db.query<RowDataPacket[]>(
      `SELECT id, waiting_reason, waiting_since, waiting_message FROM task_instance
        WHERE id IN (?) AND state IN ('WAITING', 'PENDING') AND waiting_reason IS NOT NULL`,
      [[...new Set(ids)]],
    );
  } catch (err) {
    if (isNoSuchColumnError(err)) return out;
    throw err;
  }
  for (const r of rows) {
    if (!isWaitingReason(r.waiting_reason) || r.waiting_since === null) continue;
    out.set(String(r.id), { reason: r.waiting_reason, since: r.waiting_since as Date, message: String(r.waiting_message ?? '') });
  }
  return out;
}

/** The held backlog of some teams as `GET /status` shows it. */
export interface BacklogSummary {
  /** Due instances that carry a waiting reason. */
  readonly waiting: number;
  /** Seconds the oldest of them has been due (0 when none). */
  readonly oldestDueSeconds: number;
  /** Those due for more than `lateAfterSeconds`. */
  readonly late: number;
}

/**
 * Counts the instances the brokers' backlog scan has given a waiting reason, for `teams` (null =
 * every team, rows written before 0010 included), through `idx_instance_waiting`, which holds
 * only rows with a reason: the read costs what the backlog holds, not the history. Zero on a
 * schema before 0013.
 */
export async function backlogSummary(db: Queryable, teams: readonly string[] | null, lateAfterSeconds: number): Promise<BacklogSummary> {
  if (teams !== null && teams.length === 0) return { waiting: 0, oldestDueSeconds: 0, late: 0 };
  let rows: RowDataPacket[];
  try {
    [rows] = await db.query<RowDataPacket[]>(
      `SELECT COUNT(*) AS waiting,
              COALESCE(TIMESTAMPDIFF(SECOND, MIN(due_at), NOW(3)), 0) AS oldest_s,
              COALESCE(SUM(due_at < NOW(3) - INTERVAL ? SECOND), 0) AS late
         FROM task_instance FORCE INDEX (idx_instance_waiting)
        WHERE waiting_reason IS NOT NULL AND state IN ('WAITING', 'PENDING')${teams === null ? '' : ' AND team IN (?)'}`,
      teams === null ? [lateAfterSeconds] : [lateAfterSeconds, teams],
    );
  } catch (err) {
    if (isNoSuchColumnError(err) || isNoSuchIndexError(err)) return { waiting: 0, oldestDueSeconds: 0, late: 0 };
    throw err;
  }
  const r = rows[0];
  return { waiting: Number(r?.waiting ?? 0), oldestDueSeconds: Math.max(0, Number(r?.oldest_s ?? 0)), late: Number(r?.late ?? 0) };
}
