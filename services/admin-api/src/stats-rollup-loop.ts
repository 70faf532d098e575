/**
 * Keeps the dashboard's past days rolled up (stats-rollup.ts in @ax/store, migration 0008):
 * every `AX_STATS_ROLLUP_INTERVAL_MS` one admin-api (a MySQL named lock per database, so
 * replicas take turns instead of computing the same days) rolls up each past day that may be
 * and is not yet, oldest first, one transaction per day. After an upgrade that is every day of
 * the history, about a second each on the bench's (#24): past days are answered live until
 * then. A day left open by an instance that is still not final is tried again after
 * {@link OPEN_DAY_RETRY_MS}, not on every pass.
 */
import type { RowDataPacket } from 'mysql2';
import { startBackgroundLoop, type BackgroundLoop, type Logger } from '@ax/kit';
import { daysToRollUp, rollUpDay, type StorePool } from '@ax/store';

/** How long a day that still had an instance not final waits before it is tried again, ms. */
export const OPEN_DAY_RETRY_MS = 15 * 60_000;

export interface StatsRollupOptions {
  readonly pool: StorePool;
  readonly logger: Logger;
  /** Milliseconds now. */
  readonly now: () => number;
}

/** What one pass did. */
export interface RollupPass {
  /** False when another admin-api held the lock (nothing was done). */
  readonly locked: boolean;
  readonly rolledUp: number;
  /** Days with an instance not final yet. */
  readonly open: number;
  /** Instances of the days rolled up. */
  readonly instances: number;
}

/** The MySQL named lock of one database's rollup (GET_LOCK names are server-wide, ≤ 64 characters). */
export function rollupLockName(database: string | null): string {
  return `ax.stats-rollup.${database ?? ''}`.slice(0, 64);
}

/**
 * One pass: every past day that may be rolled up and is not yet (until `signal` aborts).
 * `openUntil` remembers the days found open, by day start ms: the caller keeps it between passes.
 */
export async function rollUpPastDays(opts: StatsRollupOptions, openUntil: Map<number, number>, signal?: AbortSignal): Promise<RollupPass> {
  const conn = await opts.pool.getConnection();
  const lock = rollupLockName(opts.pool.databaseName);
  let rolledUp = 0;
  let open = 0;
  let instances = 0;
  try {
    const [[got]] = await conn.query<RowDataPacket[]>('SELECT GET_LOCK(?, 0) AS ok', [lock]);
    if (Number(got?.['ok']) !== 1) return { locked: false, rolledUp, open, instances };
    try {
      for (const day of await daysToRollUp(conn, opts.now())) {
        if (signal?.aborted) break;
        if ((openUntil.get(day.getTime()) ?? 0) > opts.now()) continue;
        const startedMs = Date.now();
        const outcome = await rollUpDay(conn, day, opts.now());
        if (outcome.rolledUp) {
          rolledUp += 1;
          instances += outcome.instances;
          openUntil.delete(day.getTime());
          opts.logger.debug({ day: day.toISOString().slice(0, 10), instances: outcome.instances, ms: Date.now() - startedMs }, 'rolled up the hourly figures of a past day');
        } else if (outcome.reason === 'open') {
          open += 1;
          openUntil.set(day.getTime(), opts.now() + OPEN_DAY_RETRY_MS);
        }
      }
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [lock]);
    }
  } finally {
    conn.release();
  }
  return { locked: true, rolledUp, open, instances };
}

/** Starts the loop (`intervalMs` > 0); `stop()` it before the pool ends. */
export function startStatsRollupLoop(opts: StatsRollupOptions & { readonly intervalMs: number }): BackgroundLoop {
  const openUntil = new Map<number, number>();
  return startBackgroundLoop({
    name: 'stats-rollup',
    intervalMs: opts.intervalMs,
    logger: opts.logger,
    // A few seconds after start: the API answers first.
    initialDelayMs: Math.min(opts.intervalMs, 5_000),
    run: async (signal) => {
      const startedMs = Date.now();
      const pass = await rollUpPastDays(opts, openUntil, signal);
      if (pass.rolledUp > 0 || pass.open > 0) {
        opts.logger.info({ ...pass, ms: Date.now() - startedMs }, 'rolled up the hourly figures of past days');
      }
    },
  });
}
