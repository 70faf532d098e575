/**
 * Misfire policy math (pure). A task's *missed* slots are the ones more than the misfire
 * threshold late that no scheduler fired: after a start-up, a failover with no live scheduler,
 * or a pause (DESIGN §3). Every policy uses the real slot times (R1):
 *
 * - `skip`: none is created; all are counted in `skipped_count`.
 * - `fire_once`: only the latest missed slot is created; the others are counted as coalesced.
 * - `catch_up` with `max`: the `max` MOST RECENT missed slots are created (ascending); the older
 *   ones are counted as skipped. Most recent rather than oldest: after a long outage the newest
 *   runs carry the freshest data, and the dropped ones are the stalest (they stay visible in
 *   `skipped_count` and can be backfilled with real slot times).
 */
import type { MisfirePolicy } from '@ax/core';

/** What to do with a run of missed slots. */
export interface MisfirePlan {
  /** Slots to create, ascending. */
  readonly create: number[];
  readonly skipped: number;
  readonly coalesced: number;
}

/**
 * The plan for a run of `total` missed slots whose latest ones are `missed` (ascending; at
 * least as many as the policy may create — all of them when `total` is omitted).
 */
export function planMisfire(policy: MisfirePolicy, missed: readonly number[], total: number = missed.length): MisfirePlan {
  const n = Math.max(total, missed.length);
  if (n === 0) return { create: [], skipped: 0, coalesced: 0 };
  switch (policy.policy) {
    case 'skip':
      return { create: [], skipped: n, coalesced: 0 };
    case 'fire_once':
      return { create: [missed[missed.length - 1] as number], skipped: 0, coalesced: n - 1 };
    case 'catch_up': {
      const keep = Math.min(policy.max, missed.length);
      return { create: missed.slice(missed.length - keep), skipped: n - keep, coalesced: 0 };
    }
  }
}
