/**
 * `worker_enrollment` (migration 0014; ADMIN-API.md "Workers"): which teams the workers of an
 * enrollment serve and the hash of its credential. admin-api writes it; admin-api answers a
 * worker's credential from it; brokers read the live enrollments' teams (the server's record of
 * what a worker serves, R24). On a schema before 0014 there are no enrollments: reads find none
 * and a create fails with the database's own "no such table".
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { StoreError, isDuplicateKeyError, isNoSuchTableError } from '../errors.js';
import { decodeJson, encodeJson } from '../json.js';
import type { Queryable } from '../schema-version.js';

/** An enrollment as stored (never its credential). */
export interface EnrollmentRecord {
  readonly id: string;
  readonly name: string;
  /** Team names, or `['*']` for every team. */
  readonly teams: readonly string[];
  /** Tags its workers may offer; empty = any. */
  readonly tags: readonly string[];
  readonly createdBy: string | null;
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
}

/** A create named an enrollment name that a live enrollment has already. */
export class EnrollmentNameTakenError extends StoreError {
  constructor(readonly enrollmentName: string) {
    super(`a live worker enrollment is named ${JSON.stringify(enrollmentName)} already`);
    this.name = 'EnrollmentNameTakenError';
  }
}

const COLUMNS = 'id, name, teams, tags, created_by, created_at, revoked_at';

function stringList(value: unknown): string[] {
  const list = decodeJson(value);
  return Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string') : [];
}

function toRecord(row: RowDataPacket): EnrollmentRecord {
  return {
    id: String(row['id']),
    name: String(row['name']),
    teams: stringList(row['teams']),
    tags: stringList(row['tags']),
    createdBy: row['created_by'] === null ? null : String(row['created_by']),
    createdAt: row['created_at'] as Date,
    revokedAt: (row['revoked_at'] as Date | null) ?? null,
  };
}

/** What a create stores. */
export interface NewEnrollment {
  readonly id: string;
  readonly name: string;
  readonly teams: readonly string[];
  readonly tags: readonly string[];
  readonly credentialHash: string;
  readonly createdBy: string | null;
}

/** Stores a new enrollment; EnrollmentNameTakenError when a live one has its name. */
export async function insertEnrollment(db: Queryable, enrollment: NewEnrollment): Promise<EnrollmentRecord> {
  try {
    await db.query<ResultSetHeader>(
      'INSERT INTO worker_enrollment (id, name, teams, tags, credential_hash, created_by) VALUES (?, ?, ?, ?, ?, ?)',
      [enrollment.id, enrollment.name, encodeJson(enrollment.teams), encodeJson(enrollment.tags), enrollment.credentialHash, enrollment.createdBy],
    );
  } catch (err) {
    if (isDuplicateKeyError(err) && String((err as Error).message).includes('uq_enrollment_live_name')) {
      throw new EnrollmentNameTakenError(enrollment.name);
    }
    throw err;
  }
  const stored = await getEnrollment(db, enrollment.id);
  if (stored === null) throw new StoreError(`worker enrollment ${enrollment.id} was not stored`);
  return stored;
}

/** One enrollment (live or revoked), or null. */
export async function getEnrollment(db: Queryable, id: string): Promise<EnrollmentRecord | null> {
  try {
    const [rows] = await db.query<RowDataPacket[]>(`SELECT ${COLUMNS} FROM worker_enrollment WHERE id = ?`, [id]);
    return rows[0] ? toRecord(rows[0]) : null;
  } catch (err) {
    if (isNoSuchTableError(err)) return null;
    throw err;
  }
}

/** The live enrollment whose credential hashes to `hash`, or null (unknown or revoked). */
export async function getLiveEnrollmentByCredentialHash(db: Queryable, hash: string): Promise<EnrollmentRecord | null> {
  try {
    const [rows] = await db.query<RowDataPacket[]>(
      `SELECT ${COLUMNS} FROM worker_enrollment WHERE credential_hash = ? AND revoked_at IS NULL`,
      [hash],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  } catch (err) {
    if (isNoSuchTableError(err)) return null;
    throw err;
  }
}

/** Every enrollment, live first, newest first; `includeRevoked` false = live ones only. */
export async function listEnrollments(db: Queryable, options: { includeRevoked?: boolean } = {}): Promise<EnrollmentRecord[]> {
  try {
    const where = options.includeRevoked === true ? '' : 'WHERE revoked_at IS NULL';
    const [rows] = await db.query<RowDataPacket[]>(
      `SELECT ${COLUMNS} FROM worker_enrollment ${where} ORDER BY revoked_at IS NOT NULL, created_at DESC, id`,
    );
    return rows.map(toRecord);
  } catch (err) {
    if (isNoSuchTableError(err)) return [];
    throw err;
  }
}

/** Marks an enrollment revoked; false when it does not exist or was revoked already. */
export async function revokeEnrollment(db: Queryable, id: string): Promise<boolean> {
  const [result] = await db.query<ResultSetHeader>(
    'UPDATE worker_enrollment SET revoked_at = CURRENT_TIMESTAMP(3) WHERE id = ? AND revoked_at IS NULL',
    [id],
  );
  return result.affectedRows === 1;
}

/**
 * The teams of every live enrollment, by id: the brokers' record of what each enrolled worker
 * may serve (R24). A revoked or unknown enrollment is absent, so its workers get nothing.
 */
export async function liveEnrollmentTeams(db: Queryable): Promise<Map<string, readonly string[]>> {
  const out = new Map<string, readonly string[]>();
  for (const e of await listEnrollments(db)) out.set(e.id, e.teams);
  return out;
}

/**
 * Takes `team` off every live enrollment naming it, when the team is deleted (in the delete's
 * transaction): a team created again under that name is a new team (#44), and no enrollment of
 * the old one serves it or gets its keys. An enrollment left with no team stays live but serves
 * nothing and gets no key (revoke it). `["*"]` enrollments are not changed: they serve every team
 * there is. Returns the ids changed.
 */
export async function dropTeamFromEnrollments(db: Queryable, team: string): Promise<string[]> {
  let rows: RowDataPacket[];
  try {
    [rows] = await db.query<RowDataPacket[]>('SELECT id, teams FROM worker_enrollment WHERE revoked_at IS NULL FOR UPDATE');
  } catch (err) {
    if (isNoSuchTableError(err)) return [];
    throw err;
  }
  const changed: string[] = [];
  for (const row of rows) {
    const teams = stringList(row['teams']);
    if (!teams.includes(team)) continue;
    const id = String(row['id']);
    await db.query<ResultSetHeader>('UPDATE worker_enrollment SET teams = ? WHERE id = ?', [encodeJson(teams.filter((t) => t !== team)), id]);
    changed.push(id);
  }
  return changed;
}
