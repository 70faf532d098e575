/**
 * `api_token`: bearer tokens of the admin API, stored as the hex SHA-256 of the token (the
 * plaintext is shown once, at creation, and never stored). Roles are `viewer` < `operator` <
 * `admin` (ADMIN-API.md "Conventions"). A revoked token is revoked for good: nothing here sets
 * `revoked_at` back to NULL.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { isRetryableMysqlError, StoreError } from '../errors.js';
import { withTransaction } from '../pool.js';
import type { Queryable } from '../schema-version.js';
import { insertAuditEntry } from './audit.js';

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
  /** Ids of earlier bootstrap tokens (same name and role, live) this call revoked: a rotation. */
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
 * - whenever the value is live, every *other* live token of this name and role is revoked (and
 *   audited as `token.revoke` by this name): starting with a new value is the rotation.
 *
 * An old value can never revoke the new one: the old one is revoked by the first start with the
 * new value, and a revoked value revokes nothing. The statements run in one transaction that
 * locks the rows it reads, so replicas starting at once (same value, or the old and the new of a
 * rotation) are serialized by the database: the unique key on `token_hash` makes one row per
 * value, and a deadlock between two such starts is retried (whichever runs second sees what the
 * first committed). The name is therefore reserved for this token.
 */
export async function upsertApiToken(pool: Pool, token: { name: string; role: string; tokenHash: string }): Promise<BootstrapTokenOutcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await withTransaction(pool, (tx) => bootstrapOnce(tx, token));
    } catch (error) {
      if (attempt >= BOOTSTRAP_ATTEMPTS || !isRetryableMysqlError(error)) throw error;
      const pauseMs = attempt * BOOTSTRAP_RETRY_BASE_MS * (1 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}

type BootstrapRow = RowDataPacket & { id: string; name: string; role: string; revoked_at: Date | null };

async function bootstrapOnce(tx: PoolConnection, token: { name: string; role: string; tokenHash: string }): Promise<BootstrapTokenOutcome> {
  // First, in every such transaction, the same locking read (it locks the rows it scans: all of
  // this small table while `name` has no index): concurrent starts queue here, in one order,
  // instead of deadlocking over each other's rows further down.
  await tx.query('SELECT id FROM api_token WHERE name = ? AND role = ? ORDER BY id FOR UPDATE', [token.name, token.role]);
  // Creates the row, or locks the existing one; a revoked row keeps its name, role and revoked_at.
  await tx.query(
    `INSERT INTO api_token (name, role, token_hash) VALUES (?, ?, ?)
     ON DUPLICATE KEY UPDATE name = IF(revoked_at IS NULL, ?, name), role = IF(revoked_at IS NULL, ?, role)`,
    [token.name, token.role, token.tokenHash, token.name, token.role],
  );
  const [rows] = await tx.query<BootstrapRow[]>('SELECT id, name, role, revoked_at FROM api_token WHERE token_hash = ? FOR UPDATE', [
    token.tokenHash,
  ]);
  const row = rows[0];
  if (row === undefined) throw new StoreError('the bootstrap token row is missing right after its upsert');
  const id = String(row.id);
  if (row.revoked_at !== null) return { state: 'revoked', id, revokedIds: [] };

  const [others] = await tx.query<BootstrapRow[]>(
    'SELECT id, name, role, revoked_at FROM api_token WHERE name = ? AND role = ? AND revoked_at IS NULL AND id <> ? ORDER BY id FOR UPDATE',
    [token.name, token.role, id],
  );
  const revokedIds = others.map((r) => String(r.id));
  if (revokedIds.length > 0) {
    await tx.query('UPDATE api_token SET revoked_at = CURRENT_TIMESTAMP(3) WHERE id IN (?) AND revoked_at IS NULL', [revokedIds]);
    for (const old of others) {
      await insertAuditEntry(tx, {
        actor: token.name,
        action: 'token.revoke',
        target: `token:${String(old.id)}`,
        reason: 'AX_ADMIN_TOKEN rotated: revoked at the start of an admin-api with the new value',
        before: { id: String(old.id), name: old.name, role: old.role },
      });
    }
  }
  return { state: 'active', id, revokedIds };
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
