/** Audit entries of applied writes (ADMIN-API.md): actor = token name; secrets redacted by the callers. */
import { insertAuditEntry, type Queryable } from '@ax/store';
import type { Principal } from './auth.js';

/** One applied write. */
export interface AuditInput {
  readonly action: string;
  readonly target: string;
  readonly reason?: string | null;
  readonly before?: unknown;
  readonly after?: unknown;
}

/** Writes the entry (inside the write's transaction). */
export async function audit(db: Queryable, principal: Principal | null, entry: AuditInput): Promise<void> {
  await insertAuditEntry(db, { actor: principal?.name ?? 'hmac', ...entry });
}
