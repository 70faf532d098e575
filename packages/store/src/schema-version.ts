/**
 * R22: each build accepts a range of schema versions (the highest applied migration), so
 * services can be upgraded one at a time while migrations expand first and contract later.
 * Raise SCHEMA_VERSION_MAX with every new migration this build knows how to use; raise
 * SCHEMA_VERSION_MIN only when the code stops working on an older schema.
 */
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { isNoSuchTableError, SchemaVersionError } from './errors.js';

/**
 * Oldest schema version this build works with. 18: every console sign-in reads and writes
 * `console_session` (migration 0018, #47/#48); migrate before rolling this build out (builds of
 * 15 to 17 keep working on 18: they never name the table). 17: the scheduler's instance insert writes
 * `task_instance.trace_parent` and the claim reads it (migration 0017, #48); builds of 15 and
 * 16 keep working on 17: they never name the column; their instances get a trace at their first
 * dispatch by this build's broker. 16: task reads
 * name `task.managed_by` and `task.dependency_timeout_default` (migration 0016, #47); builds of
 * 15 keep working on 16: they never name the columns and read `dependency_timeout_s`, which still
 * holds 86400 for a task without its own timeout. 15: every save of a task definition writes its
 * `task_version` row and every instance insert writes `task_instance.task_version` (migration
 * 0015, #47); migrate before rolling this build out (builds of 10 to 14 keep working on 15: they
 * never name the table or the column; a definition they save without a version row is recorded
 * by this build's next save of that task, and their instances show `taskVersion: null`). 10: every instance insert writes
 * `task_instance.team` and the claim reads it (migration 0010); migrate before rolling this
 * build out (running builds of 6 to 9 keep working on 10: they never name the column, and the rows
 * they write have a NULL team that this build's reads resolve through the task). 6: the DAG promotion writes `promoted_at` and
 * the dashboard reads `due_time` (migration 0006); the code had needed the columns of 0003–0005
 * (teams, job output, calendars) already while this still said 1, so a service on an older
 * schema failed at its first such statement instead of refusing to start.
 */
export const SCHEMA_VERSION_MIN = 18;
/**
 * Newest schema version this build works with (= its highest migration). 18: the console's
 * sign-in sessions (migration 0018; see SCHEMA_VERSION_MIN). 17: the run's trace
 * context (migration 0017; see SCHEMA_VERSION_MIN). 16: the managed-by marker of imports and the
 * "no own dependency timeout" flag (migration 0016). 15: task versions
 * (migration 0015; see SCHEMA_VERSION_MIN). 14: worker
 * enrollments (migration 0014); below it there are none and workers run unenrolled. 13: why a due
 * instance waits (migration 0013, `task_instance.waiting_*`); on 10 to 12 the backlog scan still
 * counts the backlog (metrics, BACKLOG alert) but stores no reason, and the API shows
 * `waiting: null` (queries/instance-waiting.ts). 12: team alert routes
 * and delivery per route (migration 0012); below it no team has routes and alerts go to the
 * platform webhook alone, as before. 11: team isolation
 * (#44, migration 0011): `team.http_allow`, `team_key_floor` and the teams recorded on
 * `task_edge`; on 6 to 10 a team read finds no `http_allow` (no narrowing, and setting one
 * fails), a deleted team leaves no key floor (a new team of its name starts at version 1, as
 * before) and edges record no teams (every edge creates its child's instances, as before).
 * 10: the instance's team and team weights (migration 0010). 9: task search's
 * substring index (migration 0009); on 6 to 8 nothing writes it and a search reads the task
 * table with LIKE, as before. 8: the dashboard's
 * rolled-up past days (migration 0008); on 6 and 7 every statement on them finds no table and
 * the figures are computed live, as before. 7: the SLA scan's task indexes, which no statement
 * names.
 */
export const SCHEMA_VERSION_MAX = 18;

/** Anything that can run a query: a pool or one of its connections. */
export type Queryable = Pick<Connection, 'query'>;

export interface SchemaVersionRange {
  readonly min: number;
  readonly max: number;
}

/**
 * The highest applied migration version, or `null` when `schema_migrations` is missing or
 * empty (a database nobody migrated).
 */
export async function readSchemaVersion(db: Queryable): Promise<number | null> {
  try {
    const [rows] = await db.query<Array<RowDataPacket & { v: number | string | null }>>(
      'SELECT MAX(version) AS v FROM schema_migrations',
    );
    const v = rows[0]?.v;
    return v === null || v === undefined ? null : Number(v);
  } catch (err) {
    if (isNoSuchTableError(err)) return null;
    throw err;
  }
}

/**
 * Throws {@link SchemaVersionError} unless the database's schema version lies in `range`
 * (default: this build's). Every service calls it at start-up, before its loops run.
 * @returns the schema version found.
 */
export async function assertSchemaSupported(
  db: Queryable,
  range: SchemaVersionRange = { min: SCHEMA_VERSION_MIN, max: SCHEMA_VERSION_MAX },
): Promise<number> {
  const version = await readSchemaVersion(db);
  if (version === null) {
    throw new SchemaVersionError(
      `database has no ax schema (no applied migrations); this build supports versions ` +
        `${range.min}–${range.max}; run \`pnpm migrate\``,
      null,
    );
  }
  if (version < range.min || version > range.max) {
    throw new SchemaVersionError(
      `database schema version ${version} is outside the range ${range.min}–${range.max} ` +
        `this build supports; run \`pnpm migrate\` or upgrade`,
      version,
    );
  }
  return version;
}
