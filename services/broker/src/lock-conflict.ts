/**
 * A lost lock race (deadlock 1213, lock wait timeout 1205) is not an outage: the database
 * answered. Only a connection failure may mark the MySQL link down, because that suspends the
 * ACK and lease expiry for a lease period (R14); a deadlock between two brokers' claims must
 * not, and it is retried at once at warn level instead of logged as an error.
 */
const LOCK_CONFLICT_ERRNOS: ReadonlySet<number> = new Set([1205, 1213]);

/** True when `error` (or one of its causes) is a deadlock or a lock wait timeout. */
export function isLockConflict(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; typeof e === 'object' && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const errno = (e as { errno?: unknown }).errno;
    if (typeof errno === 'number' && LOCK_CONFLICT_ERRNOS.has(errno)) return true;
  }
  return false;
}
