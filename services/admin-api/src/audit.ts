/**
 * Audit entries of applied writes (ADMIN-API.md): actor = token name and id (HMAC callers:
 * `executor:<team>`, no token id); `team` = the team of the target (null for global targets), by
 * which reads are filtered; secrets redacted by the callers.
 */
import { insertAuditEntry, type Queryable } from '@ax/store';
import type { Principal } from './auth.js';

/** One applied write. */
export interface AuditInput {
  readonly action: string;
  readonly target: string;
  /** Team of the target; null (global: tokens, teams, dispatch) is seen by `*` tokens only. */
  readonly team: string | null;
  readonly reason?: string | null;
  readonly before?: unknown;
  readonly after?: unknown;
}

/** Writes the entry (inside the write's transaction). */
export async function audit(db: Queryable, principal: Principal | null, entry: AuditInput): Promise<void> {
  await insertAuditEntry(db, { actor: principal?.name ?? 'hmac', actorTokenId: principal?.tokenId ?? null, ...entry });
}

/**
 * The actor of a write signed by business code (report, claim): `executor:<team>`, the team of
 * the execution's task (`executor` when its task was deleted). No token id: HMAC callers have none.
 */
export function executorActor(team: string | null): string {
  return team === null ? 'executor' : `executor:${team}`;
}

/** Writes the entry of an HMAC-signed write (inside the write's transaction). */
export async function auditExecutor(db: Queryable, entry: AuditInput): Promise<void> {
  await insertAuditEntry(db, { actor: executorActor(entry.team), actorTokenId: null, ...entry });
}
