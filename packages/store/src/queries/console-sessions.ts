/**
 * `console_session`: the console's server-side sign-in sessions (migration 0018). A row is
 * keyed by the hash of the cookie value; a token session reads its role, teams and revocation
 * through `api_token` on every lookup, so revoking the token ends it. Lifetimes are decided by
 * the admin API (it knows the configured idle and absolute limits); this file only stores.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { decodeJson, decodeJsonNullable, encodeJson } from '../json.js';
import type { Queryable } from '../schema-version.js';

/** What a new session stands for. */
export interface NewConsoleSession {
  readonly idHash: string;
  readonly csrfToken: string;
  /** Token sign-in: the API token's id; null for OIDC. */
  readonly tokenId: string | null;
  /** OIDC sign-in: the issuer's `sub`; null for a token. */
  readonly oidcSubject: string | null;
  /** The actor of audit entries (token name, or the OIDC user's name). */
  readonly name: string;
  /** OIDC sign-in: the values of the role claim; null for a token. */
  readonly oidcGroups: readonly string[] | null;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

/** The API token behind a token session, as it is now. */
export interface ConsoleSessionToken {
  readonly name: string;
  readonly role: string;
  readonly teams: readonly string[];
  readonly revoked: boolean;
}

/** A stored session. */
export interface ConsoleSessionRecord extends NewConsoleSession {
  readonly lastSeenAt: Date;
  /** The token of a token session (null when it is an OIDC session or the token row is gone). */
  readonly token: ConsoleSessionToken | null;
}

type SessionRow = RowDataPacket & {
  id_hash: string;
  csrf_token: string;
  token_id: string | number | null;
  oidc_subject: string | null;
  name: string;
  oidc_groups: unknown;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  token_name: string | null;
  token_role: string | null;
  token_teams: unknown;
  token_revoked_at: Date | null;
};

function stringsOf(value: unknown): readonly string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : [];
}

/** Stores a new session. */
export async function insertConsoleSession(db: Queryable, session: NewConsoleSession): Promise<void> {
  await db.query(
    `INSERT INTO console_session (id_hash, csrf_token, token_id, oidc_subject, name, oidc_groups, created_at, last_seen_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      session.idHash,
      session.csrfToken,
      session.tokenId,
      session.oidcSubject,
      session.name,
      session.oidcGroups === null ? null : encodeJson(session.oidcGroups),
      session.createdAt,
      session.createdAt,
      session.expiresAt,
    ],
  );
}

/** The session of `idHash` with its token as it is now, or null. */
export async function findConsoleSession(db: Queryable, idHash: string): Promise<ConsoleSessionRecord | null> {
  const [rows] = await db.query<SessionRow[]>(
    `SELECT s.id_hash, s.csrf_token, s.token_id, s.oidc_subject, s.name, s.oidc_groups, s.created_at, s.last_seen_at, s.expires_at,
            t.name AS token_name, t.role AS token_role, t.teams AS token_teams, t.revoked_at AS token_revoked_at
       FROM console_session s LEFT JOIN api_token t ON t.id = s.token_id
      WHERE s.id_hash = ?`,
    [idHash],
  );
  const r = rows[0];
  if (r === undefined) return null;
  const token: ConsoleSessionToken | null =
    r.token_name === null || r.token_role === null
      ? null
      : { name: r.token_name, role: r.token_role, teams: stringsOf(decodeJson<unknown>(r.token_teams)), revoked: r.token_revoked_at !== null };
  return {
    idHash: r.id_hash,
    csrfToken: r.csrf_token,
    tokenId: r.token_id === null ? null : String(r.token_id),
    oidcSubject: r.oidc_subject,
    name: r.name,
    oidcGroups: r.oidc_groups === null ? null : stringsOf(decodeJsonNullable<unknown>(r.oidc_groups)),
    createdAt: r.created_at,
    lastSeenAt: r.last_seen_at,
    expiresAt: r.expires_at,
    token,
  };
}

/** Records activity (the idle lifetime counts from it). */
export async function touchConsoleSession(db: Queryable, idHash: string, at: Date): Promise<void> {
  await db.query('UPDATE console_session SET last_seen_at = ? WHERE id_hash = ? AND last_seen_at < ?', [at, idHash, at]);
}

/** Ends one session (sign-out, or found expired); true when there was one. */
export async function deleteConsoleSession(db: Queryable, idHash: string): Promise<boolean> {
  const [result] = await db.query<ResultSetHeader>('DELETE FROM console_session WHERE id_hash = ?', [idHash]);
  return result.affectedRows > 0;
}

/**
 * Removes sessions past their absolute end or idle since before `idleBefore`, at most `limit`
 * (a bounded statement: called on every sign-in, it keeps the table from growing with
 * abandoned browsers). Returns how many went.
 */
export async function deleteExpiredConsoleSessions(db: Queryable, now: Date, idleBefore: Date, limit: number): Promise<number> {
  const [result] = await db.query<ResultSetHeader>('DELETE FROM console_session WHERE expires_at <= ? OR last_seen_at < ? LIMIT ?', [now, idleBefore, limit]);
  return result.affectedRows;
}
