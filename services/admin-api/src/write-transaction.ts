/**
 * The one transaction every admin-api write route runs in (all but the executor report's relay,
 * which publishes inside its transaction and answers 503 "retry it" itself).
 *
 * A request's transaction can lose a lock race: with the scheduler or the broker moving the same
 * instances (a rerun batch canceled while its instances are dispatched did, in CI), or with
 * another team's writes of the same index pages (eight concurrent task creations deadlock on
 * `task_text_trigram`'s gap locks, #45). InnoDB rolls it back, and the caller would see a 500 for
 * a request that is fine; one team's burst of writes would fail another team's. The whole
 * transaction runs again instead, after a deadlock (1213) or a lock wait timeout (1205), up to
 * {@link ROUTE_LOCK_CONFLICT_RETRIES} times with a growing random pause (@ax/store's
 * `withTransaction`). Every route's transaction function keeps what it builds inside itself (or
 * resets it at its top), so running it again is safe. When the retries run out the answer is
 * 503 `UNAVAILABLE` with `Retry-After` (nothing was written), never 500 (errors.ts maps any
 * lock conflict that reaches it the same way).
 */
import { isLockConflict, withTransaction } from '@ax/store';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { lockConflictUnavailable } from './errors.js';

/** `innodb_lock_wait_timeout` of admin-api's sessions (main.ts), seconds: one attempt's longest wait for a row lock. */
export const ADMIN_LOCK_WAIT_TIMEOUT_SECONDS = 5;

/**
 * Runs beyond the first after a deadlock or lock wait timeout; then the answer is 503. Eight:
 * 24 concurrent writes of tasks (the #45 test) need up to five; each pause is at most
 * 20 ms × the attempt, so all of them together wait under a second.
 */
export const ROUTE_LOCK_CONFLICT_RETRIES = 8;

export async function writeTransaction<T>(pool: Pool, fn: (tx: PoolConnection) => Promise<T>): Promise<T> {
  try {
    return await withTransaction(pool, fn, { deadlockRetries: ROUTE_LOCK_CONFLICT_RETRIES, retryLockWaitTimeouts: true });
  } catch (err) {
    if (isLockConflict(err)) throw lockConflictUnavailable(ROUTE_LOCK_CONFLICT_RETRIES + 1);
    throw err;
  }
}
