/**
 * Every broker transaction runs READ COMMITTED: rows are locked first (`FOR UPDATE`, or
 * `SKIP LOCKED` for scans), and every later plain read must see what other brokers committed
 * meanwhile (under REPEATABLE READ a read after a lock wait could see the snapshot from before
 * the wait, and a conditional UPDATE would then lose for no reason).
 */
import type { PoolConnection } from 'mysql2/promise';
import { withTransaction, type StorePool } from '@ax/store';
import type { BrokerConfig } from './config.js';

/**
 * `withTransaction` at READ COMMITTED, given up after `config.transactionTimeoutMs` (the
 * connection is dropped; the caller sees a retryable `TransactionTimeoutError`). Every broker
 * transaction is safe to retry: claims and transitions are conditional, results idempotent.
 */
export function inTransaction<T>(
  ctx: { readonly pool: StorePool; readonly config: Pick<BrokerConfig, 'transactionTimeoutMs'> },
  fn: (conn: PoolConnection) => Promise<T>,
): Promise<T> {
  return withTransaction(ctx.pool, fn, { isolationLevel: 'READ COMMITTED', timeoutMs: ctx.config.transactionTimeoutMs });
}
