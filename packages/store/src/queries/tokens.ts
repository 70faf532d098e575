/**
 * `api_token`: bearer tokens of the admin API, stored as the hex SHA-256 of the token (the
 * plaintext is shown once, at creation, and never stored). Roles are `viewer` < `operator` <
 * `admin` (ADMIN-API.md "Conventions").
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';

/** A token as stored, without its hash. */
export interface ApiTokenRecord {
  readonly id: string;
  readonly name: string;
  readonly role: string;
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
  readonly lastUsedAt: Date | null;
}

type TokenRow = RowDataPacket & {
  id: string;
  name: string;
  role: string;
  token_hash: string;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
};

function tokenFromRow(r: TokenRow): ApiTokenRecord {
  return { id: String(r.id), name: r.name, role: r.role, createdAt: r.created_at, revokedAt: r.revoked_at, lastUsedAt: r.last_used_at };
}

/** Stores a new token (by its hash); returns its id. */
export async function insertApiToken(db: Queryable, token: { name: string; role: string; tokenHash: string }): Promise<string> {
  const [result] = await db.query<ResultSetHeader>('INSERT INTO api_token (name, role, token_hash) VALUES (?, ?, ?)', [
    token.name,
    token.role,
    token.tokenHash,
  ]);
  return String(result.insertId);
}

/**
 * Makes sure a token with this hash exists, is not revoked and has this role and name (the
 * bootstrap token of `AX_ADMIN_TOKEN`, re-applied at every start).
 */
export async function upsertApiToken(db: Queryable, token: { name: string; role: string; tokenHash: string }): Promise<void> {
  await db.query(
    `INSERT INTO api_token (name, role, token_hash) VALUES (?, ?, ?)
     ON DUPLICATE KEY UPDATE name = VALUES(name), role = VALUES(role), revoked_at = NULL`,
    [token.name, token.role, token.tokenHash],
  );
}

/** The live (not revoked) token with this hash, with its stored hash, or null. */
export async function findApiTokenByHash(db: Queryable, tokenHash: string): Promise<(ApiTokenRecord & { tokenHash: string }) | null> {
  const [rows] = await db.query<TokenRow[]>(
    'SELECT id, name, role, token_hash, created_at, revoked_at, last_used_at FROM api_token WHERE token_hash = ? AND revoked_at IS NULL',
    [tokenHash],
  );
  const row = rows[0];
  return row === undefined ? null : { ...tokenFromRow(row), tokenHash: row.token_hash };
}

/** One token by id (revoked or not), or null. */
export async function getApiToken(db: Queryable, id: string): Promise<ApiTokenRecord | null> {
  const [rows] = await db.query<TokenRow[]>(
    'SELECT id, name, role, token_hash, created_at, revoked_at, last_used_at FROM api_token WHERE id = ?',
    [id],
  );
  const row = rows[0];
  return row === undefined ? null : tokenFromRow(row);
}

/** Tokens, newest first, after the keyset cursor `beforeId`. */
export async function listApiTokens(db: Queryable, opts: { beforeId?: string; limit: number }): Promise<ApiTokenRecord[]> {
  const [rows] = await db.query<TokenRow[]>(
    `SELECT id, name, role, token_hash, created_at, revoked_at, last_used_at FROM api_token
      ${opts.beforeId === undefined ? '' : 'WHERE id < ?'} ORDER BY id DESC LIMIT ?`,
    opts.beforeId === undefined ? [opts.limit] : [opts.beforeId, opts.limit],
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
