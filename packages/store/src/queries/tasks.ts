/**
 * `task`: task definitions (ADMIN-API.md "Task definition") and the scheduler's bookkeeping
 * columns (watermark `last_fire_time`, `next_fire_time`, misfire counters).
 *
 * The mapping between a row and a `TaskDefinition` lives here and nowhere else
 * ({@link taskFromRow}, {@link definitionColumns}). Definition writes bump `version`
 * (optimistic concurrency: a replace names the version it read and loses with
 * {@link TaskVersionConflictError} when someone else wrote first). The caller publishes
 * `<ns>:task-changed` (payload: the task name) after every committed definition change, so
 * every scheduler re-reads it at once.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { DEFAULT_DEPENDENCY_TIMEOUT_SECONDS, parseTaskDefinitionOrThrow, trustedTaskDefinition, type TaskDefinition } from '@ax/core';
import { StoreError, isDuplicateKeyError } from '../errors.js';
import { decodeJson, encodeJson } from '../json.js';
import type { Queryable } from '../schema-version.js';
import { memoizedDefinition } from './definition-memo.js';
import { firstDayOfTask, forgetRolledUpDaysFrom } from './stats-rollup.js';
import { containsPattern, findTasksByText, indexTaskText, isIndexedTerm } from './task-text.js';
import { recordTaskVersion, recordVersionBeingReplaced } from './task-versions.js';

/** Who saves a definition: recorded with its version (task-versions.ts); null/absent = the system. */
export interface SavedBy {
  readonly actor?: string | null;
}

/** A task as stored: its definition plus the resource fields. */
export interface TaskRecord {
  /** Immutable row id (decimal string, like every BIGINT id). */
  readonly id: string;
  readonly definition: TaskDefinition;
  readonly version: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** Watermark: every slot up to here has its row or was decided by the misfire/serial policy (R2). */
  readonly lastFireTime: Date | null;
  readonly nextFireTime: Date | null;
  readonly skippedCount: number;
  readonly coalescedCount: number;
  /** `FAILURES` while disabled by `pauseAfterFailures`; null otherwise. */
  readonly pausedReason: string | null;
  /** Fires not created because the task's calendar listed their date. */
  readonly calendarSkippedCount: number;
  /**
   * The marker of the import that manages the task (`axctl apply --source`, migration 0016);
   * null when none does. `apply --prune` deletes only tasks carrying its own marker (#47).
   */
  readonly managedBy: string | null;
}

/** A replace or delete named a version that is no longer current. */
export class TaskVersionConflictError extends StoreError {
  constructor(
    readonly taskName: string,
    readonly expectedVersion: number,
    readonly actualVersion: number | null,
  ) {
    super(
      actualVersion === null
        ? `task ${JSON.stringify(taskName)} does not exist`
        : `task ${JSON.stringify(taskName)} is at version ${actualVersion}, not ${expectedVersion}`,
    );
    this.name = 'TaskVersionConflictError';
  }
}

/** A create or replace named a team that does not exist. */
export class TeamMissingError extends StoreError {
  constructor(readonly team: string) {
    super(`team ${JSON.stringify(team)} does not exist`);
    this.name = 'TeamMissingError';
  }
}

/** MySQL/MariaDB 1452: a foreign key (here `fk_task_team`) names no parent row. */
function isMissingParentError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { errno?: unknown }).errno === 1452;
}

/** A create named a task that exists already. */
export class TaskExistsError extends StoreError {
  constructor(readonly taskName: string) {
    super(`task ${JSON.stringify(taskName)} already exists`);
    this.name = 'TaskExistsError';
  }
}

/** The columns of a task row, in select order. */
export const TASK_COLUMNS = `id, name, team, description, owner, schedule, timezone, exec, params, tags, priority,
  timeout_s, retry, misfire, block_strategy, block_queue, max_lateness_s, route, biz_date_offset_days,
  dependency_timeout_s, dependency_timeout_default, managed_by, calendar, calendar_skipped_count, jitter_s, pause_after_failures, sla_start_s, sla_finish_s, paused_reason,
  enabled, version, last_fire_time, next_fire_time, skipped_count, coalesced_count, created_at, updated_at`;

type TaskRow = RowDataPacket & {
  id: string;
  name: string;
  team: string | undefined;
  description: string;
  owner: string;
  schedule: unknown;
  timezone: string;
  exec: unknown;
  params: unknown;
  tags: unknown;
  priority: number;
  timeout_s: number;
  retry: unknown;
  misfire: unknown;
  block_strategy: string;
  block_queue: number | null;
  max_lateness_s: number | null;
  route: string;
  biz_date_offset_days: number;
  dependency_timeout_s: number;
  dependency_timeout_default: number;
  managed_by: string | null;
  calendar: string | null;
  calendar_skipped_count: string;
  jitter_s: number;
  pause_after_failures: number | null;
  sla_start_s: number | null;
  sla_finish_s: number | null;
  paused_reason: string | null;
  enabled: number;
  version: number;
  last_fire_time: Date | null;
  next_fire_time: Date | null;
  skipped_count: string;
  coalesced_count: string;
  created_at: Date;
  updated_at: Date;
};

/**
 * A row → a record. The definition is re-validated through core's schema, so a row written by
 * an older build gets today's defaults and a corrupt row fails loudly here, not deep in a loop.
 * `memo: false` parses without the memo (see {@link ListTasksOptions.memo}). `trusted`: the
 * stored definition is taken as written (core's `trustedTaskDefinition`, no zod) when its shape
 * is today's complete one, and parsed in full otherwise (a row of an older build); for reads
 * that show definitions (lists, search), never for a write's own read.
 * @throws StoredTaskUnreadableError naming the task when the row does not decode or parse.
 */
export function taskFromRow(row: RowDataPacket, opts: { trustSchedule?: boolean; memo?: boolean; trusted?: boolean } = {}): TaskRecord {
  const r = row as TaskRow;
  try {
    if (opts.trusted === true) {
      const trusted = trustedRecordOf(r);
      if (trusted !== undefined) return trusted;
    }
    const schedule = { ...decodeJson<Record<string, unknown>>(r.schedule), timezone: r.timezone };
    if (opts.trustSchedule === true) {
      // The stored schedule was validated when it was written; re-validating a cron expression
      // (cron-parser) per task was a tenth of the broker's CPU in a burst of distinct tasks. Any
      // doubt (the rest does not parse without it) falls back to the full check.
      try {
        const rest = recordOf(r, { type: 'none', timezone: r.timezone }, false);
        return { ...rest, definition: { ...rest.definition, schedule: schedule as unknown as TaskDefinition['schedule'] } };
      } catch {
        // fall through
      }
    }
    return recordOf(r, schedule, opts.memo ?? true);
  } catch (err) {
    throw new StoredTaskUnreadableError(String(r.name), err);
  }
}

/**
 * A stored task row that does not decode (invalid JSON) or no longer parses (#46): named with the
 * task and the first problem, so a list can leave the row out and say which one it was.
 */
export class StoredTaskUnreadableError extends StoreError {
  constructor(
    readonly taskName: string,
    cause: unknown,
  ) {
    super(`task ${JSON.stringify(taskName)}: its stored definition cannot be read: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'StoredTaskUnreadableError';
  }
}

/**
 * The record of a row whose stored definition has today's complete shape, without zod (#46);
 * undefined when it has not (the caller parses it in full). Its definition is a fresh object per
 * call, so nothing is shared between callers (the memo's are frozen for that).
 */
function trustedRecordOf(r: TaskRow): TaskRecord | undefined {
  if (r.team === undefined) return undefined; // a schema before teams: the parse gives the default team
  const schedule = decodeJson<Record<string, unknown>>(r.schedule);
  if (schedule === null || typeof schedule !== 'object') return undefined;
  schedule['timezone'] = r.timezone; // the column is the source (as in the full read)
  // One object literal, its keys in the schema's order (a parse's output order, so a response
  // lists them as before): built with a spread or keys added one by one, V8 kept these in
  // dictionary mode, and copying them into each resource cost more than the parse saved.
  const candidate: Record<string, unknown> = {
    name: r.name,
    description: r.description,
    team: r.team,
    owner: r.owner,
    schedule,
    exec: decodeJson(r.exec),
    params: decodeJson(r.params),
    tags: decodeJson(r.tags),
    priority: Number(r.priority),
    timeoutSeconds: Number(r.timeout_s),
    retry: decodeJson(r.retry),
    misfire: decodeJson(r.misfire),
    block: r.block_strategy === 'queue' ? { queue: Number(r.block_queue) } : r.block_strategy,
    maxLatenessSeconds: r.max_lateness_s === null ? null : Number(r.max_lateness_s),
    route: r.route,
    bizDateOffsetDays: Number(r.biz_date_offset_days),
    calendar: r.calendar,
    jitterSeconds: Number(r.jitter_s),
    pauseAfterFailures: r.pause_after_failures === null ? null : Number(r.pause_after_failures),
    sla: slaOf(r.sla_start_s, r.sla_finish_s),
    enabled: Number(r.enabled) === 1,
    // Not set by the definition: null, and the scheduler's AX_DEPENDENCY_TIMEOUT_S applies (#47).
    dependencyTimeoutSeconds: Number(r.dependency_timeout_default) === 1 ? null : Number(r.dependency_timeout_s),
  };
  const definition = trustedTaskDefinition(candidate);
  return definition === undefined ? undefined : resourceOf(r, definition);
}

/** The stored columns a definition is parsed from (definition-memo.ts keys on them). */
function definitionColumnsOf(r: TaskRow): unknown[] {
  return [
    r.name, r.description, r.team, r.owner, r.schedule, r.timezone, r.exec, r.params, r.tags, r.priority, r.timeout_s, r.retry, r.misfire,
    r.block_strategy, r.block_queue, r.max_lateness_s, r.route, r.biz_date_offset_days, r.enabled, r.dependency_timeout_s, r.dependency_timeout_default, r.calendar,
    r.jitter_s, r.pause_after_failures, r.sla_start_s, r.sla_finish_s,
  ];
}

/** The input of core's parse for a row: its columns, JSON columns decoded. */
function definitionInput(r: TaskRow, schedule: Record<string, unknown>): Record<string, unknown> {
  return {
    name: r.name,
    description: r.description,
    ...(r.team === undefined ? {} : { team: r.team }),
    owner: r.owner,
    schedule,
    exec: decodeJson(r.exec),
    params: decodeJson(r.params),
    tags: decodeJson(r.tags),
    priority: Number(r.priority),
    timeoutSeconds: Number(r.timeout_s),
    retry: decodeJson(r.retry),
    misfire: decodeJson(r.misfire),
    block: r.block_strategy === 'queue' ? { queue: Number(r.block_queue) } : r.block_strategy,
    maxLatenessSeconds: r.max_lateness_s === null ? null : Number(r.max_lateness_s),
    route: r.route,
    bizDateOffsetDays: Number(r.biz_date_offset_days),
    enabled: Number(r.enabled) === 1,
    // Not set by the definition: null, and the scheduler's AX_DEPENDENCY_TIMEOUT_S applies (#47).
    dependencyTimeoutSeconds: Number(r.dependency_timeout_default) === 1 ? null : Number(r.dependency_timeout_s),
    calendar: r.calendar,
    jitterSeconds: Number(r.jitter_s),
    pauseAfterFailures: r.pause_after_failures === null ? null : Number(r.pause_after_failures),
    sla: slaOf(r.sla_start_s, r.sla_finish_s),
  };
}

/** `memo`: the definition may come from (and go to) definition-memo.ts; only for the full schedule check. */
function recordOf(r: TaskRow, schedule: Record<string, unknown>, memo: boolean): TaskRecord {
  const parse = (): TaskDefinition => parseTaskDefinitionOrThrow(definitionInput(r, schedule));
  const definition = memo ? memoizedDefinition(definitionColumnsOf(r), parse) : parse();
  return resourceOf(r, definition);
}

/** The record of a row around its definition. */
function resourceOf(r: TaskRow, definition: TaskDefinition): TaskRecord {
  return {
    id: String(r.id),
    definition,
    version: Number(r.version),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    lastFireTime: r.last_fire_time,
    nextFireTime: r.next_fire_time,
    skippedCount: Number(r.skipped_count),
    coalescedCount: Number(r.coalesced_count),
    pausedReason: r.paused_reason ?? null,
    calendarSkippedCount: Number(r.calendar_skipped_count),
    managedBy: r.managed_by ?? null,
  };
}

function slaOf(startS: number | null, finishS: number | null): TaskDefinition['sla'] {
  if (startS === null && finishS === null) return null;
  return {
    ...(startS === null ? {} : { startWithinSeconds: Number(startS) }),
    ...(finishS === null ? {} : { finishWithinSeconds: Number(finishS) }),
  };
}

/** The definition columns of a row (without `name`), in {@link DEFINITION_COLUMN_NAMES} order. */
function definitionColumns(def: TaskDefinition): Array<string | number | null> {
  return [
    def.description,
    def.team,
    def.owner,
    encodeJson(def.schedule),
    def.schedule.type,
    def.schedule.timezone,
    encodeJson(def.exec),
    encodeJson(def.params),
    encodeJson(def.tags),
    def.priority,
    def.timeoutSeconds,
    encodeJson(def.retry),
    encodeJson(def.misfire),
    typeof def.block === 'object' ? 'queue' : def.block,
    typeof def.block === 'object' ? def.block.queue : null,
    def.maxLatenessSeconds,
    def.route,
    def.bizDateOffsetDays,
    // builds before migration 0016 read this column alone: the old default where none is set
    def.dependencyTimeoutSeconds ?? DEFAULT_DEPENDENCY_TIMEOUT_SECONDS,
    def.dependencyTimeoutSeconds === null ? 1 : 0,
    def.calendar,
    def.jitterSeconds,
    def.pauseAfterFailures,
    def.sla?.startWithinSeconds ?? null,
    def.sla?.finishWithinSeconds ?? null,
    def.enabled ? 1 : 0,
  ];
}

const DEFINITION_COLUMN_NAMES = [
  'description',
  'team',
  'owner',
  'schedule',
  'schedule_type',
  'timezone',
  'exec',
  'params',
  'tags',
  'priority',
  'timeout_s',
  'retry',
  'misfire',
  'block_strategy',
  'block_queue',
  'max_lateness_s',
  'route',
  'biz_date_offset_days',
  'dependency_timeout_s',
  'dependency_timeout_default',
  'calendar',
  'jitter_s',
  'pause_after_failures',
  'sla_start_s',
  'sla_finish_s',
  'enabled',
] as const;

/** One task by name, or null. `forUpdate` locks the row (inside a transaction). */
export async function getTask(db: Queryable, name: string, opts: { forUpdate?: boolean } = {}): Promise<TaskRecord | null> {
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT ${TASK_COLUMNS} FROM task WHERE name = ?${opts.forUpdate === true ? ' FOR UPDATE' : ''}`,
    [name],
  );
  const row = rows[0];
  return row === undefined ? null : taskFromRow(row);
}

/**
 * The team of a task, or null when there is no such task: for a read that only asks whether the
 * caller sees the task (the DAG grid's root, #46), without reading and decoding its definition.
 */
export async function getTaskTeam(db: Queryable, name: string): Promise<string | null> {
  const [rows] = await db.query<RowDataPacket[]>('SELECT team FROM task WHERE name = ?', [name]);
  const row = rows[0];
  return row === undefined ? null : String(row['team']);
}

/** One task by id, or null. */
export async function getTaskById(db: Queryable, id: string): Promise<TaskRecord | null> {
  const [rows] = await db.query<RowDataPacket[]>(`SELECT ${TASK_COLUMNS} FROM task WHERE id = ?`, [id]);
  const row = rows[0];
  return row === undefined ? null : taskFromRow(row);
}

/** Filters and page of {@link listTasks}. */
export interface ListTasksOptions {
  /** Only enabled (true) or disabled (false) tasks. Default: both. */
  enabled?: boolean;
  /** Only tasks carrying this tag. */
  tag?: string;
  /** Substring of the name or description. */
  q?: string;
  /** Only these names. */
  names?: readonly string[];
  /** Only tasks of these teams (`null` or absent: of every team). */
  teams?: readonly string[] | null;
  /** Only tasks carrying this managed-by marker (`axctl apply --source`, migration 0016). */
  managedBy?: string;
  /** Names after this one (keyset cursor: the last name of the previous page). */
  afterName?: string;
  /** Page size. Default: no limit. */
  limit?: number;
  /**
   * Whether parsed definitions may come from and go to the process's memo (definition-memo.ts).
   * Default true. A caller that keeps every definition it reads (the scheduler's cache of
   * 100,000 tasks, each read once per change) gains nothing from it and would keep 4,096 more
   * definitions and build a key per row: false.
   */
  memo?: boolean;
  /**
   * Definitions as stored, without zod, when their shape is today's (see {@link taskFromRow}):
   * for lists and searches that show them (#46). Default false.
   */
  trusted?: boolean;
  /**
   * A row that cannot be read (invalid JSON, a definition that no longer parses) is left out of
   * the list and handed here, instead of failing the whole list. Absent: the list throws
   * {@link StoredTaskUnreadableError}. `index`: the row's place among the rows read (a page
   * decides its cursor on them all).
   */
  onUnreadable?: (error: StoredTaskUnreadableError, index: number) => void;
}

/** Rows → records as {@link ListTasksOptions} asks (trusted or not; unreadable rows left out or thrown). */
function recordsOf(rows: readonly RowDataPacket[], opts: ListTasksOptions): TaskRecord[] {
  const decode = { memo: opts.memo ?? true, trusted: opts.trusted ?? false };
  const out: TaskRecord[] = [];
  for (const [index, row] of rows.entries()) {
    try {
      out.push(taskFromRow(row, decode));
    } catch (err) {
      if (opts.onUnreadable === undefined || !(err instanceof StoredTaskUnreadableError)) throw err;
      opts.onUnreadable(err, index);
    }
  }
  return out;
}

/** Tasks ordered by name. */
export async function listTasks(db: Queryable, opts: ListTasksOptions = {}): Promise<TaskRecord[]> {
  const where: string[] = [];
  const values: unknown[] = [];
  if (opts.enabled !== undefined) {
    where.push('enabled = ?');
    values.push(opts.enabled ? 1 : 0);
  }
  if (opts.tag !== undefined) {
    where.push('JSON_CONTAINS(tags, ?)');
    values.push(encodeJson(opts.tag));
  }
  if (opts.names !== undefined) {
    if (opts.names.length === 0) return [];
    where.push('name IN (?)');
    values.push(opts.names);
  }
  if (opts.teams !== undefined && opts.teams !== null) {
    if (opts.teams.length === 0) return [];
    where.push('team IN (?)');
    values.push(opts.teams);
  }
  if (opts.managedBy !== undefined) {
    where.push('managed_by = ?');
    values.push(opts.managedBy);
  }
  const q = opts.q ?? '';
  if (isIndexedTerm(q)) {
    // A term of 3 characters or more: the substring index (task-text.ts) instead of LIKE over
    // the table in name order, which read 90,000 rows for a name near the end of 100,000.
    const rows = await findTasksByText(db, q, TASK_COLUMNS, { where, values }, { afterName: opts.afterName, limit: opts.limit });
    if (rows !== undefined) return recordsOf(rows, opts);
  }
  if (q !== '') {
    const like = containsPattern(q);
    where.push('(name LIKE ? OR description LIKE ?)');
    values.push(like, like);
  }
  if (opts.afterName !== undefined) {
    where.push('name > ?');
    values.push(opts.afterName);
  }
  const limit = opts.limit === undefined ? '' : ' LIMIT ?';
  if (opts.limit !== undefined) values.push(opts.limit);
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT ${TASK_COLUMNS} FROM task${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY name${limit}`,
    values,
  );
  return recordsOf(rows, opts);
}

/**
 * Creates a task at version 1. `createdAt` (default: the database clock) is also the anchor of
 * a `fixed_rate` schedule without `startAt` (R1).
 * @throws TaskExistsError when the name is taken.
 */
export async function insertTask(db: Queryable, def: TaskDefinition, opts: { createdAt?: Date } & SavedBy = {}): Promise<TaskRecord> {
  const cols = ['name', ...DEFINITION_COLUMN_NAMES, 'version', 'created_at', 'updated_at'];
  const at = opts.createdAt ?? null;
  try {
    await db.query<ResultSetHeader>(
      `INSERT INTO task (${cols.join(', ')})
       VALUES (?, ${DEFINITION_COLUMN_NAMES.map(() => '?').join(', ')}, 1,
               COALESCE(?, CURRENT_TIMESTAMP(3)), COALESCE(?, CURRENT_TIMESTAMP(3)))`,
      [def.name, ...definitionColumns(def), at, at],
    );
  } catch (err) {
    if (isDuplicateKeyError(err)) throw new TaskExistsError(def.name);
    if (isMissingParentError(err)) throw new TeamMissingError(def.team);
    throw err;
  }
  await indexTaskText(db, def.name, def.description);
  const created = await getTask(db, def.name);
  if (created === null) throw new StoreError(`task ${def.name} vanished right after its insert`);
  await recordTaskVersion(db, created, opts.actor ?? null, opts.createdAt);
  return created;
}

/**
 * Replaces the definition of `def.name` when its current version is `expectedVersion`, and
 * bumps the version. The watermark stays: the new schedule continues from it.
 * @throws TaskVersionConflictError when the task is gone or at another version.
 */
export async function replaceTask(db: Queryable, def: TaskDefinition, expectedVersion: number, opts: SavedBy = {}): Promise<TaskRecord> {
  const before = await getTask(db, def.name);
  if (before !== null && before.version === expectedVersion) await recordVersionBeingReplaced(db, before);
  // A new schedule (or a re-enable) takes effect from now: the slots of the new schedule
  // before the edit are not missed slots (misfire) and not holes to fill (R2).
  const restart =
    before !== null &&
    (JSON.stringify(before.definition.schedule) !== JSON.stringify(def.schedule) || (!before.definition.enabled && def.enabled));
  const update = db.query<ResultSetHeader>(
    // Enabling (from disabled) clears a pause by pauseAfterFailures and its count; assigned
    // before `enabled` (SET runs left to right on both engines).
    `UPDATE task SET paused_reason = CASE WHEN ? = 1 THEN NULL ELSE paused_reason END,
            failures_reset_at = CASE WHEN enabled = 0 AND ? = 1 THEN CURRENT_TIMESTAMP(3) ELSE failures_reset_at END,
            ${DEFINITION_COLUMN_NAMES.map((c) => `${c} = ?`).join(', ')},
            version = version + 1, updated_at = CURRENT_TIMESTAMP(3)${restart ? `,
            last_fire_time = CASE WHEN last_fire_time IS NULL OR last_fire_time < CURRENT_TIMESTAMP(3)
                                  THEN CURRENT_TIMESTAMP(3) ELSE last_fire_time END` : ''}
      WHERE name = ? AND version = ?`,
    [def.enabled ? 1 : 0, def.enabled ? 1 : 0, ...definitionColumns(def), def.name, expectedVersion],
  );
  const [result] = await update.catch((err: unknown) => {
    throw isMissingParentError(err) ? new TeamMissingError(def.team) : err;
  });
  if (result.affectedRows !== 1) {
    const current = await getTask(db, def.name);
    throw new TaskVersionConflictError(def.name, expectedVersion, current?.version ?? null);
  }
  await indexTaskText(db, def.name, def.description, { textChanged: before?.definition.description !== def.description });
  await withdrawPrecreatedSlots(db, def.name);
  if (before !== null && before.definition.team !== def.team) await forgetRunsOfTask(db, def.name);
  const updated = await getTask(db, def.name);
  if (updated === null) throw new TaskVersionConflictError(def.name, expectedVersion, null);
  await recordTaskVersion(db, updated, opts.actor ?? null);
  return updated;
}

/**
 * R3 for slots created ahead of time (the scheduler's `precreateMs`): instances of this task
 * whose slot time has not come yet and that never left PENDING are withdrawn — deleted with
 * their events, as if the scheduler had not reached them yet — so an edit, a disable or a
 * delete never leaves a slot of the old definition behind. Call it in the transaction of the
 * change; returns how many were withdrawn. The scheduler re-creates the slots of the new
 * definition (its version guard refuses the old one's).
 */
export async function withdrawPrecreatedSlots(db: Queryable, taskName: string): Promise<number> {
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT id FROM task_instance
      WHERE task_name = ? AND state = 'PENDING' AND \`trigger\` = 'schedule' AND dispatch_count = 0
        AND expected_time > NOW(3)
      FOR UPDATE`,
    [taskName],
  );
  const ids = rows.map((r) => String(r.id));
  if (ids.length === 0) return 0;
  await db.query(`DELETE FROM event_log WHERE instance_id IN (?)`, [ids]);
  const [result] = await db.query<ResultSetHeader>(`DELETE FROM task_instance WHERE id IN (?) AND state = 'PENDING'`, [ids]);
  return result.affectedRows;
}

/**
 * Switches scheduling on or off (bumps the version, so a scheduler holding the old definition
 * can no longer insert its slots, R3). Enabling moves the watermark to now: the slots of the
 * paused period are neither misfires nor holes; it also clears a pause by
 * `pauseAfterFailures` (`paused_reason`) and restarts its count (`failures_reset_at`).
 * Returns the task, or null when it does not exist. A no-op switch (already in that state)
 * changes nothing.
 */
export async function setTaskEnabled(db: Queryable, name: string, enabled: boolean, opts: SavedBy = {}): Promise<TaskRecord | null> {
  const before = await getTask(db, name);
  if (before === null) return null;
  if (before.definition.enabled === enabled) return before; // a no-op switch: no new version
  await recordVersionBeingReplaced(db, before);
  await db.query<ResultSetHeader>(
    // last_fire_time and failures_reset_at are assigned before enabled: both engines evaluate SET left to right.
    `UPDATE task SET last_fire_time = CASE WHEN enabled = 0 AND (last_fire_time IS NULL OR last_fire_time < CURRENT_TIMESTAMP(3))
                                  THEN CURRENT_TIMESTAMP(3) ELSE last_fire_time END,
            failures_reset_at = CASE WHEN enabled = 0 THEN CURRENT_TIMESTAMP(3) ELSE failures_reset_at END,
            paused_reason = NULL,
            enabled = ?, version = version + 1, updated_at = CURRENT_TIMESTAMP(3)
      WHERE name = ? AND enabled <> ?`,
    [enabled ? 1 : 0, name, enabled ? 1 : 0],
  );
  if (!enabled) await withdrawPrecreatedSlots(db, name);
  const after = await getTask(db, name);
  if (after !== null && after.version !== before.version) await recordTaskVersion(db, after, opts.actor ?? null);
  return after;
}

/** {@link setTaskEnabled} true. */
export function enableTask(db: Queryable, name: string, opts: SavedBy = {}): Promise<TaskRecord | null> {
  return setTaskEnabled(db, name, true, opts);
}

/** {@link setTaskEnabled} false. */
export function disableTask(db: Queryable, name: string, opts: SavedBy = {}): Promise<TaskRecord | null> {
  return setTaskEnabled(db, name, false, opts);
}

/**
 * Deletes a task (its edges go with it by foreign key; instances stay, R3). With
 * `expectedVersion`, only that version. Returns whether a row was deleted.
 */
export async function deleteTask(db: Queryable, name: string, expectedVersion?: number): Promise<boolean> {
  const [result] = await db.query<ResultSetHeader>(
    `DELETE FROM task WHERE name = ?${expectedVersion === undefined ? '' : ' AND version = ?'}`,
    expectedVersion === undefined ? [name] : [name, expectedVersion],
  );
  if (result.affectedRows === 1) {
    await withdrawPrecreatedSlots(db, name);
    await forgetRunsOfTask(db, name);
  }
  return result.affectedRows === 1;
}

/**
 * A task was deleted or moved to another team: the live dashboard figures count its past runs
 * for another team (or, deleted, for none but `*`), so the rolled-up days that counted them
 * for the old team are forgotten (stats-rollup.ts): every day from the first it can count in
 * (finding exactly its days would read all its instances). Nothing when it never ran.
 */
async function forgetRunsOfTask(db: Queryable, name: string): Promise<void> {
  const first = await firstDayOfTask(db, name);
  if (first !== null) await forgetRolledUpDaysFrom(db, first);
}

/** A task's parents (`task_edge`) with their rules. */
export interface TaskEdgeRow {
  readonly parent: string;
  readonly child: string;
  readonly rule: 'ALL_SUCCESS' | 'ALL_DONE';
}

/** Every DAG edge (the scheduler keeps them with the definitions). */
export async function listEdges(db: Queryable): Promise<TaskEdgeRow[]> {
  const [rows] = await db.query<Array<RowDataPacket & { parent_task: string; child_task: string; rule: string }>>(
    'SELECT parent_task, child_task, rule FROM task_edge ORDER BY child_task, parent_task',
  );
  return rows.map((r) => ({ parent: r.parent_task, child: r.child_task, rule: r.rule === 'ALL_DONE' ? 'ALL_DONE' : 'ALL_SUCCESS' }));
}

/** An edge with the teams of its two tasks. */
export interface TeamedEdgeRow extends TaskEdgeRow {
  readonly parentTeam: string;
  readonly childTeam: string;
}

/**
 * Every edge with the teams of its two tasks, from the edges and the two task rows each names:
 * the DAG views keep the edges between tasks the caller sees without reading every task (a
 * read of 100,000 definitions per request took seconds, #24).
 */
export async function listEdgesWithTeams(db: Queryable): Promise<TeamedEdgeRow[]> {
  return teamedEdges(db, null);
}

/**
 * The edges (with their tasks' teams) whose parent is one of `parents`, in the order of
 * `listEdgesWithTeams`: a walk of the DAG from one task reads its part through the primary key
 * `(parent_task, child_task)` instead of every edge (2,000 edges per request cost the dag views
 * 30-40 ms each, #24).
 */
export async function listEdgesWithTeamsFrom(db: Queryable, parents: readonly string[]): Promise<TeamedEdgeRow[]> {
  return parents.length === 0 ? [] : teamedEdges(db, parents);
}

/**
 * The edges (with their tasks' teams) of every task reachable from `root`, in the order of
 * `listEdgesWithTeams`, walked in one recursive statement (#46): a walk of one statement per
 * level cost the DAG grid of a 5-task chain six round trips. `teams` (null = every team): the
 * walk passes only through edges whose two tasks are of these teams, as a caller that sees only
 * them would walk it; the edges returned are those of every task reached (the caller filters
 * the ones it may show).
 */
export async function listEdgesWithTeamsReachableFrom(db: Queryable, root: string, teams: readonly string[] | null): Promise<TeamedEdgeRow[]> {
  if (teams !== null && teams.length === 0) return [];
  const seen = teams === null ? '' : `
         JOIN task p ON p.name = e.parent_task JOIN task c ON c.name = e.child_task
        WHERE p.team IN (?) AND c.team IN (?)`;
  const [rows] = await db.query<EdgeRow[]>(
    `WITH RECURSIVE reach (name) AS (
       SELECT name FROM task WHERE name = ?
       UNION
       SELECT e.child_task FROM task_edge e JOIN reach r ON e.parent_task = r.name${seen}
     )
     SELECT e.parent_task, e.child_task, e.rule, p.team AS parent_team, c.team AS child_team
       FROM task_edge e JOIN task p ON p.name = e.parent_task JOIN task c ON c.name = e.child_task
      WHERE e.parent_task IN (SELECT name FROM reach)
      ORDER BY e.child_task, e.parent_task`,
    teams === null ? [root] : [root, teams, teams],
  );
  return rows.map(teamedEdgeOf);
}

type EdgeRow = RowDataPacket & { parent_task: string; child_task: string; rule: string; parent_team: string; child_team: string };

function teamedEdgeOf(r: EdgeRow): TeamedEdgeRow {
  return {
    parent: r.parent_task,
    child: r.child_task,
    rule: r.rule === 'ALL_DONE' ? 'ALL_DONE' : 'ALL_SUCCESS',
    parentTeam: r.parent_team,
    childTeam: r.child_team,
  };
}

async function teamedEdges(db: Queryable, parents: readonly string[] | null): Promise<TeamedEdgeRow[]> {
  const [rows] = await db.query<EdgeRow[]>(
    `SELECT e.parent_task, e.child_task, e.rule, p.team AS parent_team, c.team AS child_team
       FROM task_edge e JOIN task p ON p.name = e.parent_task JOIN task c ON c.name = e.child_task${parents === null ? '' : `
      WHERE e.parent_task IN (?)`}
      ORDER BY e.child_task, e.parent_task`,
    parents === null ? [] : [parents],
  );
  return rows.map(teamedEdgeOf);
}

/** Names of the tasks of `teams` (null = every team), by name: the name column only. */
export async function listTaskNames(db: Queryable, teams: readonly string[] | null): Promise<string[]> {
  if (teams !== null && teams.length === 0) return [];
  const [rows] = await db.query<Array<RowDataPacket & { name: string }>>(
    `SELECT name FROM task${teams === null ? '' : ' WHERE team IN (?)'} ORDER BY name`,
    teams === null ? [] : [teams],
  );
  return rows.map((r) => r.name);
}

/**
 * Marks tasks as managed by an import's marker (`axctl apply --source`, #47), or unmarks them
 * (null). Only the marker moves: not a definition save (no version, no `updated_at`).
 */
export async function setTasksManagedBy(db: Queryable, names: readonly string[], managedBy: string | null): Promise<void> {
  if (names.length === 0) return;
  await db.query('UPDATE task SET managed_by = ? WHERE name IN (?) AND NOT (managed_by <=> ?)', [managedBy, names, managedBy]);
}
