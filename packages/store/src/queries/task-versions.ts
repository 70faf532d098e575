/**
 * `task_version`: every saved definition of a task (#47 "Task versions", migration 0015).
 *
 * Every write that bumps `task.version` records the definition it saved, in its own
 * transaction: create, replace (PUT, import, rollback), enable/disable, a pause by
 * `pauseAfterFailures`, a calendar change (the definition is the same, the version is not,
 * and an instance names the version it was created from). Before a write replaces a version
 * that has no row (a task saved before 0015, or by an older build), that version is recorded
 * first with its `updated_at` and no actor, so history starts at the last pre-0015 definition.
 */
import type { RowDataPacket } from 'mysql2';
import { parseTaskDefinitionOrThrow, type TaskDefinition } from '@ax/core';
import { decodeJson, encodeJson } from '../json.js';
import type { Queryable } from '../schema-version.js';
import type { TaskRecord } from './tasks.js';

/**
 * How many versions of a task are kept: the newest ones; a save prunes older rows in its
 * transaction. Documented in docs/admin-api.md ("Task versions").
 */
export const TASK_VERSIONS_KEPT = 100;

/** One saved definition. */
export interface TaskVersionRecord {
  readonly version: number;
  readonly at: Date;
  /** Token name of the saver; null = the system (or saved before versions were recorded). */
  readonly actor: string | null;
  readonly definition: TaskDefinition;
}

/**
 * Records `task` (as just saved) as its version by `actor`, and prunes the versions beyond
 * {@link TASK_VERSIONS_KEPT}. `at`: default the database clock. A repeat is a no-op.
 */
export async function recordTaskVersion(db: Queryable, task: TaskRecord, actor: string | null, at?: Date): Promise<void> {
  await db.query(
    `INSERT IGNORE INTO task_version (task_id, version, definition, actor, at) VALUES (?, ?, ?, ?, COALESCE(?, CURRENT_TIMESTAMP(3)))`,
    [task.id, task.version, encodeJson(task.definition), actor, at ?? null],
  );
  const [oldest] = await db.query<Array<RowDataPacket & { version: number }>>(
    'SELECT version FROM task_version WHERE task_id = ? ORDER BY version DESC LIMIT 1 OFFSET ?',
    [task.id, TASK_VERSIONS_KEPT],
  );
  const cut = oldest[0]?.version;
  if (cut !== undefined) await db.query('DELETE FROM task_version WHERE task_id = ? AND version <= ?', [task.id, cut]);
}

/**
 * Call before a write that replaces `before` (the task as read): records it when it has no row
 * yet (saved before migration 0015), at its `updatedAt` and without an actor.
 */
export async function recordVersionBeingReplaced(db: Queryable, before: TaskRecord): Promise<void> {
  await recordTaskVersion(db, before, null, before.updatedAt);
}

type VersionRow = RowDataPacket & { version: number; at: Date; actor: string | null; definition: unknown };

function versionFromRow(r: VersionRow): TaskVersionRecord {
  // Re-validated through core's schema: a row saved by an older build gets today's defaults.
  return { version: Number(r.version), at: r.at, actor: r.actor, definition: parseTaskDefinitionOrThrow(decodeJson(r.definition)) };
}

/** The current definition as a version, for a task whose current version has no row (see the file comment). */
function currentAsVersion(task: TaskRecord): TaskVersionRecord {
  return { version: task.version, at: task.updatedAt, actor: null, definition: task.definition };
}

/** Versions of `task`, newest first, below `beforeVersion` when given, at most `limit`. */
export async function listTaskVersions(
  db: Queryable,
  task: TaskRecord,
  opts: { beforeVersion?: number; limit: number },
): Promise<TaskVersionRecord[]> {
  const [rows] = await db.query<VersionRow[]>(
    `SELECT version, at, actor, definition FROM task_version
      WHERE task_id = ?${opts.beforeVersion === undefined ? '' : ' AND version < ?'}
      ORDER BY version DESC LIMIT ?`,
    opts.beforeVersion === undefined ? [task.id, opts.limit] : [task.id, opts.beforeVersion, opts.limit],
  );
  const out = rows.map(versionFromRow);
  const firstPage = opts.beforeVersion === undefined || opts.beforeVersion > task.version;
  if (firstPage && out[0]?.version !== task.version) return [currentAsVersion(task), ...out].slice(0, opts.limit);
  return out;
}

/** One version of `task`, or null when it is not kept (never saved, or pruned). */
export async function getTaskVersion(db: Queryable, task: TaskRecord, version: number): Promise<TaskVersionRecord | null> {
  const [rows] = await db.query<VersionRow[]>('SELECT version, at, actor, definition FROM task_version WHERE task_id = ? AND version = ?', [task.id, version]);
  const row = rows[0];
  if (row !== undefined) return versionFromRow(row);
  return version === task.version ? currentAsVersion(task) : null;
}
