/**
 * The broker's dispatch queries (DESIGN §4): claiming due PENDING instances so that several
 * brokers share the work (`FOR UPDATE SKIP LOCKED`), the block-strategy check (R4), the
 * execution rows, the ACK deadline (R8) and the global pause flag.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { decodeJson } from '../json.js';
import type { Queryable } from '../schema-version.js';
import { TASK_COLUMNS, taskFromRow, type TaskRecord } from './tasks.js';
import { instanceKey, perRowValue } from './bulk-transitions.js';

/** A claimed instance, with what the broker needs to decide and to build the dispatch item. */
export interface ClaimedInstance {
  readonly id: string;
  readonly taskId: string;
  readonly taskName: string;
  /** The row's team (0010); null for a row written before it (its task's team applies). */
  readonly team: string | null;
  readonly expectedTime: Date;
  readonly runNo: number;
  readonly bizDate: string;
  readonly trigger: string;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly priority: number;
  readonly params: Record<string, unknown>;
  /** The worker of the previous dispatch (excluded after an ACK timeout), or null. */
  readonly workerId: string | null;
  readonly rerouteCount: number;
  readonly rerunBatchId: string | null;
  /** Milliseconds from the slot's expected time to the claim, on the database clock (R5). */
  readonly lateMs: number;
  /** Milliseconds since `due_at`, on the database clock (R11 alert threshold). */
  readonly waitingMs: number;
  /** The database clock at the claim. */
  readonly dbNow: Date;
  /** The run's W3C `traceparent` (#48); null until its first dispatch gives it one (a manual run, a rerun). */
  readonly traceParent: string | null;
}

/** A claimed row as {@link CLAIM_SELECT} reads it (claim-by-team.ts shares it). */
export type ClaimRow = RowDataPacket & {
  id: string;
  team: string | null;
  task_id: string;
  task_name: string;
  expected_time: Date;
  run_no: number;
  biz_date: Date;
  trigger: string;
  attempt: number;
  max_attempts: number;
  priority: number;
  params: unknown;
  worker_id: string | null;
  reroute_count: number;
  rerun_batch_id: string | null;
  late_us: string | number;
  waiting_us: string | number;
  db_now: Date;
  trace_parent: string | null;
};

function isoDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/**
 * Whether any PENDING instance is due, by a plain read (no lock, no transaction): the look an
 * idle dispatcher takes before it opens a claim transaction, so its poll costs one statement
 * instead of five. A row another broker has locked still counts (the claim then skips it).
 */
export async function anyDuePending(db: Queryable): Promise<boolean> {
  const [rows] = await db.query<RowDataPacket[]>(`SELECT 1 AS due FROM task_instance WHERE state = 'PENDING' AND due_at <= NOW(3) LIMIT 1`);
  return rows.length > 0;
}

/** Options of {@link claimDuePending}. */
export interface ClaimOptions {
  /**
   * Teams whose instances are left out of the claim (teams at their `maxRunning`): their waiting
   * instances would only be locked and let go, and ahead of everyone else's in the claim order
   * they would keep other teams' instances out of every batch. Empty or absent: no filter (the
   * statement is the plain claim).
   */
  readonly skipTeams?: readonly string[];
  /**
   * Backlog deferral (#22): instances below `belowPriority` of these tasks (those of pools whose
   * backlog holds) are left out of the claim; they stay PENDING and due. Absent or no tasks: no
   * filter.
   */
  readonly defer?: { readonly belowPriority: number; readonly taskIds: readonly string[] };
}

/**
 * Locks up to `limit` due PENDING instances (`due_at <= NOW(3)`), highest priority first, then
 * oldest due; rows locked by another broker's transaction are skipped. Call inside a transaction.
 */
export async function claimDuePending(conn: Queryable, limit: number, opts: ClaimOptions = {}): Promise<ClaimedInstance[]> {
  const skipTeams = opts.skipTeams ?? [];
  // The subquery reads task rows without locking them (a locking clause applies to its own query block).
  // By the row's team (0010); a row of a build before 0010 has none and goes by its task's.
  const teamFilter =
    skipTeams.length > 0 ? ' AND (team NOT IN (?) OR (team IS NULL AND task_id NOT IN (SELECT t.id FROM task t WHERE t.team IN (?))))' : '';
  const defer = opts.defer !== undefined && opts.defer.taskIds.length > 0 ? opts.defer : undefined;
  const deferFilter = defer !== undefined ? ' AND NOT (priority < ? AND task_id IN (?))' : '';
  const params: unknown[] = [];
  if (skipTeams.length > 0) params.push([...new Set(skipTeams)], [...new Set(skipTeams)]);
  if (defer !== undefined) params.push(defer.belowPriority, [...new Set(defer.taskIds)]);
  params.push(limit);
  const [rows] = await conn.query<ClaimRow[]>(
    `${CLAIM_SELECT}
       FROM task_instance i
      WHERE state = 'PENDING' AND due_at <= NOW(3)${teamFilter}${deferFilter}
      ORDER BY priority DESC, due_at ASC
      LIMIT ?
      FOR UPDATE SKIP LOCKED`,
    params,
  );
  return claimRowsToInstances(rows);
}

/** The columns of a claim (`task_instance` aliased `i`), with the database clock's lateness and wait. */
export const CLAIM_SELECT = `SELECT i.id, i.task_id, i.task_name, i.team, i.expected_time, i.run_no, i.biz_date, i.\`trigger\`, i.attempt, i.max_attempts,
            i.priority, i.params, i.worker_id, i.reroute_count, i.rerun_batch_id, i.trace_parent,
            TIMESTAMPDIFF(MICROSECOND, i.expected_time, NOW(3)) AS late_us,
            TIMESTAMPDIFF(MICROSECOND, i.due_at, NOW(3)) AS waiting_us,
            NOW(3) AS db_now`;

/** Claimed rows as the broker uses them. */
export function claimRowsToInstances(rows: readonly ClaimRow[]): ClaimedInstance[] {
  return rows.map((r) => ({
    id: String(r.id),
    taskId: String(r.task_id),
    taskName: r.task_name,
    team: r.team === null ? null : String(r.team),
    expectedTime: r.expected_time,
    runNo: Number(r.run_no),
    bizDate: isoDate(r.biz_date),
    trigger: r.trigger,
    attempt: Number(r.attempt),
    maxAttempts: Number(r.max_attempts),
    priority: Number(r.priority),
    params: decodeJson<Record<string, unknown>>(r.params),
    workerId: r.worker_id,
    rerouteCount: Number(r.reroute_count),
    rerunBatchId: r.rerun_batch_id === null ? null : String(r.rerun_batch_id),
    lateMs: Math.floor(Number(r.late_us) / 1000),
    waitingMs: Math.floor(Number(r.waiting_us) / 1000),
    dbNow: r.db_now,
    traceParent: r.trace_parent ?? null,
  }));
}

/**
 * Definitions already validated, one per task: the record of the version last seen (a row's
 * definition never changes without a new version, and a claim only ever wants the current
 * one). Passed to {@link loadTasksById} by a long-lived reader such as the broker, so a task's
 * definition is parsed once per version instead of once per claimed batch. Keyed by task, an
 * edit replaces the old version instead of adding an entry, so a cache warmed with every
 * enabled task (`warmTaskDefinitions`) does not fill up and start over at the next edit.
 */
export class TaskDefinitionCache {
  readonly #byId = new Map<string, TaskRecord>();
  constructor(private readonly maxEntries = 10_000) {}

  /** Tasks held at most (past it the cache starts over). */
  get capacity(): number {
    return this.maxEntries;
  }

  /** Tasks held now. */
  get size(): number {
    return this.#byId.size;
  }

  get(id: string, version: number): TaskRecord | undefined {
    const record = this.#byId.get(id);
    return record !== undefined && record.version === version ? record : undefined;
  }

  set(record: TaskRecord): void {
    // A simple bound: refilled on demand (and by the warming pass).
    if (!this.#byId.has(record.id) && this.#byId.size >= this.maxEntries) this.#byId.clear();
    this.#byId.set(record.id, record);
  }
}

/**
 * Tasks by id. The definition is re-validated by `taskFromRow`, unless `cache` holds that
 * task at that version (then the cached record is returned: its definition is the same, its
 * counters and watermark may be older — callers of this function use the definition). With a
 * cache (a dispatcher), the stored schedule is trusted rather than re-validated.
 */
export async function loadTasksById(db: Queryable, ids: readonly string[], cache?: TaskDefinitionCache): Promise<Map<string, TaskRecord>> {
  const out = new Map<string, TaskRecord>();
  if (ids.length === 0) return out;
  let wanted = [...new Set(ids)];
  if (cache !== undefined) {
    // Versions first: a definition cached at its current version needs no full row (a claim
    // reads hundreds of tasks, and their JSON columns cost more to send and decode than to
    // look up).
    const [versions] = await db.query<RowDataPacket[]>('SELECT id, version FROM task WHERE id IN (?)', [wanted]);
    wanted = [];
    for (const row of versions) {
      const cached = cache.get(String(row.id), Number(row.version));
      if (cached === undefined) wanted.push(String(row.id));
      else out.set(cached.id, cached);
    }
    if (wanted.length === 0) return out;
  }
  for (const [id, record] of await readTaskRows(db, wanted, cache)) out.set(id, record);
  return out;
}

/**
 * Full task rows by id, each validated unless `cache` holds it at the row's version; what is
 * validated goes into `cache`. The half of {@link loadTasksById} after its version lookup, for a
 * caller that has looked the versions up already (`warmTaskDefinitions`).
 */
export async function readTaskRows(db: Queryable, ids: readonly string[], cache?: TaskDefinitionCache): Promise<Map<string, TaskRecord>> {
  const out = new Map<string, TaskRecord>();
  if (ids.length === 0) return out;
  const [rows] = await db.query<RowDataPacket[]>(`SELECT ${TASK_COLUMNS} FROM task WHERE id IN (?)`, [ids]);
  for (const row of rows) {
    const cached = cache?.get(String(row.id), Number(row.version));
    const record = cached ?? taskFromRow(row, { trustSchedule: cache !== undefined });
    if (cached === undefined) cache?.set(record);
    out.set(record.id, record);
  }
  return out;
}

/**
 * Locks the task rows (in id order) of tasks whose block strategy is checked at claim (R4), so
 * two brokers claiming different instances of one serial task decide one after the other.
 */
export async function lockTasksForBlockCheck(conn: Queryable, taskIds: readonly string[]): Promise<void> {
  if (taskIds.length === 0) return;
  const ids = [...new Set(taskIds)].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  await conn.query(`SELECT id FROM task WHERE id IN (?) ORDER BY id FOR UPDATE`, [ids]);
}

/** An instance holding a run of its task (R4). */
export interface ActiveRun {
  readonly id: string;
  readonly taskName: string;
  readonly state: 'DISPATCHED' | 'RUNNING';
  readonly workerId: string | null;
  readonly executionId: string | null;
}

/** The DISPATCHED or RUNNING instances of these tasks (the R4 check at claim). */
export async function activeRunsOfTasks(db: Queryable, taskNames: readonly string[]): Promise<ActiveRun[]> {
  if (taskNames.length === 0) return [];
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT id, task_name, state, worker_id, current_execution_id FROM task_instance
      WHERE task_name IN (?) AND state IN ('DISPATCHED', 'RUNNING')`,
    [[...new Set(taskNames)]],
  );
  return rows.map((r) => ({
    id: String(r.id),
    taskName: String(r.task_name),
    state: r.state as 'DISPATCHED' | 'RUNNING',
    workerId: (r.worker_id as string | null) ?? null,
    executionId: (r.current_execution_id as string | null) ?? null,
  }));
}

/** One `task_execution` row to create at dispatch. */
export interface NewExecution {
  readonly executionId: string;
  readonly instanceId: string;
  readonly attempt: number;
  readonly runNo: number;
  readonly workerId: string;
  readonly shardIndex?: number | null;
  readonly shardTotal?: number | null;
}

/** Inserts execution rows in state DISPATCHED (dispatched_at = the database clock). */
export async function insertExecutions(db: Queryable, executions: readonly NewExecution[]): Promise<void> {
  if (executions.length === 0) return;
  const rows = executions.map((e) => [e.executionId, e.instanceId, e.attempt, e.runNo, e.shardIndex ?? null, e.shardTotal ?? null, e.workerId]);
  await db.query(
    `INSERT INTO task_execution (execution_id, instance_id, attempt, run_no, shard_index, shard_total, worker_id, state, dispatched_at)
     VALUES ${rows.map(() => "(?, ?, ?, ?, ?, ?, ?, 'DISPATCHED', NOW(3))").join(', ')}`,
    rows.flat(),
  );
}

/**
 * R8, "the ACK deadline starts when the publish is confirmed": after the confirm, the deadline
 * of the still-DISPATCHED, still-current executions becomes `GREATEST(messageDeadline,
 * NOW(3) + ackTimeoutMs)`. Before it (set at claim) it is generous, so a publish held during
 * an AMQP outage never expires in the database first. Returns rows changed.
 */
export async function startAckDeadlines(
  db: Queryable,
  items: ReadonlyArray<{ instanceId: string; executionId: string }>,
  messageDeadline: Date,
  ackTimeoutMs: number,
): Promise<number> {
  if (items.length === 0) return 0;
  const [result] = await db.query<ResultSetHeader>(
    `UPDATE task_instance FORCE INDEX (PRIMARY)
        SET ack_deadline = GREATEST(?, NOW(3) + INTERVAL ? MICROSECOND)
      WHERE state = 'DISPATCHED' AND id IN (?) AND current_execution_id IN (?)`,
    // By primary key: with few rows DISPATCHED the optimizer took the (state, ack_deadline)
    // index, whose DISPATCHED range under load is mostly entries not yet purged. Execution ids
    // are unique per instance, so the two lists select the rows the pairs name.
    [messageDeadline, ackTimeoutMs * 1000, items.map((i) => instanceKey(i.instanceId)), items.map((i) => i.executionId)],
  );
  return result.affectedRows;
}

/** Sets the state (and reason) of execution rows. */
export async function setExecutionState(
  db: Queryable,
  executionIds: readonly string[],
  state: string,
  reason: string | null,
  opts: { onlyFrom?: readonly string[]; ended?: boolean } = {},
): Promise<number> {
  if (executionIds.length === 0) return 0;
  const params: unknown[] = [state, reason, executionIds];
  let where = 'execution_id IN (?)';
  if (opts.onlyFrom !== undefined) {
    where += ' AND state IN (?)';
    params.push(opts.onlyFrom);
  }
  const [result] = await db.query<ResultSetHeader>(
    `UPDATE task_execution SET state = ?, reason = ?${opts.ended ? ', ended_at = COALESCE(ended_at, NOW(3))' : ''} WHERE ${where}`,
    params,
  );
  return result.affectedRows;
}

/** Events of an instance that waits at claim, written once per instance ({@link recordWaitingOnce}). */
export type WaitingEventType = 'NO_WORKER' | 'TEAM_LIMIT';

/**
 * Appends one `type` event per instance: only when the instance has none of that type yet, so
 * an instance that waits through many claims gets one (the rows are the caller's: claimed
 * `FOR UPDATE`, so no other broker writes the same event meanwhile). Returns the ids that got
 * one now.
 */
export async function recordWaitingOnce(db: Queryable, type: WaitingEventType, instanceIds: readonly string[], message: string): Promise<string[]> {
  if (instanceIds.length === 0) return [];
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT DISTINCT instance_id FROM event_log WHERE instance_id IN (?) AND type = ?`,
    [instanceIds, type],
  );
  const seen = new Set(rows.map((r) => String(r.instance_id)));
  const fresh = instanceIds.filter((id) => !seen.has(id));
  if (fresh.length > 0) {
    await db.query(
      `INSERT INTO event_log (instance_id, type, message) VALUES ${fresh.map(() => '(?, ?, ?)').join(', ')}`,
      fresh.flatMap((id) => [id, type, message.slice(0, 2_048)]),
    );
  }
  return fresh;
}

/**
 * Appends one `NO_WORKER` event per instance (R11): only when the instance has none yet.
 * Returns the ids that got one now.
 */
export async function recordNoWorker(db: Queryable, instanceIds: readonly string[], message: string): Promise<string[]> {
  return recordWaitingOnce(db, 'NO_WORKER', instanceIds, message);
}

/** Whether an admin paused all dispatching (`system_flag` `dispatch_paused`). */
export async function isDispatchPaused(db: Queryable): Promise<boolean> {
  const [rows] = await db.query<RowDataPacket[]>(`SELECT value FROM system_flag WHERE name = 'dispatch_paused'`);
  const row = rows[0];
  return row !== undefined && decodeJson(row.value) === true;
}

/** Sets or clears the global pause (admin API; tests). */
export async function setDispatchPaused(db: Queryable, paused: boolean, by: string | null = null): Promise<void> {
  await db.query(
    `INSERT INTO system_flag (name, value, updated_by) VALUES ('dispatch_paused', ?, ?)
     ON DUPLICATE KEY UPDATE value = VALUES(value), updated_by = VALUES(updated_by)`,
    [paused ? 'true' : 'false', by],
  );
}

/** A rerun batch's concurrency limit and how many of its instances hold a run now (R20). */
export interface RerunBatchLoad {
  readonly concurrency: number | null;
  readonly active: number;
}

/** Limits and active runs of rerun batches, checked at claim (R20). */
export async function rerunBatchLoads(db: Queryable, batchIds: readonly string[]): Promise<Map<string, RerunBatchLoad>> {
  const out = new Map<string, RerunBatchLoad>();
  if (batchIds.length === 0) return out;
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT b.id, b.concurrency,
            (SELECT COUNT(*) FROM task_instance i WHERE i.rerun_batch_id = b.id AND i.state IN ('DISPATCHED', 'RUNNING')) AS active
       FROM rerun_batch b WHERE b.id IN (?) ORDER BY b.id FOR UPDATE`,
    [[...new Set(batchIds)]],
  );
  for (const r of rows) out.set(String(r.id), { concurrency: r.concurrency == null ? null : Number(r.concurrency), active: Number(r.active) });
  return out;
}

/**
 * Gives the claimed instances that have no trace context yet (a manual run, a rerun, a row from
 * before migration 0017) theirs: `traceParents` maps instance id → `traceparent` (#48). Only
 * rows still without one change. One statement; none when the map is empty (the common claim:
 * the scheduler wrote every fired instance's).
 */
export async function setMissingTraceParents(conn: Queryable, traceParents: ReadonlyMap<string, string>): Promise<void> {
  if (traceParents.size === 0) return;
  const ids = [...traceParents.keys()];
  const params: unknown[] = [];
  const value = perRowValue('id', ids, (i) => traceParents.get(ids[i] as string), params);
  params.push(ids);
  await conn.query(`UPDATE task_instance SET trace_parent = ${value} WHERE id IN (?) AND trace_parent IS NULL`, params);
}
