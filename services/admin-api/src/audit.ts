/**
 * Audit entries of applied writes (ADMIN-API.md): actor = token name and id; `team` = the team of
 * the target (null for global targets), by which reads are filtered; secrets redacted by the callers.
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
