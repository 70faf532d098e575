/**
 * The dispatch loop (DESIGN §4): claim due PENDING instances, apply `maxLatenessSeconds` (R5)
 * and the block strategy (R4), route over the registry with slot reservations (R9), mark
 * DISPATCHED with a generous ACK deadline and an execution row, commit, publish one message per
 * worker (R10, mandatory, confirmed, by queue name on the default exchange: R24), then start the ACK deadline from the confirm (R8).
 * An instance without an eligible worker stays PENDING (R11); so does one whose team has its
 * `maxRunning` instances DISPATCHED or RUNNING (DESIGN §11, decided under the team rows' locks),
 * and one below `AX_BACKLOG_DEFER_BELOW_PRIORITY` while its pool's backlog holds (backlog-deferral.ts).
 *
 * This file keeps the turn and the order of the steps; the claim transaction is
 * dispatch-claim.ts, the per-instance decisions claim-plan.ts (pure), the reservations
 * dispatch-slots.ts, the publish dispatch-publish.ts and returned dispatches dispatch-returned.ts.
 */
import { freeSlots, type WorkerSnapshot } from '@ax/core';
import { isDispatchPaused, anyDuePending } from '@ax/store';
import type { BrokerContext } from './context.js';
import { claim, EMPTY, type DispatchOutcome } from './dispatch-claim.js';
import { cancelRun, publishPlanned } from './dispatch-publish.js';
import { settleCommitted } from './dispatch-slots.js';
import { giveTurn, takeTurn } from './dispatch-turn.js';

export type { Planned } from './claim-plan.js';
export type { DispatchOutcome } from './dispatch-claim.js';
export { cancelRun, publishPlanned } from './dispatch-publish.js';
export { handleReturned } from './dispatch-returned.js';

/** One dispatch iteration; returns what it did. Never publishes before the commit. */
export async function dispatchOnce(ctx: BrokerContext): Promise<DispatchOutcome> {
  const { config } = ctx;
  // Nothing due (an idle poll, a wake-up for work another broker took): one plain read
  // instead of the turn, the pause flag and an empty claim transaction.
  if (!(await anyDuePending(ctx.pool))) return EMPTY;
  const turnKey = ctx.keys.lock('dispatch');
  const turn = await takeTurn(ctx.redis, turnKey, config.brokerId);
  if (turn === 'busy') {
    // Another broker is claiming: look again right after its commit, not at the next poll.
    setTimeout(() => ctx.wakeDispatch(), TURN_RETRY_MS).unref();
    return EMPTY;
  }
  let held = turn === 'mine';
  const endTurn = async (): Promise<void> => {
    if (!held) return;
    held = false;
    await giveTurn(ctx.redis, turnKey, config.brokerId);
  };
  try {
    return await claimAndPublish(ctx, endTurn);
  } finally {
    await endTurn();
  }
}

/** How soon a broker that found the dispatch turn taken looks again. */
const TURN_RETRY_MS = 20;

/**
 * Claims, plans and commits under the turn (dispatch-claim.ts, claim-plan.ts); `endTurn` is
 * called after the commit, before the publish (dispatch-publish.ts).
 */
async function claimAndPublish(ctx: BrokerContext, endTurn: () => Promise<void>): Promise<DispatchOutcome> {
  const { config, pool } = ctx;
  if (await isDispatchPaused(pool)) return EMPTY;
  const snapshots = (await ctx.workers.snapshots()).map((w) => ({ ...w }));
  const nowMs = performance.now();
  const size = claimSize(config.dispatchBatchSize, snapshots, nowMs - ctx.claimPace.lastSmallClaimAtMs, config.dispatchPollMs);
  if (size <= 0) return EMPTY;
  if (size === MIN_CLAIM) ctx.claimPace.lastSmallClaimAtMs = nowMs;
  const granted = await ctx.rateLimiter.take(size);
  if (granted <= 0) return EMPTY;
  const { planned, outcome, reserved, cancels } = await claim(ctx, granted, snapshots, MIN_CLAIM);
  await settleCommitted(ctx, reserved, planned, granted);
  await endTurn(); // committed and reservations settled: the next broker may claim while this one publishes
  await Promise.all([publishPlanned(ctx, planned), ...cancels.map((run) => cancelRun(ctx, run, 'COVERED'))]);
  // A full claim that moved something: more may be waiting, go again at once. One that only
  // deferred (every slot taken, serial tasks busy) waits for a result or the poll: going again
  // at once re-claimed the same rows in a loop.
  if (outcome.claimed >= granted && granted > 0 && outcome.dispatched + outcome.canceled > 0) ctx.wakeDispatch();
  return outcome;
}

/**
 * How many instances to claim: no more than the free slots of the routable workers, since
 * what cannot be routed is only locked, read with its task and let go (at full load most of a
 * 500-row claim was, and half the claims found every slot taken). At least `MIN_CLAIM`, so
 * instances that need no slot (late, discarded, of a deleted task) and R11's `NO_WORKER`
 * bookkeeping still move; while every slot is taken, such a small claim runs at most once per
 * `minIntervalMs` (0 = skip this time).
 */
export function claimSize(batchSize: number, workers: readonly WorkerSnapshot[], sinceSmallClaimMs: number, minIntervalMs: number): number {
  let free = 0;
  for (const w of workers) if (!w.draining) free += Math.max(0, freeSlots(w));
  if (free === 0 && workers.some((w) => !w.draining) && sinceSmallClaimMs < minIntervalMs) return 0;
  return Math.min(batchSize, Math.max(MIN_CLAIM, free));
}

/** The smallest claim (see `claimSize`). */
export const MIN_CLAIM = 20;
