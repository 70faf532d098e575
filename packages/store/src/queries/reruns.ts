/**
 * Reruns (ADMIN-API.md "Reruns", R18, R20): a `rerun_batch` row holds the request and its
 * concurrency limit (checked by brokers at claim); a final instance moves back to `PENDING`
 * (or `WAITING` below a rerun parent) with `run_no + 1`, a fresh attempt budget and a
 * `RERUN_REQUESTED` event, by a conditional UPDATE from the state it was read in. Reads of
 * batches (`GET /api/v1/reruns`) count their instances by state; a cancel is recorded by its
 * audit entry.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { assertTransition, type InstanceState } from '@ax/core';
import { decodeJsonNullable, encodeJson } from '../json.js';
import type { Queryable } from '../schema-version.js';
import { appendEvents } from './events.js';
import { INSTANCE_COLUMNS, instanceFromRow, instanceTeamSql, type InstanceRecord } from './instances-read.js';

/** A rerun request to record. */
export interface NewRerunBatch {
  mode: string;
  reason: string;
  actor: string;
  concurrency: number | null;
  forceDownstream: boolean;
  request: unknown;
}

/** Inserts a `rerun_batch` row; returns its id. */
export async function insertRerunBatch(db: Queryable, batch: NewRerunBatch): Promise<string> {
  const [result] = await db.query<ResultSetHeader>(
    'INSERT INTO rerun_batch (mode, reason, actor, concurrency, force_downstream, request) VALUES (?, ?, ?, ?, ?, ?)',
    [batch.mode, batch.reason.slice(0, 2048), batch.actor.slice(0, 128), batch.concurrency, batch.forceDownstream ? 1 : 0, encodeJson(batch.request)],
  );
  return String(result.insertId);
}

/** One instance to run again. */
export interface RerunTarget {
  readonly id: string;
  /** The state it was read in (final). */
  readonly from: InstanceState;
  readonly to: 'PENDING' | 'WAITING';
  readonly maxAttempts: number;
  readonly batchId: string;
  /**
   * Earliest dispatch, in milliseconds after the database's `NOW(3)` (R6: written on the
   * database clock); a batch orders its items oldest first by it.
   */
  readonly dueAfterMs: number;
  readonly actor: string;
  readonly reason: string;
}

/**
 * Moves a final instance back for a rerun. Returns false when it is no longer in `from`
 * (someone else changed it first).
 */
export async function rerunInstance(db: Queryable, t: RerunTarget): Promise<boolean> {
  assertTransition(t.from, t.to);
  const [result] = await db.query<ResultSetHeader>(
    `UPDATE task_instance
        SET state = ?, reason = NULL, run_no = run_no + 1, attempt = 1, max_attempts = ?, \`trigger\` = 'rerun',
            due_at = NOW(3) + INTERVAL ? MICROSECOND, worker_id = NULL, current_execution_id = NULL, dispatch_count = 0, reroute_count = 0,
            lost_count = 0, ack_deadline = NULL, lease_until = NULL, shard_total = NULL, rerun_batch_id = ?,
            started_at = NULL, ended_at = NULL,
            -- a new run, a new trace (#48): the broker gives it one at its first dispatch
            trace_parent = NULL,
            -- a row of a build before 0010 has no team yet: it gets its task's with its new run (R23)
            team = COALESCE(team, (SELECT t.team FROM task t WHERE t.id = task_instance.task_id)),
            -- the new run is of the task's current definition (#47); NULL when the task is gone
            task_version = (SELECT t.version FROM task t WHERE t.id = task_instance.task_id)
      WHERE id = ? AND state = ?`,
    [t.to, t.maxAttempts, Math.round(t.dueAfterMs) * 1000, t.batchId, t.id, t.from],
  );
  if (result.affectedRows !== 1) return false;
  await appendEvents(db, [
    {
      instanceId: t.id,
      type: 'RERUN_REQUESTED',
      message: `rerun requested by ${t.actor}: ${t.reason}`.slice(0, 2048),
      data: { batchId: t.batchId, from: t.from, to: t.to },
    },
  ]);
  return true;
}

/** A `rerun_batch` row. */
export interface RerunBatchRecord {
  readonly id: string;
  readonly mode: string;
  readonly reason: string;
  readonly actor: string;
  readonly concurrency: number | null;
  readonly forceDownstream: boolean;
  /** The request body as accepted. */
  readonly request: unknown;
  readonly createdAt: Date;
}

/** A cancel of a batch, as its audit entry records it. */
export interface RerunBatchCancel {
  readonly at: Date;
  readonly actor: string;
}

/** The audit action of a batch cancel; its target is {@link rerunBatchTarget}. */
export const RERUN_CANCEL_ACTION = 'rerun.cancel';

/** The audit target of a batch: `rerun:<id>`. */
export function rerunBatchTarget(id: string): string {
  return `rerun:${id}`;
}

/**
 * SQL: whether batch `b` is visible to a token of `teams` (values: `[teams, teams]`). A batch
 * belongs to the teams of its instances (an instance re-run by a later batch moves to it) and,
 * while it has none, to the team of the task or instance its request named: visible when the
 * token covers all of them, so its counts never include another team's instances.
 */
const BATCH_VISIBLE_SQL = `NOT EXISTS (SELECT 1 FROM task_instance bi
                 WHERE bi.rerun_batch_id = b.id AND (${instanceTeamSql('bi')} IS NULL OR ${instanceTeamSql('bi')} NOT IN (?)))
    AND (EXISTS (SELECT 1 FROM task_instance bi WHERE bi.rerun_batch_id = b.id)
         OR COALESCE(
              (SELECT nt.team FROM task nt
                WHERE nt.name = COALESCE(JSON_UNQUOTE(JSON_EXTRACT(b.request, '$.task')), JSON_UNQUOTE(JSON_EXTRACT(b.request, '$.root')))),
              (SELECT ${instanceTeamSql('ni')} FROM task_instance ni
                WHERE ni.id = JSON_UNQUOTE(JSON_EXTRACT(b.request, '$.instanceId')))) IN (?))`;

function teamCondition(teams: readonly string[] | null): { sql: string; values: unknown[] } | null {
  if (teams === null) return null;
  if (teams.length === 0) return { sql: 'FALSE', values: [] };
  return { sql: BATCH_VISIBLE_SQL, values: [teams, teams] };
}

function batchFromRow(r: RowDataPacket): RerunBatchRecord {
  return {
    id: String(r['id']),
    mode: String(r['mode']),
    reason: String(r['reason']),
    actor: String(r['actor']),
    concurrency: r['concurrency'] == null ? null : Number(r['concurrency']),
    forceDownstream: Number(r['force_downstream']) === 1,
    request: decodeJsonNullable(r['request']),
    createdAt: r['created_at'] as Date,
  };
}

const BATCH_COLUMNS = 'b.id, b.mode, b.reason, b.actor, b.concurrency, b.force_downstream, b.request, b.created_at';

/** Batches newest first (ids below `beforeId`), of these teams (`null`: all), at most `limit`. */
export async function listRerunBatches(
  db: Queryable,
  opts: { teams: readonly string[] | null; beforeId?: string; mode?: string; limit: number },
): Promise<RerunBatchRecord[]> {
  const where: string[] = [];
  const values: unknown[] = [];
  if (opts.beforeId !== undefined) {
    where.push('b.id < ?');
    values.push(opts.beforeId);
  }
  if (opts.mode !== undefined) {
    where.push('b.mode = ?');
    values.push(opts.mode);
  }
  const team = teamCondition(opts.teams);
  if (team !== null) {
    where.push(team.sql);
    values.push(...team.values);
  }
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT ${BATCH_COLUMNS} FROM rerun_batch b ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY b.id DESC LIMIT ?`,
    [...values, opts.limit],
  );
  return rows.map(batchFromRow);
}

/** One batch if it exists and is visible to `teams` (`null`: all); `forUpdate` locks its row (cancels of one batch queue up). */
export async function getRerunBatch(db: Queryable, id: string, opts: { teams: readonly string[] | null; forUpdate?: boolean }): Promise<RerunBatchRecord | null> {
  const team = teamCondition(opts.teams);
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT ${BATCH_COLUMNS} FROM rerun_batch b WHERE b.id = ?${team === null ? '' : ` AND ${team.sql}`}${opts.forUpdate === true ? ' FOR UPDATE' : ''}`,
    [id, ...(team === null ? [] : team.values)],
  );
  const row = rows[0];
  return row === undefined ? null : batchFromRow(row);
}

/** Instances of each batch by state (`idx_instance_rerun_batch`). */
export async function rerunBatchCounts(db: Queryable, batchIds: readonly string[]): Promise<Map<string, Map<InstanceState, number>>> {
  const out = new Map<string, Map<InstanceState, number>>();
  if (batchIds.length === 0) return out;
  const [rows] = await db.query<RowDataPacket[]>(
    'SELECT rerun_batch_id, state, COUNT(*) AS n FROM task_instance WHERE rerun_batch_id IN (?) GROUP BY rerun_batch_id, state',
    [batchIds],
  );
  for (const r of rows) {
    const id = String(r['rerun_batch_id']);
    const byState = out.get(id) ?? new Map<InstanceState, number>();
    byState.set(String(r['state']) as InstanceState, Number(r['n']));
    out.set(id, byState);
  }
  return out;
}

/** The teams of each batch's instances ({@link instanceTeamSql}; a deleted task's instance without one: null). */
export async function rerunBatchTeams(db: Queryable, batchIds: readonly string[]): Promise<Map<string, Array<string | null>>> {
  const out = new Map<string, Array<string | null>>();
  if (batchIds.length === 0) return out;
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT DISTINCT i.rerun_batch_id, ${instanceTeamSql('i')} AS team FROM task_instance i WHERE i.rerun_batch_id IN (?)`,
    [batchIds],
  );
  for (const r of rows) {
    const id = String(r['rerun_batch_id']);
    out.set(id, [...(out.get(id) ?? []), (r['team'] as string | null) ?? null]);
  }
  return out;
}

/**
 * The cancels of these batches, from their audit entries (the audit log is the record of the
 * write: no column of its own). Read from the oldest batch's creation on (`idx_audit_at`).
 */
export async function rerunBatchCancels(db: Queryable, batches: ReadonlyArray<Pick<RerunBatchRecord, 'id' | 'createdAt'>>): Promise<Map<string, RerunBatchCancel>> {
  const out = new Map<string, RerunBatchCancel>();
  if (batches.length === 0) return out;
  const since = new Date(Math.min(...batches.map((b) => b.createdAt.getTime())));
  const targets = new Map(batches.map((b) => [rerunBatchTarget(b.id), b.id]));
  const [rows] = await db.query<RowDataPacket[]>(
    'SELECT target, at, actor FROM audit_log WHERE at >= ? AND action = ? AND target IN (?) ORDER BY id',
    [since, RERUN_CANCEL_ACTION, [...targets.keys()]],
  );
  for (const r of rows) {
    const id = targets.get(String(r['target']));
    if (id !== undefined && !out.has(id)) out.set(id, { at: r['at'] as Date, actor: String(r['actor']) });
  }
  return out;
}

/** The batch's instances in `states`, oldest first, locked with `forUpdate`. */
export async function instancesOfRerunBatch(
  db: Queryable,
  batchId: string,
  opts: { states: readonly InstanceState[]; forUpdate?: boolean },
): Promise<InstanceRecord[]> {
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT ${INSTANCE_COLUMNS} FROM task_instance WHERE rerun_batch_id = ? AND state IN (?) ORDER BY id${opts.forUpdate === true ? ' FOR UPDATE' : ''}`,
    [batchId, opts.states],
  );
  return rows.map(instanceFromRow);
}

/**
 * The batch that started the newest batch run among these tasks' instances of `bizDate`, and
 * whether it was canceled; null when no batch did. A dependency-only child the scheduler
 * creates for them joins that batch (#47), so the batch counts it and its cancel reaches it;
 * for a canceled batch it is not created at all (the cancel stopped what had not started).
 */
export async function rerunBatchOfBizDate(db: Queryable, taskNames: readonly string[], bizDate: string): Promise<{ id: string; canceled: boolean } | null> {
  if (taskNames.length === 0) return null;
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT b.id,
            EXISTS (SELECT 1 FROM audit_log a WHERE a.at >= b.created_at AND a.action = ? AND a.target = CONCAT('rerun:', b.id)) AS canceled
       FROM task_instance i JOIN rerun_batch b ON b.id = i.rerun_batch_id
      WHERE i.task_name IN (?) AND i.biz_date = ?
      ORDER BY b.id DESC LIMIT 1`,
    [RERUN_CANCEL_ACTION, taskNames, bizDate],
  );
  const row = rows[0];
  return row === undefined ? null : { id: String(row['id']), canceled: Number(row['canceled']) === 1 };
}

/**
 * How long after a batch run ends a dependency-only child it may start still counts as to
 * come: the scheduler creates it on the `instances-finished` wake-up, or at worst on its
 * periodic DAG scan (default every 5 s). A child that is never created (another parent of
 * its date is missing) holds its batch no longer than this.
 */
export const DOWNSTREAM_GRACE_SECONDS = 60;

/**
 * Of these batches, those with a final run whose dependency-only child (schedule `none`,
 * enabled) has no instance of the run's business date yet, within
 * {@link DOWNSTREAM_GRACE_SECONDS} of the run's end: the child is about to be created in the
 * batch, so the batch is not done (#47: a DAG backfill said done while downstream had still to
 * run). `ALL_SUCCESS` edges count only a successful parent run (a failed one creates nothing).
 */
export async function rerunBatchesAwaitingDownstream(db: Queryable, batchIds: readonly string[]): Promise<Set<string>> {
  if (batchIds.length === 0) return new Set();
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT DISTINCT i.rerun_batch_id FROM task_instance i
       JOIN task_edge e ON e.parent_task = i.task_name
       JOIN task c ON c.name = e.child_task AND c.schedule_type = 'none' AND c.enabled = 1
      WHERE i.rerun_batch_id IN (?)
        AND (i.state = 'SUCCESS' OR (e.rule = 'ALL_DONE' AND i.state IN ('FAILED', 'CANCELED')))
        AND i.ended_at >= NOW(3) - INTERVAL ? SECOND
        AND NOT EXISTS (SELECT 1 FROM task_instance ci WHERE ci.task_name = c.name AND ci.biz_date = i.biz_date)`,
    [batchIds, DOWNSTREAM_GRACE_SECONDS],
  );
  return new Set(rows.map((r) => String(r['rerun_batch_id'])));
}
