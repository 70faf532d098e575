/**
 * What an audit entry changed, field by field (issue #47: the audit page showed raw before/after
 * JSON): each differing leaf with its old and new value, through core's value diff, the same one
 * `axctl apply`'s dry run prints. The API stores entries with their secrets already shown as
 * `"***"` (ADMIN-API.md "Secrets"); the diff masks everything under env, headers and credential
 * keys again, so no entry shows more than the API does.
 */
// The pure module of core (its own export, no imports): core's index holds Node code that the
// browser bundle must not take.
// eslint-disable-next-line no-restricted-imports
import { valueDiff } from '@ax/core/value-diff';

/** One changed field of an entry. */
export interface AuditChange {
  /** Dotted path in the entry's object (`schedule.expr`, `exec.env.TOKEN`). */
  readonly path: string;
  readonly kind: 'added' | 'removed' | 'changed';
  /** Canonical JSON of the old value; absent for `added`. */
  readonly from?: string;
  /** Canonical JSON of the new value; absent for `removed`. */
  readonly to?: string;
}

/**
 * The changes from `before` to `after` (either absent: a create lists every field added, a
 * delete every field removed), by path. Not objects (a bare value on either side): one change
 * at the path `value`.
 */
export function auditChanges(before: unknown, after: unknown): AuditChange[] {
  return valueDiff('', before, after, { walkAbsent: true }).map(({ path, from, to }) => {
    const at = path === '' ? 'value' : path;
    if (from === undefined) return { path: at, kind: 'added', ...(to === undefined ? {} : { to }) };
    if (to === undefined) return { path: at, kind: 'removed', from };
    return { path: at, kind: 'changed', from, to };
  });
}
