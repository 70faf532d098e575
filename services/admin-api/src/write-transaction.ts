/**
 * The transaction admin-api's routes write in (all but the executor report's relay, which
 * publishes inside its transaction and answers 503 "retry it" itself). A request's transaction
 * can deadlock with the scheduler or the broker moving the same instances (a rerun batch canceled
 * while its instances are dispatched did, in CI): InnoDB rolls it back, and the operator would see
 * a 500 for a request that is fine. The whole transaction runs again instead, up to
 * {@link ROUTE_DEADLOCK_RETRIES} times. Every route's transaction function keeps what it builds
 * inside itself (or resets it at its top), so running it again is safe.
 */
import { withTransaction } from '@ax/store';
import type { Pool, PoolConnection } from 'mysql2/promise';

/** Runs beyond the first after a deadlock; then the error is the answer. */
export const ROUTE_DEADLOCK_RETRIES = 3;

export function writeTransaction<T>(pool: Pool, fn: (tx: PoolConnection) => Promise<T>): Promise<T> {
  return withTransaction(pool, fn, { deadlockRetries: ROUTE_DEADLOCK_RETRIES });
}
