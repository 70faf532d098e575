/**
 * Backlog deferral, the pure half (issue #22; the loop is services/broker/src/backlog-deferral.ts).
 *
 * While a worker pool is backlogged with work that matters, instances below a configured
 * priority are held back (left PENDING) so that the pool's slots go to that work; when the
 * backlog clears they dispatch normally, by priority. This module decides: which pool an
 * instance belongs to, whether a pool's backlog holds after a reading (with hysteresis), and
 * which priorities pass.
 *
 * - Pool: the workers that can serve a routing request, i.e. a (team, tag set). Every task with
 *   the same team and tags routes to exactly the same workers (`canServe`), so the key
 *   `<team>/<sorted tags>` names one pool. Pools may share workers (a worker tagged
 *   `etl,gpu` serves `etl` tasks and `etl,gpu` tasks); each is measured on its own.
 * - Important work: instances of priority ≥ `belowPriority`. They are never deferred.
 * - Load: the pool's important instances that want or hold a slot (due PENDING, DISPATCHED,
 *   RUNNING), against its slots (the sum over its non-draining workers).
 * - Holds when load > `holdAbovePercent` % of the slots (default 100: important work has to
 *   wait for a slot); clears when load ≤ half of that (default: it needs no more than half the
 *   pool). Between the two the previous state stays (hysteresis, so the hold does not flap).
 *
 * Why only important work is counted: a measure that counted the held instances could never
 * fall while they are held (a flood of low-priority work would hold itself forever), and one
 * that counted everything while not holding but only the important part while holding flaps
 * on every reading. Counting important work only, a flood of low-priority work alone never
 * holds (the pool runs it at full speed), and a hold always ends because important work is
 * never held. Why clear below the hold point: claims are already ordered by priority, so as
 * long as important work waits it takes every freed slot anyway; what the hold adds is the
 * time after that, when important work fits again: low-priority runs started then would hold
 * slots for their whole duration and the next important burst would wait behind them. Until
 * the load falls to half, the freed slots stay open for it.
 *
 * Why not the old per-worker BACKLOG alert (queue depth over 100 × slots): R9 never
 * publishes beyond a worker's free slots, so a deep queue means one worker stopped consuming,
 * not that the pool has more work than slots; holding other teams' work would not help it.
 * A pool without workers is not backlogged either (that is R11's NO_WORKER: nothing runs).
 */

/** The operating parameters of deferral (broker settings). */
export interface BacklogDeferralPolicy {
  /** `AX_BACKLOG_DEFER_BELOW_PRIORITY`: instances of lower priority are held while the backlog holds (1..10). */
  readonly belowPriority: number;
  /** `AX_BACKLOG_DEFER_HOLD_PERCENT`: the hold starts above this load, in % of the pool's slots; clears at half. Default 100. */
  readonly holdAbovePercent: number;
}

/** One reading of a pool. */
export interface PoolLoad {
  /** Slots of the pool's non-draining workers. */
  readonly slots: number;
  /** Its instances of priority ≥ `belowPriority` that are due PENDING, DISPATCHED or RUNNING. */
  readonly important: number;
}

/** What a routing request contributes to the pool key. */
export interface PoolRequest {
  readonly tags: readonly string[];
  readonly team: string;
}

/** The pool of a routing request: `<team>/<tags sorted, comma-separated>` (`*` for no tags). */
export function poolKeyOf(request: PoolRequest): string {
  const tags = [...new Set(request.tags)].sort();
  return `${request.team}/${tags.length === 0 ? '*' : tags.join(',')}`;
}

/** The load above which a hold starts (and half of it, at or below which it clears). */
export function holdThresholds(slots: number, policy: Pick<BacklogDeferralPolicy, 'holdAbovePercent'>): { holdAbove: number; clearAtOrBelow: number } {
  const holdAbove = (Math.max(0, slots) * policy.holdAbovePercent) / 100;
  return { holdAbove, clearAtOrBelow: holdAbove / 2 };
}

/**
 * Whether the pool's backlog holds after `load` was read, given whether it held before.
 * A pool without slots never holds (R11: nothing could run there anyway).
 */
export function nextBacklogHold(heldBefore: boolean, load: PoolLoad, policy: Pick<BacklogDeferralPolicy, 'holdAbovePercent'>): boolean {
  if (load.slots <= 0) return false;
  const { holdAbove, clearAtOrBelow } = holdThresholds(load.slots, policy);
  return heldBefore ? load.important > clearAtOrBelow : load.important > holdAbove;
}

/** True when an instance of `priority` is held while its pool's backlog holds (never at or above `belowPriority`). */
export function isDeferrable(priority: number, policy: Pick<BacklogDeferralPolicy, 'belowPriority'>): boolean {
  return priority < policy.belowPriority;
}
