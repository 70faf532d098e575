/**
 * `audit_log`: who did what through the admin API, with before/after (secrets redacted by the
 * caller). Written in the same transaction as the change it records, so the log never claims a
 * write that was rolled back.
 */
import type { RowDataPacket } from 'mysql2';
import { decodeJsonNullable, encodeJsonNullable } from '../json.js';
import type { Queryable } from '../schema-version.js';

/** One audit entry to write. */
export interface NewAuditEntry {
  /** Token name. */
  actor: string;
  /** Token id of the actor (null: an HMAC caller). */
  actorTokenId?: string | null;
  /** Team of the target; null = a global target (tokens, teams, dispatch). */
  team?: string | null;
  /** e.g. `task.create`, `edge.delete`, `rerun.create`. */
  action: string;
  /** What was changed, e.g. `task:order_stat_daily`. */
  target: string;
  reason?: string | null;
  before?: unknown;
  after?: unknown;
}

/** An audit entry as stored (ADMIN-API.md "Audit entry"). */
export interface AuditEntry {
  readonly id: string;
  readonly at: Date;
  readonly actor: string;
  readonly actorTokenId: string | null;
  readonly action: string;
  readonly target: string;
  readonly team: string | null;
  readonly reason: string | null;
  readonly before: unknown;
  readonly after: unknown;
}

const cut = (text: string, max: number): string => (text.length > max ? text.slice(0, max) : text);

/** Appends one entry. */
export async function insertAuditEntry(db: Queryable, entry: NewAuditEntry): Promise<void> {
  await db.query(
    'INSERT INTO audit_log (actor, actor_token_id, action, target, team, reason, before_json, after_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    [
    cut(entry.actor, 128),
    entry.actorTokenId ?? null,
    cut(entry.action, 64),
    cut(entry.target, 255),
    entry.team ?? null,
    entry.reason == null ? null : cut(entry.reason, 2048),
    encodeJsonNullable(entry.before ?? null),
    encodeJsonNullable(entry.after ?? null),
    ],
  );
}

/** Filters and page of {@link listAuditEntries}. */
export interface ListAuditOptions {
  actor?: string;
  /** Only entries of these teams (global entries, team NULL, are left out); null/absent = all. */
  teams?: readonly string[] | null;
  /** Entries at or after this time. */
  from?: Date;
  /** Entries before this time. */
  to?: Date;
  /** Keyset cursor: entries with a smaller id. */
  beforeId?: string;
  limit: number;
}

type AuditRow = RowDataPacket & {
  id: string;
  at: Date;
  actor: string;
  actor_token_id: string | null;
  action: string;
  target: string;
  team: string | null;
  reason: string | null;
  before_json: unknown;
  after_json: unknown;
};

/** Entries newest first. */
export async function listAuditEntries(db: Queryable, opts: ListAuditOptions): Promise<AuditEntry[]> {
  const where: string[] = [];
  const values: unknown[] = [];
  if (opts.actor !== undefined) {
    where.push('actor = ?');
    values.push(opts.actor);
  }
  if (opts.teams !== undefined && opts.teams !== null) {
    if (opts.teams.length === 0) return [];
    where.push('team IN (?)');
    values.push(opts.teams);
  }
  if (opts.from !== undefined) {
    where.push('at >= ?');
    values.push(opts.from);
  }
  if (opts.to !== undefined) {
    where.push('at < ?');
    values.push(opts.to);
  }
  if (opts.beforeId !== undefined) {
    where.push('id < ?');
    values.push(opts.beforeId);
  }
  values.push(opts.limit);
  const [rows] = await db.query<AuditRow[]>(
    `SELECT id, at, actor, actor_token_id, action, target, team, reason, before_json, after_json FROM audit_log
      ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`,
    values,
  );
  return rows.map((r) => ({
    id: String(r.id),
    at: r.at,
    actor: r.actor,
    actorTokenId: r.actor_token_id === null ? null : String(r.actor_token_id),
    action: r.action,
    target: r.target,
    team: r.team,
    reason: r.reason,
    before: decodeJsonNullable(r.before_json),
    after: decodeJsonNullable(r.after_json),
  }));
}
