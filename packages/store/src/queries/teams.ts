/**
 * `team`: the tenant boundary (ADMIN-API.md "Teams"). A task names its team (`task.team`, a
 * foreign key), so creating a task in a missing team and deleting a team that owns tasks are
 * each refused by the database itself, whatever runs concurrently.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { StoreError, isDuplicateKeyError, isNoSuchTableError } from '../errors.js';
import { decodeJsonNullable, encodeJsonNullable } from '../json.js';
import type { Queryable } from '../schema-version.js';

/** A team as stored. */
export interface TeamRecord {
  readonly name: string;
  readonly description: string;
  /** Most DISPATCHED or RUNNING instances at once; null = no limit. */
  readonly maxRunning: number | null;
  /**
   * `AX_HTTP_EXECUTOR_ALLOW` entries narrowing the global list for the team's `http` tasks
   * (migration 0011); null = the global list as it is (also on a schema before 0011).
   */
  readonly httpAllow: readonly string[] | null;
  /** Share of contended slots (R23), at least 1; default 1. */
  readonly weight: number;
  readonly keyVersion: number;
  readonly previousKeyValidUntil: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A create named a team that exists already. */
export class TeamExistsError extends StoreError {
  constructor(readonly team: string) {
    super(`team ${JSON.stringify(team)} already exists`);
    this.name = 'TeamExistsError';
  }
}

/** A delete named a team that still owns tasks. */
export class TeamInUseError extends StoreError {
  constructor(readonly team: string) {
    super(`team ${JSON.stringify(team)} owns tasks`);
    this.name = 'TeamInUseError';
  }
}

type TeamRow = RowDataPacket & {
  name: string;
  description: string;
  max_running: number | null;
  /** Absent on a schema before 0011 (the reads select `*`). */
  http_allow?: unknown;
  /** Migration 0010 (SCHEMA_VERSION_MIN). */
  weight?: number;
  key_version: number;
  previous_key_valid_until: Date | null;
  created_at: Date;
  updated_at: Date;
};

/** `*`: `http_allow` (0011) is read where it exists and missing before (R22). */
const TEAM_COLUMNS = '*';

function httpAllowOf(value: unknown): readonly string[] | null {
  const decoded = decodeJsonNullable<unknown>(value ?? null);
  return Array.isArray(decoded) && decoded.every((e) => typeof e === 'string') ? decoded : null;
}

function teamFromRow(r: TeamRow): TeamRecord {
  return {
    name: r.name,
    description: r.description,
    maxRunning: r.max_running === null ? null : Number(r.max_running),
    httpAllow: httpAllowOf(r.http_allow),
    weight: Number(r.weight ?? 1),
    keyVersion: Number(r.key_version),
    previousKeyValidUntil: r.previous_key_valid_until,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Teams by name; `names` null = every team. */
export async function listTeams(db: Queryable, opts: { names: readonly string[] | null; afterName?: string; limit: number }): Promise<TeamRecord[]> {
  if (opts.names !== null && opts.names.length === 0) return [];
  const where: string[] = [];
  const values: unknown[] = [];
  if (opts.names !== null) {
    where.push('name IN (?)');
    values.push(opts.names);
  }
  if (opts.afterName !== undefined) {
    where.push('name > ?');
    values.push(opts.afterName);
  }
  values.push(opts.limit);
  const [rows] = await db.query<TeamRow[]>(
    `SELECT ${TEAM_COLUMNS} FROM team ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY name LIMIT ?`,
    values,
  );
  return rows.map(teamFromRow);
}

/** One team, or null. */
export async function getTeam(db: Queryable, name: string, opts: { forUpdate?: boolean } = {}): Promise<TeamRecord | null> {
  const [rows] = await db.query<TeamRow[]>(`SELECT ${TEAM_COLUMNS} FROM team WHERE name = ?${opts.forUpdate === true ? ' FOR UPDATE' : ''}`, [name]);
  const row = rows[0];
  return row === undefined ? null : teamFromRow(row);
}

/**
 * The key version a new team of `name` starts at: 1, or one above the last version of a
 * deleted team of that name (`team_key_floor`), so a team created again never gets a key the
 * deleted one had (#44). 1 on a schema before 0011.
 */
async function firstKeyVersion(db: Queryable, name: string): Promise<number> {
  try {
    const [rows] = await db.query<Array<RowDataPacket & { v: number | string | null }>>('SELECT MAX(last_key_version) AS v FROM team_key_floor WHERE name = ?', [name]);
    const last = rows[0]?.v;
    return last === null || last === undefined ? 1 : Number(last) + 1;
  } catch (err) {
    if (isNoSuchTableError(err)) return 1;
    throw err;
  }
}

/**
 * Creates a team at its first key version (1, or above a deleted team's of the same name).
 * @throws TeamExistsError
 */
export async function insertTeam(
  db: Queryable,
  team: { name: string; description: string; maxRunning: number | null; weight?: number; httpAllow?: readonly string[] | null },
): Promise<TeamRecord> {
  try {
    const keyVersion = await firstKeyVersion(db, team.name);
    // http_allow only when set: a schema before 0011 creates teams without it as before
    const withAllow = team.httpAllow !== undefined && team.httpAllow !== null;
    await db.query(
      `INSERT INTO team (name, description, max_running, weight, key_version${withAllow ? ', http_allow' : ''}) VALUES (?, ?, ?, ?, ?${withAllow ? ', ?' : ''})`,
      [team.name, team.description, team.maxRunning, team.weight ?? 1, keyVersion, ...(withAllow ? [encodeJsonNullable(team.httpAllow)] : [])],
    );
  } catch (err) {
    if (isDuplicateKeyError(err)) throw new TeamExistsError(team.name);
    throw err;
  }
  const created = await getTeam(db, team.name);
  if (created === null) throw new StoreError(`team ${team.name} vanished right after its insert`);
  return created;
}

/** Changes the given fields; returns the team, or null when it does not exist. */
export async function updateTeam(
  db: Queryable,
  name: string,
  change: { description?: string; maxRunning?: number | null; weight?: number; httpAllow?: readonly string[] | null },
): Promise<TeamRecord | null> {
  const sets: string[] = ['updated_at = CURRENT_TIMESTAMP(3)'];
  const values: unknown[] = [];
  if (change.description !== undefined) {
    sets.push('description = ?');
    values.push(change.description);
  }
  if (change.maxRunning !== undefined) {
    sets.push('max_running = ?');
    values.push(change.maxRunning);
  }
  if (change.httpAllow !== undefined) {
    sets.push('http_allow = ?');
    values.push(encodeJsonNullable(change.httpAllow));
  }
  if (change.weight !== undefined) {
    sets.push('weight = ?');
    values.push(change.weight);
  }
  await db.query<ResultSetHeader>(`UPDATE team SET ${sets.join(', ')} WHERE name = ?`, [...values, name]);
  return getTeam(db, name);
}

/**
 * Moves a team to its next executor key version; the version before stays valid for
 * `graceSeconds` from now on the database clock (R6). Returns the team, or null.
 */
export async function rotateTeamKey(db: Queryable, name: string, graceSeconds: number): Promise<TeamRecord | null> {
  await db.query<ResultSetHeader>(
    `UPDATE team SET key_version = key_version + 1, previous_key_valid_until = NOW(3) + INTERVAL ? SECOND, updated_at = CURRENT_TIMESTAMP(3) WHERE name = ?`,
    [graceSeconds, name],
  );
  return getTeam(db, name);
}

/**
 * Deletes a team; returns whether it existed. Its last key version is kept in
 * `team_key_floor` (call inside the transaction that deletes): a team created again under the
 * name starts above it (#44). @throws TeamInUseError when it owns tasks (the foreign key of
 * `task.team` refuses the delete).
 */
export async function deleteTeam(db: Queryable, name: string): Promise<boolean> {
  const [rows] = await db.query<Array<RowDataPacket & { key_version: number }>>('SELECT key_version FROM team WHERE name = ? FOR UPDATE', [name]);
  const last = rows[0];
  if (last === undefined) return false;
  try {
    const [result] = await db.query<ResultSetHeader>('DELETE FROM team WHERE name = ?', [name]);
    if (result.affectedRows !== 1) return false;
  } catch (err) {
    if (typeof err === 'object' && err !== null && (err as { errno?: unknown }).errno === 1451) throw new TeamInUseError(name);
    throw err;
  }
  try {
    await db.query(
      `INSERT INTO team_key_floor (name, last_key_version) VALUES (?, ?)
         ON DUPLICATE KEY UPDATE last_key_version = GREATEST(last_key_version, VALUES(last_key_version)), deleted_at = CURRENT_TIMESTAMP(3)`,
      [name, Number(last.key_version)],
    );
  } catch (err) {
    if (!isNoSuchTableError(err)) throw err; // before 0011: no floor, as before
  }
  return true;
}

/**
 * Which of `names` exist. `lock`: the rows are share-locked until the transaction ends, so a
 * concurrent delete of one of them waits for the caller's commit (a token written for a team
 * is then seen by the delete, which takes the team off it).
 */
export async function existingTeams(db: Queryable, names: readonly string[], opts: { lock?: boolean } = {}): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const [rows] = await db.query<Array<RowDataPacket & { name: string }>>(`SELECT name FROM team WHERE name IN (?)${opts.lock === true ? ' LOCK IN SHARE MODE' : ''}`, [names]);
  return new Set(rows.map((r) => r.name));
}
