/**
 * `team`: the tenant boundary (ADMIN-API.md "Teams"). A task names its team (`task.team`, a
 * foreign key), so creating a task in a missing team and deleting a team that owns tasks are
 * each refused by the database itself, whatever runs concurrently.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { StoreError, isDuplicateKeyError } from '../errors.js';
import type { Queryable } from '../schema-version.js';

/** A team as stored. */
export interface TeamRecord {
  readonly name: string;
  readonly description: string;
  /** Most DISPATCHED or RUNNING instances at once; null = no limit. */
  readonly maxRunning: number | null;
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
  weight: number;
  key_version: number;
  previous_key_valid_until: Date | null;
  created_at: Date;
  updated_at: Date;
};

const TEAM_COLUMNS = 'name, description, max_running, weight, key_version, previous_key_valid_until, created_at, updated_at';

function teamFromRow(r: TeamRow): TeamRecord {
  return {
    name: r.name,
    description: r.description,
    maxRunning: r.max_running === null ? null : Number(r.max_running),
    weight: Number(r.weight),
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

/** Creates a team at key version 1. @throws TeamExistsError */
export async function insertTeam(db: Queryable, team: { name: string; description: string; maxRunning: number | null; weight?: number }): Promise<TeamRecord> {
  try {
    await db.query('INSERT INTO team (name, description, max_running, weight) VALUES (?, ?, ?, ?)', [team.name, team.description, team.maxRunning, team.weight ?? 1]);
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
  change: { description?: string; maxRunning?: number | null; weight?: number },
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
 * Deletes a team; returns whether it existed. @throws TeamInUseError when it owns tasks (the
 * foreign key of `task.team` refuses the delete).
 */
export async function deleteTeam(db: Queryable, name: string): Promise<boolean> {
  try {
    const [result] = await db.query<ResultSetHeader>('DELETE FROM team WHERE name = ?', [name]);
    return result.affectedRows === 1;
  } catch (err) {
    if (typeof err === 'object' && err !== null && (err as { errno?: unknown }).errno === 1451) throw new TeamInUseError(name);
    throw err;
  }
}

/** Which of `names` exist. */
export async function existingTeams(db: Queryable, names: readonly string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const [rows] = await db.query<Array<RowDataPacket & { name: string }>>('SELECT name FROM team WHERE name IN (?)', [names]);
  return new Set(rows.map((r) => r.name));
}
