/**
 * Every broker transaction runs READ COMMITTED: rows are locked first (`FOR UPDATE`, or
 * `SKIP LOCKED` for scans), and every later plain read must see what other brokers committed
 * meanwhile (under REPEATABLE READ a read after a lock wait could see the snapshot from before
 * the wait, and a conditional UPDATE would then lose for no reason).
 */
import type { PoolConnection } from 'mysql2/promise';
import { withTransaction, type StorePool } from '@ax/store';

/** `withTransaction` at READ COMMITTED. */
export function inTransaction<T>(pool: StorePool, fn: (conn: PoolConnection) => Promise<T>): Promise<T> {
  return withTransaction(pool, fn, { isolationLevel: 'READ COMMITTED' });
}
