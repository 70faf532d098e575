/**
 * `api_token`: bearer tokens of the admin API, stored as the hex SHA-256 of the token (the
 * plaintext is shown once, at creation, and never stored). Roles are `viewer` < `operator` <
 * `admin` (ADMIN-API.md "Conventions"). A revoked token is revoked for good: nothing here sets
 * `revoked_at` back to NULL.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { isDuplicateKeyError, isRetryableMysqlError, StoreError } from '../errors.js';
import { decodeJson, encodeJson } from '../json.js';
import { withTransaction } from '../pool.js';
import type { Queryable } from '../schema-version.js';
import { insertAuditEntry } from './audit.js';

/** A token as stored, without its hash. */
export interface ApiTokenRecord {
  readonly id: string;
  readonly name: string;
  readonly role: string;
  /** Team names the token acts for, or `["*"]` (every team). */
  readonly teams: readonly string[];
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
}

type TokenRow = RowDataPacket & {
  id: string;
  name: string;
  role: string;
  teams: unknown;
  token_hash: string;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
};

/** `teams` of a token acting for every team. */
export const ALL_TEAMS: readonly string[] = Object.freeze(['*']);

function teamsOf(value: unknown): readonly string[] {
  const decoded = decodeJson<unknown>(value);
  return Array.isArray(decoded) && decoded.every((t) => typeof t === 'string') ? decoded : [];
}

function tokenFromRow(r: TokenRow): ApiTokenRecord {
  return { id: String(r.id), name: r.name, role: r.role, teams: teamsOf(r.teams), createdAt: r.created_at, revokedAt: r.revoked_at, lastUsedAt: r.last_used_at };
}

/** A live token has this name already (names are unique among live tokens). */
export class TokenNameTakenError extends StoreError {
  constructor(readonly tokenName: string) {
    super(`a live token named ${JSON.stringify(tokenName)} exists`);
    this.name = 'TokenNameTakenError';
  }
}

/**
 * Stores a new token (by its hash); returns its id. `teams` defaults to `["*"]`.
 * @throws TokenNameTakenError when a live token has this name (`uk_api_token_live_name`).
 */
export async function insertApiToken(
  db: Queryable,
  token: { name: string; role: string; tokenHash: string; teams?: readonly string[] },
): Promise<string> {
  try {
    const [result] = await db.query<ResultSetHeader>('INSERT INTO api_token (name, role, teams, token_hash) VALUES (?, ?, ?, ?)', [
      token.name,
      token.role,
      encodeJson(token.teams ?? ALL_TEAMS),
      token.tokenHash,
    ]);
    return String(result.insertId);
  } catch (err) {
    if (isDuplicateKeyError(err) && String((err as { message?: unknown }).message).includes('uk_api_token_live_name')) {
      throw new TokenNameTakenError(token.name);
    }
    throw err;
  }
}

/** What {@link upsertApiToken} found and did at a start-up. */
export interface BootstrapTokenOutcome {
  /**
   * `active`: the token is stored and live (stored now, or already); `revoked`: it was revoked
   * (`DELETE /api/v1/tokens/{id}`, or a start with a newer value) and stays revoked, so it
   * authenticates nothing.
   */
  readonly state: 'active' | 'revoked';
  /** Id of the token's row. */
  readonly id: string;
  /** Ids of earlier live tokens of the same name this call revoked: a rotation. */
  readonly revokedIds: readonly string[];
}

/** Attempts of {@link upsertApiToken} when its transaction hits a deadlock or a lost connection. */
const BOOTSTRAP_ATTEMPTS = 5;
/** Base of the jittered pause between those attempts, ms (the n-th pause is n × 25–50 ms). */
const BOOTSTRAP_RETRY_BASE_MS = 25;

/**
 * The bootstrap token of `AX_ADMIN_TOKEN`, applied at every start of every admin-api replica
 * (ADMIN-API.md "Conventions": "`AX_ADMIN_TOKEN` sets an admin token at start-up"):
 *
 * - not stored yet: it is stored with this name and role;
 * - stored and live: it gets this name and role (as it did before);
 * - stored and revoked: it is left revoked; the caller warns. A token once revoked never comes
 *   back, whichever replica restarts with it;
 * - whenever the value is live, every *other* live token of this name is revoked (and
 *   audited as `token.revoke` by this name): starting with a new value is the rotation.
 *
 * An old value can never revoke the new one: the old one is revoked by the first start with the
 * new value, and a revoked value revokes nothing. The statements run in one transaction that
 * locks the rows it reads, so replicas starting at once (same value, or the old and the new of a
 * rotation) are serialized by the database: the unique key on `token_hash` makes one row per
 * value, and a deadlock between two such starts is retried (whichever runs second sees what the
 * first committed). Names are unique among live tokens (`uk_api_token_live_name`), so the old
 * token is revoked before the new row takes the name, in the same transaction; every live token
 * of this name is revoked, whatever its role. The name is therefore reserved for this token, and
 * the bootstrap token acts for every team (`["*"]`).
 */
export async function upsertApiToken(pool: Pool, token: { name: string; role: string; tokenHash: string }): Promise<BootstrapTokenOutcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await withTransaction(pool, (tx) => bootstrapOnce(tx, token));
    } catch (error) {
      // A duplicate (hash or live name) means a concurrent start stored it first: run again, it
      // finds that row.
      const retry = isRetryableMysqlError(error) || isDuplicateKeyError(error) || error instanceof TokenNameTakenError;
      if (attempt >= BOOTSTRAP_ATTEMPTS || !retry) throw error;
      const pauseMs = attempt * BOOTSTRAP_RETRY_BASE_MS * (1 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}

type BootstrapRow = RowDataPacket & { id: string; name: string; role: string; revoked_at: Date | null };


async function bootstrapOnce(tx: PoolConnection, token: { name: string; role: string; tokenHash: string }): Promise<BootstrapTokenOutcome> {
  // First, in every such transaction, the same locking read (it locks the rows it scans: all of
  // this small table while `name` has no index of its own): concurrent starts queue here, in one
  // order, instead of deadlocking over each other's rows further down.
  await tx.query('SELECT id FROM api_token WHERE name = ? ORDER BY id FOR UPDATE', [token.name]);
  const [rows] = await tx.query<BootstrapRow[]>('SELECT id, name, role, revoked_at FROM api_token WHERE token_hash = ? FOR UPDATE', [
    token.tokenHash,
  ]);
  const existing = rows[0];
  // A revoked value stays revoked and revokes nothing.
  if (existing !== undefined && existing.revoked_at !== null) return { state: 'revoked', id: String(existing.id), revokedIds: [] };

  // Every other live token of this name goes first: names are unique among live tokens
  // (`uk_api_token_live_name`), so the new row can only take the name once the old one is revoked.
  const [others] = await tx.query<BootstrapRow[]>(
    'SELECT id, name, role, revoked_at FROM api_token WHERE name = ? AND revoked_at IS NULL AND id <> ? ORDER BY id FOR UPDATE',
    [token.name, existing === undefined ? 0 : existing.id],
  );
  const revokedIds = others.map((r) => String(r.id));
  if (revokedIds.length > 0) {
    await tx.query('UPDATE api_token SET revoked_at = CURRENT_TIMESTAMP(3) WHERE id IN (?) AND revoked_at IS NULL', [revokedIds]);
  }
  let id: string;
  if (existing === undefined) {
    id = await insertApiToken(tx, { name: token.name, role: token.role, tokenHash: token.tokenHash, teams: ALL_TEAMS });
  } else {
    id = String(existing.id);
    await tx.query('UPDATE api_token SET name = ?, role = ?, teams = ? WHERE id = ? AND revoked_at IS NULL', [
      token.name,
      token.role,
      encodeJson(ALL_TEAMS),
      id,
    ]);
  }
  for (const old of others) {
    await insertAuditEntry(tx, {
      actor: token.name,
      actorTokenId: id,
      action: 'token.revoke',
      target: `token:${String(old.id)}`,
      team: null,
      reason: 'AX_ADMIN_TOKEN rotated: revoked at the start of an admin-api with the new value',
      before: { id: String(old.id), name: old.name, role: old.role },
    });
  }
  return { state: 'active', id, revokedIds };
}

/** The live (not revoked) token with this hash, with its stored hash, or null. */
export async function findApiTokenByHash(db: Queryable, tokenHash: string): Promise<(ApiTokenRecord & { tokenHash: string }) | null> {
  const [rows] = await db.query<TokenRow[]>(
    'SELECT id, name, role, teams, token_hash, created_at, revoked_at, last_used_at FROM api_token WHERE token_hash = ? AND revoked_at IS NULL',
    [tokenHash],
  );
  const row = rows[0];
  return row === undefined ? null : { ...tokenFromRow(row), tokenHash: row.token_hash };
}

/** One token by id (revoked or not), or null. */
export async function getApiToken(db: Queryable, id: string): Promise<ApiTokenRecord | null> {
  const [rows] = await db.query<TokenRow[]>(
    'SELECT id, name, role, teams, token_hash, created_at, revoked_at, last_used_at FROM api_token WHERE id = ?',
    [id],
  );
  const row = rows[0];
  return row === undefined ? null : tokenFromRow(row);
}

/**
 * Tokens, newest first, after the keyset cursor `beforeId`. With `withinTeams`, only tokens
 * whose teams all lie within those (a `["*"]` token only when they include `*`).
 */
export async function listApiTokens(
  db: Queryable,
  opts: { beforeId?: string; limit: number; withinTeams?: readonly string[] | null },
): Promise<ApiTokenRecord[]> {
  const where: string[] = [];
  const values: unknown[] = [];
  if (opts.withinTeams !== undefined && opts.withinTeams !== null) {
    where.push('JSON_CONTAINS(?, teams)');
    values.push(encodeJson(opts.withinTeams));
  }
  if (opts.beforeId !== undefined) {
    where.push('id < ?');
    values.push(opts.beforeId);
  }
  values.push(opts.limit);
  const [rows] = await db.query<TokenRow[]>(
    `SELECT id, name, role, teams, token_hash, created_at, revoked_at, last_used_at FROM api_token
      ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`,
    values,
  );
  return rows.map(tokenFromRow);
}

/** Revokes a live token; returns false when it does not exist or was revoked already. */
export async function revokeApiToken(db: Queryable, id: string): Promise<boolean> {
  const [result] = await db.query<ResultSetHeader>(
    'UPDATE api_token SET revoked_at = CURRENT_TIMESTAMP(3) WHERE id = ? AND revoked_at IS NULL',
    [id],
  );
  return result.affectedRows === 1;
}

/** Records that a token was used (callers throttle this; it is bookkeeping, not security). */
export async function touchApiToken(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE api_token SET last_used_at = CURRENT_TIMESTAMP(3) WHERE id = ?', [id]);
}

/**
 * Takes the deleted team `team` off every live token that names it (call in the transaction
 * that deletes the team): a team created again under that name is a new team, and a token
 * written for the old one must not act for it (#44). A token left with no team is revoked.
 * Returns the ids of the tokens narrowed and of those revoked.
 */
export async function dropTeamFromTokens(db: Queryable, team: string): Promise<{ narrowed: string[]; revoked: string[] }> {
  const [rows] = await db.query<Array<RowDataPacket & { id: string; teams: unknown }>>(
    'SELECT id, teams FROM api_token WHERE revoked_at IS NULL AND JSON_CONTAINS(teams, ?) FOR UPDATE',
    [JSON.stringify(team)],
  );
  const narrowed: string[] = [];
  const revoked: string[] = [];
  for (const row of rows) {
    const rest = teamsOf(row.teams).filter((t) => t !== team);
    if (rest.length === 0) {
      await db.query('UPDATE api_token SET revoked_at = CURRENT_TIMESTAMP(3) WHERE id = ? AND revoked_at IS NULL', [row.id]);
      revoked.push(String(row.id));
    } else {
      await db.query('UPDATE api_token SET teams = ? WHERE id = ?', [encodeJson(rest), row.id]);
      narrowed.push(String(row.id));
    }
  }
  return { narrowed, revoked };
}
