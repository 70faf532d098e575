/**
 * The transaction every admin-api route writes in. A request's transaction can lose a lock race
 * with the scheduler or the broker moving the same instances (a rerun batch canceled while its
 * instances are dispatched deadlocked that way): InnoDB rolls it back, and the operator would
 * see a 500 for a request that is fine. The whole transaction is run again instead, up to
 * {@link ROUTE_LOCK_CONFLICT_RETRIES} times. Every route's transaction function keeps what it
 * builds inside itself (or resets it at its top), so running it again is safe.
 */
import { withTransaction } from '@ax/store';
import type { PoolConnection } from 'mysql2/promise';
import type { Pool } from 'mysql2/promise';

/** Runs beyond the first after a deadlock or lock wait timeout; then the error is the answer. */
export const ROUTE_LOCK_CONFLICT_RETRIES = 3;

export function writeTransaction<T>(pool: Pool, fn: (tx: PoolConnection) => Promise<T>): Promise<T> {
  return withTransaction(pool, fn, { lockConflictRetries: ROUTE_LOCK_CONFLICT_RETRIES });
}
