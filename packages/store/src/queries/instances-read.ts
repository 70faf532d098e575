/**
 * Reading `task_instance`, `task_execution` and `event_log` for people (admin API): one
 * instance, filtered lists newest first, the run log and the events of an instance.
 */
import type { RowDataPacket } from 'mysql2';
import type { InstanceState } from '@ax/core';
import { decodeJson, decodeJsonNullable } from '../json.js';
import type { Queryable } from '../schema-version.js';

/** An instance as stored. */
export interface InstanceRecord {
  readonly id: string;
  readonly taskId: string;
  readonly taskName: string;
  readonly expectedTime: Date;
  /** `YYYY-MM-DD`. */
  readonly bizDate: string;
  readonly trigger: string;
  readonly runNo: number;
  readonly state: InstanceState;
  readonly reason: string | null;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly priority: number;
  readonly params: Record<string, unknown>;
  readonly workerId: string | null;
  readonly currentExecutionId: string | null;
  readonly rerunBatchId: string | null;
  /**
   * The task version its latest dispatch sent (#47; before a dispatch, the one it was created or
   * re-run from); null before migration 0015.
   */
  readonly taskVersion: number | null;
  /** The run's W3C `traceparent` (#48); null before its first dispatch or migration 0017. */
  readonly traceParent: string | null;
  readonly dueAt: Date;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly endedAt: Date | null;
  /**
   * The instance's team: its task's team when the instance was made ({@link instanceTeamSql});
   * null for a row without one whose task was deleted.
   */
  readonly team: string | null;
}

/**
 * SQL of the team of instance row `alias` (#45, docs/teams.md "Instances and moved tasks"): the
 * team written on the row when it was made (migration 0010: every insert path copies its task's
 * team then), so a task moved to another team leaves its earlier runs with the team they ran
 * for. A row without one (written by a build before 0010 during a rolling upgrade) has its
 * task's team now; the instance of a deleted task then has none (only `*` tokens see it). Every
 * read that shows or checks an instance's team takes it from here, so the list, the detail,
 * logs, reruns and stats never disagree about whose an instance is.
 */
export function instanceTeamSql(alias: string): string {
  return `COALESCE(${alias}.team, (SELECT t.team FROM task t WHERE t.id = ${alias}.task_id))`;
}

/** The columns of an instance row, in select order. */
export const INSTANCE_COLUMNS = `id, task_id, task_name, expected_time, biz_date, \`trigger\`, run_no, state, reason, attempt,
  max_attempts, priority, params, worker_id, current_execution_id, rerun_batch_id, task_version, trace_parent, due_at, created_at, started_at, ended_at,
  ${instanceTeamSql('task_instance')} AS team`;

/**
 * The team filter of instance reads: instances whose team ({@link instanceTeamSql}) is one of
 * `teams`, as SQL with placeholders and its values; empty for `null` (every team). `alias` is
 * the name of `task_instance` in the statement. Written so `task_instance.team` can be read
 * from `idx_instance_team`; the task is looked up only for rows without a team.
 */
export function instanceTeamFilter(teams: readonly string[] | null | undefined, opts: { alias?: string } = {}): { sql: string; values: unknown[] } | null {
  if (teams === null || teams === undefined) return null;
  if (teams.length === 0) return { sql: 'FALSE', values: [] };
  const alias = opts.alias ?? 'task_instance';
  return {
    sql: `(${alias}.team IN (?) OR (${alias}.team IS NULL AND (SELECT t.team FROM task t WHERE t.id = ${alias}.task_id) IN (?)))`,
    values: [teams, teams],
  };
}

/** `YYYY-MM-DD` of a DATE column read as UTC midnight. */
export function bizDateText(value: Date | string): string {
  return typeof value === 'string' ? value.slice(0, 10) : value.toISOString().slice(0, 10);
}

/** A row → a record. */
export function instanceFromRow(row: RowDataPacket): InstanceRecord {
  const r = row as RowDataPacket & Record<string, unknown>;
  return {
    id: String(r['id']),
    taskId: String(r['task_id']),
    taskName: String(r['task_name']),
    expectedTime: r['expected_time'] as Date,
    bizDate: bizDateText(r['biz_date'] as Date),
    trigger: String(r['trigger']),
    runNo: Number(r['run_no']),
    state: String(r['state']) as InstanceState,
    reason: (r['reason'] as string | null) ?? null,
    attempt: Number(r['attempt']),
    maxAttempts: Number(r['max_attempts']),
    priority: Number(r['priority']),
    params: decodeJson<Record<string, unknown>>(r['params']),
    workerId: (r['worker_id'] as string | null) ?? null,
    currentExecutionId: (r['current_execution_id'] as string | null) ?? null,
    rerunBatchId: r['rerun_batch_id'] == null ? null : String(r['rerun_batch_id']),
    taskVersion: r['task_version'] == null ? null : Number(r['task_version']),
    traceParent: (r['trace_parent'] as string | null) ?? null,
    dueAt: r['due_at'] as Date,
    createdAt: r['created_at'] as Date,
    startedAt: (r['started_at'] as Date | null) ?? null,
    endedAt: (r['ended_at'] as Date | null) ?? null,
    team: r['team'] == null ? null : String(r['team']),
  };
}

/** One instance, or null. `forUpdate` locks the row (inside a transaction). */
export async function getInstance(db: Queryable, id: string, opts: { forUpdate?: boolean } = {}): Promise<InstanceRecord | null> {
  if (!/^\d{1,20}$/.test(id)) return null;
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT ${INSTANCE_COLUMNS} FROM task_instance WHERE id = ?${opts.forUpdate === true ? ' FOR UPDATE' : ''}`,
    [id],
  );
  const row = rows[0];
  return row === undefined ? null : instanceFromRow(row);
}

/** Filters and page of {@link listInstances}. */
export interface ListInstancesOptions {
  taskName?: string;
  states?: readonly string[];
  bizDate?: string;
  /** Instances whose current (latest) execution ran on this worker (`worker_id`). */
  workerId?: string;
  /** Instances created by one of these triggers (`schedule`, `manual`, `dependency`, `rerun`). */
  triggers?: readonly string[];
  /** Instances whose expected time is at or after this. */
  from?: Date;
  /** Instances whose expected time is before this. */
  to?: Date;
  /** Keyset cursor: instances with a smaller id. */
  beforeId?: string;
  /** Only instances of tasks of these teams; null/absent = every instance. */
  teams?: readonly string[] | null;
  limit: number;
}

/** Whether a list is filtered by its slot window only (and the cursor): every test answered by idx_instance_expected. */
function windowOnly(opts: ListInstancesOptions): boolean {
  if (opts.from === undefined && opts.to === undefined) return false;
  if (opts.teams !== null && opts.teams !== undefined && opts.teams.length > 0) return false;
  return opts.taskName === undefined && opts.bizDate === undefined && opts.workerId === undefined && (opts.states ?? []).length === 0 && (opts.triggers ?? []).length === 0;
}

/**
 * The newest `limit` instances of `teams` matching `where` (its `values`), when no other index
 * narrows the list (#45): per team, its newest rows from `idx_instance_team`, where one team's
 * entries lie in id order (InnoDB appends the primary key), so each part stops after about
 * `limit` matching rows however small or old the team's share; plus the rows without a team
 * (the same index's NULL entries) whose task is of one of the teams; merged newest first.
 * One `team IN (…)` range instead would read and sort every row of the teams (500,000 per team
 * on the history bench), and a backward walk of the primary key every row of the other teams.
 */
function teamsPage(where: readonly string[], values: readonly unknown[], teams: readonly string[], limit: number): { sql: string; values: unknown[] } {
  const and = where.map((w) => ` AND ${w}`).join('');
  const parts = [...new Set(teams)].map((team) => ({
    sql: `(SELECT ${INSTANCE_COLUMNS} FROM task_instance WHERE team = ?${and} ORDER BY id DESC LIMIT ?)`,
    values: [team, ...values, limit],
  }));
  parts.push({
    sql: `(SELECT ${INSTANCE_COLUMNS} FROM task_instance WHERE team IS NULL${and}
            AND (SELECT t.team FROM task t WHERE t.id = task_instance.task_id) IN (?) ORDER BY id DESC LIMIT ?)`,
    values: [...values, teams, limit],
  });
  return {
    sql: `SELECT * FROM (${parts.map((p) => p.sql).join(' UNION ALL ')}) page ORDER BY id DESC LIMIT ?`,
    values: [...parts.flatMap((p) => p.values), limit],
  };
}

/** Instances newest first (by id: creation order). */
export async function listInstances(db: Queryable, opts: ListInstancesOptions): Promise<InstanceRecord[]> {
  const where: string[] = [];
  const values: unknown[] = [];
  if (opts.taskName !== undefined) {
    where.push('task_name = ?');
    values.push(opts.taskName);
  }
  if (opts.states !== undefined && opts.states.length > 0) {
    where.push('state IN (?)');
    values.push(opts.states);
  }
  if (opts.bizDate !== undefined) {
    where.push('biz_date = ?');
    values.push(opts.bizDate);
  }
  if (opts.workerId !== undefined) {
    where.push('worker_id = ?');
    values.push(opts.workerId);
  }
  if (opts.triggers !== undefined && opts.triggers.length > 0) {
    where.push('`trigger` IN (?)');
    values.push(opts.triggers);
  }
  if (opts.from !== undefined) {
    where.push('expected_time >= ?');
    values.push(opts.from);
  }
  if (opts.to !== undefined) {
    where.push('expected_time < ?');
    values.push(opts.to);
  }
  if (opts.beforeId !== undefined) {
    where.push('id < ?');
    values.push(opts.beforeId);
  }
  // With a task, day, window or worker, that index drives the read and the team is a filter;
  // alone (or with a state or trigger), the team decides where the page is found.
  const narrowed = opts.taskName !== undefined || opts.bizDate !== undefined || opts.from !== undefined || opts.to !== undefined || opts.workerId !== undefined;
  if (!narrowed && opts.teams !== null && opts.teams !== undefined && opts.teams.length > 0) {
    const page = teamsPage(where, values, opts.teams, opts.limit);
    const [rows] = await db.query<RowDataPacket[]>(page.sql, page.values);
    return rows.map(instanceFromRow);
  }
  const team = instanceTeamFilter(opts.teams);
  if (team !== null) {
    where.push(team.sql);
    values.push(...team.values);
  }
  values.push(opts.limit);
  // A day's page from the day's index (either: with a task name the (biz_date, task_name) one is
  // also in id order). Left to itself, MariaDB takes the primary key backwards for some days,
  // expecting the day's rows spread over the table: on 5,000,000 rows over 90 days an old day's
  // page then read millions of newer rows (10 s, #24).
  const hint = opts.bizDate !== undefined ? ' FORCE INDEX (idx_instance_biz_day, idx_instance_biz_date)' : '';
  const filter = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  const [rows] = await db.query<RowDataPacket[]>(
    windowOnly(opts)
      ? // A slot window's page: its ids from idx_instance_expected alone (the index holds the id),
        // sorted, and only the page's rows read. Read directly, every row of the window was read
        // before the sort kept 51: an hour is 2,300 rows on the bench's history (#24).
        `SELECT ${INSTANCE_COLUMNS} FROM task_instance
          WHERE id IN (SELECT id FROM (SELECT id FROM task_instance ${filter} ORDER BY id DESC LIMIT ?) page)
          ORDER BY id DESC`
      : `SELECT ${INSTANCE_COLUMNS} FROM task_instance${hint} ${filter}
          ORDER BY id DESC LIMIT ?`,
    values,
  );
  return rows.map(instanceFromRow);
}

/** Every instance of these tasks (`null` = of every task) on a business date, oldest slot first. */
export async function instancesOfBizDate(
  db: Queryable,
  taskNames: readonly string[] | null,
  bizDate: string,
  opts: { forUpdate?: boolean; states?: readonly string[]; teams?: readonly string[] | null } = {},
): Promise<InstanceRecord[]> {
  if (taskNames !== null && taskNames.length === 0) return [];
  const where = ['biz_date = ?'];
  const values: unknown[] = [bizDate];
  const team = instanceTeamFilter(opts.teams);
  if (team !== null) {
    where.push(team.sql);
    values.push(...team.values);
  }
  if (taskNames !== null) {
    where.push('task_name IN (?)');
    values.push(taskNames);
  }
  if (opts.states !== undefined && opts.states.length > 0) {
    where.push('state IN (?)');
    values.push(opts.states);
  }
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT ${INSTANCE_COLUMNS} FROM task_instance WHERE ${where.join(' AND ')}
      ORDER BY expected_time, id${opts.forUpdate === true ? ' FOR UPDATE' : ''}`,
    values,
  );
  return rows.map(instanceFromRow);
}

/** Instances of one task at these slot times (epoch ms), keyed by ms. */
export async function instancesAtSlots(
  db: Queryable,
  taskName: string,
  expectedMs: readonly number[],
  opts: { forUpdate?: boolean } = {},
): Promise<Map<number, InstanceRecord>> {
  const out = new Map<number, InstanceRecord>();
  for (let i = 0; i < expectedMs.length; i += 500) {
    const chunk = expectedMs.slice(i, i + 500).map((ms) => new Date(ms));
    const [rows] = await db.query<RowDataPacket[]>(
      `SELECT ${INSTANCE_COLUMNS} FROM task_instance WHERE task_name = ? AND expected_time IN (?)${opts.forUpdate === true ? ' FOR UPDATE' : ''}`,
      [taskName, chunk],
    );
    for (const row of rows) {
      const rec = instanceFromRow(row);
      out.set(rec.expectedTime.getTime(), rec);
    }
  }
  return out;
}

/** One attempt's dispatch as stored (the run log). */
export interface ExecutionRecord {
  readonly executionId: string;
  readonly instanceId: string;
  readonly attempt: number;
  readonly runNo: number;
  readonly shardIndex: number | null;
  readonly shardTotal: number | null;
  readonly workerId: string;
  readonly state: string;
  readonly reason: string | null;
  readonly dispatchedAt: Date;
  readonly ackedAt: Date | null;
  readonly startedAt: Date | null;
  readonly endedAt: Date | null;
  readonly exitCode: number | null;
  readonly outputTail: string | null;
  readonly outputTruncated: boolean;
  readonly error: string | null;
  readonly result: unknown;
}

const EXECUTION_COLUMNS = `execution_id, instance_id, attempt, run_no, shard_index, shard_total, worker_id, state, reason,
  dispatched_at, acked_at, started_at, ended_at, exit_code, output_tail, output_truncated, error, result`;

function executionFromRow(row: RowDataPacket): ExecutionRecord {
  const r = row as RowDataPacket & Record<string, unknown>;
  return {
    executionId: String(r['execution_id']),
    instanceId: String(r['instance_id']),
    attempt: Number(r['attempt']),
    runNo: Number(r['run_no']),
    shardIndex: r['shard_index'] == null ? null : Number(r['shard_index']),
    shardTotal: r['shard_total'] == null ? null : Number(r['shard_total']),
    workerId: String(r['worker_id']),
    state: String(r['state']),
    reason: (r['reason'] as string | null) ?? null,
    dispatchedAt: r['dispatched_at'] as Date,
    ackedAt: (r['acked_at'] as Date | null) ?? null,
    startedAt: (r['started_at'] as Date | null) ?? null,
    endedAt: (r['ended_at'] as Date | null) ?? null,
    exitCode: r['exit_code'] == null ? null : Number(r['exit_code']),
    outputTail: (r['output_tail'] as string | null) ?? null,
    outputTruncated: Number(r['output_truncated']) === 1,
    error: (r['error'] as string | null) ?? null,
    result: decodeJsonNullable(r['result']),
  };
}

/** The executions of an instance, oldest first. */
export async function listExecutions(db: Queryable, instanceId: string): Promise<ExecutionRecord[]> {
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT ${EXECUTION_COLUMNS} FROM task_execution WHERE instance_id = ? ORDER BY id`,
    [instanceId],
  );
  return rows.map(executionFromRow);
}

/** One execution by its execution id, or null. */
export async function getExecution(db: Queryable, executionId: string): Promise<ExecutionRecord | null> {
  const [rows] = await db.query<RowDataPacket[]>(`SELECT ${EXECUTION_COLUMNS} FROM task_execution WHERE execution_id = ?`, [executionId]);
  const row = rows[0];
  return row === undefined ? null : executionFromRow(row);
}

/** An event as stored. */
export interface EventRecord {
  readonly id: string;
  readonly type: string;
  readonly at: Date;
  readonly executionId: string | null;
  readonly workerId: string | null;
  readonly message: string | null;
  readonly data: Record<string, unknown> | null;
}

/** The events of an instance in order (at most `limit`, the latest ones). */
export async function listInstanceEvents(db: Queryable, instanceId: string, limit = 1000): Promise<EventRecord[]> {
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT id, type, at, execution_id, worker_id, message, data FROM
       (SELECT id, type, at, execution_id, worker_id, message, data FROM event_log WHERE instance_id = ? ORDER BY id DESC LIMIT ?) e
      ORDER BY id`,
    [instanceId, limit],
  );
  return rows.map((row) => {
    const r = row as RowDataPacket & Record<string, unknown>;
    return {
      id: String(r['id']),
      type: String(r['type']),
      at: r['at'] as Date,
      executionId: (r['execution_id'] as string | null) ?? null,
      workerId: (r['worker_id'] as string | null) ?? null,
      message: (r['message'] as string | null) ?? null,
      data: decodeJsonNullable<Record<string, unknown>>(r['data']),
    };
  });
}

/** One cell of the DAG grid: the latest slot of a task on a business date, with its current run's duration. */
export interface GridCellRecord {
  readonly taskName: string;
  /** `YYYY-MM-DD`. */
  readonly bizDate: string;
  readonly instanceId: string;
  readonly state: InstanceState;
  readonly expectedTime: Date;
  /** `endedAt − startedAt` of its current execution (reported start, else ACK), ms; null until both are known. */
  readonly durationMs: number | null;
  /** How many slots the task has on that business date (several cron fires a day). */
  readonly slots: number;
}

/**
 * The DAG grid of these tasks over their `days` latest business dates (at or before `toBizDate`
 * when given): the dates, newest first, and per (task, date) its latest slot. One statement:
 * the dates come from a derived table over `idx_instance_biz_date`, the durations from each
 * instance's current execution. `teams` filters as in {@link listInstances}.
 */
export async function dagGridCells(
  db: Queryable,
  opts: { taskNames: readonly string[]; days: number; toBizDate?: string; teams?: readonly string[] | null },
): Promise<{ bizDates: string[]; cells: GridCellRecord[] }> {
  if (opts.taskNames.length === 0 || (opts.teams !== null && opts.teams !== undefined && opts.teams.length === 0)) return { bizDates: [], cells: [] };
  const teamOf = (alias: string): string => {
    const team = instanceTeamFilter(opts.teams, { alias });
    return team === null ? '' : ` AND ${team.sql}`;
  };
  const teamValues = instanceTeamFilter(opts.teams)?.values ?? [];
  const toSql = opts.toBizDate === undefined ? '' : ' AND biz_date <= ?';
  const toValues = opts.toBizDate === undefined ? [] : [opts.toBizDate];
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT i.id, i.task_name, i.biz_date, i.state, i.expected_time,
            COALESCE(x.started_at, x.acked_at) AS run_started_at, x.ended_at AS run_ended_at
       FROM (SELECT DISTINCT biz_date FROM task_instance
              WHERE task_name IN (?)${toSql}${teamOf('task_instance')}
              ORDER BY biz_date DESC LIMIT ?) d
       JOIN task_instance i ON i.biz_date = d.biz_date
       LEFT JOIN task_execution x ON x.id = (SELECT MAX(y.id) FROM task_execution y
            WHERE y.instance_id = i.id AND y.run_no = i.run_no
              AND (i.current_execution_id IS NULL OR y.execution_id = i.current_execution_id))
      WHERE i.task_name IN (?)${teamOf('i')}
      ORDER BY i.biz_date DESC, i.task_name, i.expected_time DESC, i.id DESC`,
    [opts.taskNames, ...toValues, ...teamValues, opts.days, opts.taskNames, ...teamValues],
  );
  const dates: string[] = [];
  const cells = new Map<string, { cell: GridCellRecord; slots: number }>();
  for (const r of rows) {
    const bizDate = bizDateText(r['biz_date'] as Date);
    if (dates[dates.length - 1] !== bizDate) dates.push(bizDate);
    const key = `${String(r['task_name'])}\n${bizDate}`;
    const seen = cells.get(key);
    if (seen !== undefined) {
      seen.slots += 1;
      continue;
    }
    const startedAt = (r['run_started_at'] as Date | null) ?? null;
    const endedAt = (r['run_ended_at'] as Date | null) ?? null;
    cells.set(key, {
      slots: 1,
      cell: {
        taskName: String(r['task_name']),
        bizDate,
        instanceId: String(r['id']),
        state: String(r['state']) as InstanceState,
        expectedTime: r['expected_time'] as Date,
        durationMs: startedAt === null || endedAt === null ? null : Math.max(0, endedAt.getTime() - startedAt.getTime()),
        slots: 1,
      },
    });
  }
  return { bizDates: dates, cells: [...cells.values()].map(({ cell, slots }) => ({ ...cell, slots })) };
}
