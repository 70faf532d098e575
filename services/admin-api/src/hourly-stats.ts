/**
 * Per-hour figures of one UTC day for the console's charts (`GET /api/v1/stats/hourly`): the
 * query lives next to `dayStats` in @ax/store, with the same rule (an instance counts in the
 * hour it became due; trigger delay from then to its current execution's start). A past day
 * that was rolled up (stats-rollup.ts in @ax/store, kept by stats-rollup-loop.ts) is read from
 * its 24 kept hours instead of its instances: the same figures.
 */
import { hourlyStats as liveHourlyStats, mayBeRolledUp, rolledUpHourlyStats, type HourStats, type StorePool } from '@ax/store';

export type { HourStats };

/**
 * 24 hours from `dayStart` (a UTC midnight), each present (zero or null when nothing was due).
 * Today and yesterday cannot be rolled up yet at `nowMs`: they are read live without asking for
 * a rollup first (the dashboard refreshes today's figures every few seconds).
 */
export async function hourlyStats(pool: StorePool, dayStart: Date, teams: readonly string[] | null, nowMs: number): Promise<HourStats[]> {
  const kept = mayBeRolledUp(dayStart, nowMs) ? await rolledUpHourlyStats(pool, dayStart, teams) : null;
  return kept ?? liveHourlyStats(pool, dayStart, teams);
}
