/**
 * Redis bookkeeping that follows a committed dispatch (slot releases and extensions, rate
 * refunds) never keeps the dispatch from being published. The instance is committed DISPATCHED
 * with the publish allowance in its ACK deadline, and its ACK clock starts only from the
 * publish confirm (R8): a publish skipped because Redis failed first left the job waiting
 * ACK timeout + publish allowance + grace before its re-route (41 s in the Redis Sentinel
 * drill, 2026-12-06, killed at the instant of a dispatch).
 *
 * What a failure here loses heals by itself: a release not made expires with its reservation,
 * an extension not made lets the reservation lapse early (nothing can reserve while Redis is
 * away; after it, a worker offered more than its free slots queues locally, and R8 re-routes
 * what waits past its deadline), and a refund not made only slows the rate limit for a second.
 */
import { toError, type Logger } from '@ax/kit';

/** Runs every step, logs the ones that failed under `what`, never throws. */
export async function bestEffort(logger: Logger, what: string, steps: ReadonlyArray<() => Promise<void>>): Promise<void> {
  const results = await Promise.allSettled(steps.map((step) => step()));
  for (const result of results) {
    if (result.status === 'rejected') logger.warn({ err: toError(result.reason) }, `${what}: not settled, going on without it`);
  }
}
