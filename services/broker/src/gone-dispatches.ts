/**
 * What became of a dispatch to a worker without a consumer (#23: an execution that started is
 * accounted as started, however early its worker died).
 *
 * A worker AMQP-acks a dispatch message only after recording its items in its outbox, and starts
 * no job before that ack is written (worker.ts defers every start past it). So once its consumer
 * is gone, its queue tells the truth: a dispatch still in the queue never reached it — it is
 * taken out (so a worker that comes back cannot run it too) and re-routed at once, no attempt
 * spent; a dispatch no longer there was taken by the worker and may have started — when its
 * ACK deadline passes it is LOST_WORKER (a failed attempt) if the worker is gone, and waits if
 * the worker is alive but cut off from RabbitMQ (it holds the execution like a running one and
 * reports it when its link returns). With several brokers, one may count as lost a dispatch
 * another has just taken out and not yet re-routed: an attempt spent, never a second run.
 */
import { parseMessage } from '@ax/core';
import type { WorkerRegistration } from '@ax/redis';
import type { BrokerContext } from './context.js';

/** Most messages read out of one worker's queue per timers pass. */
const TAKE_MAX_MESSAGES = 1_000;

/**
 * Takes the dispatches out of the queue of every worker among `workerIds` whose control queue
 * had no consumer at the last reading, and of every worker among `unregistered` (no registry
 * entry: it left or its lease ran out); returns their execution ids (they never reached it). A
 * `basic.get` only ever takes a message no consumer was given, so this is safe even if such a
 * worker still has a consumer (frozen past its lease).
 */
export async function takeQueuedDispatches(ctx: BrokerContext, workerIds: Iterable<string>, unregistered: Iterable<string> = []): Promise<Set<string>> {
  const ids = new Set<string>();
  const orphans = new Set(unregistered);
  for (const workerId of new Set([...workerIds, ...orphans])) {
    if (!orphans.has(workerId) && !ctx.presence.isConsumerMissing(workerId)) continue;
    const bodies = await ctx.bus.takeMessages(ctx.bus.topology.workerQueue(workerId), TAKE_MAX_MESSAGES);
    if (bodies === null || bodies.length === 0) continue;
    let items = 0;
    for (const body of bodies) {
      const parsed = parseMessage(body);
      if (!parsed.ok || parsed.message.kind !== 'dispatch') continue;
      for (const item of parsed.message.items) ids.add(item.executionId);
      items += parsed.message.items.length;
    }
    ctx.logger.info({ workerId, messages: bodies.length, items, registered: !orphans.has(workerId) }, 'dispatches taken back from the queue of a worker without a consumer or registry entry');
  }
  return ids;
}

/** What a timers pass read of the workers: those found gone, and the registry entries (null: unreadable). */
export interface WorkerReadings {
  readonly gone: ReadonlySet<string>;
  readonly entries: ReadonlyMap<string, WorkerRegistration> | null;
}

/** What an expired dispatch becomes: re-routed (R8), counted as a started attempt that was lost, or left to wait. */
export type ExpiredDispatchDecision = 'reroute' | 'lost' | 'wait';

/** What the broker knows of the worker an expired dispatch went to. */
export interface ExpiredDispatchFacts {
  /** Gone by the fast signal (worker-presence.ts). */
  readonly gone: boolean;
  /** Its control queue had no consumer at the last clear reading. */
  readonly consumerMissing: boolean;
  /**
   * Its registry entry as read this pass: null = no entry (the lease ran out or it left),
   * undefined = the registry could not be read.
   */
  readonly entry: { readonly at: string; readonly runningExecutionIds: readonly string[] } | null | undefined;
  readonly executionId: string;
  /** The dispatch's ACK deadline (database clock); never earlier than the one the worker got. */
  readonly ackDeadline: Date | null;
  /** How far a worker's clock may be off (`AX_WORKER_SKEW_LIMIT_MS`): a worker past it refuses all work. */
  readonly skewLimitMs: number;
}

/**
 * Pure: an expired dispatch (no ACK by its deadline, R8) that is no longer in its worker's
 * queue — so the worker took it (#23). Re-routing it is safe only when the worker provably does
 * not hold it and never will: its registry entry, written after the worker could last have
 * accepted it (`ackDeadline`, by a clock at most `skewLimitMs` off), does not list it. A worker
 * that lists it holds it (a slow ACK, RabbitMQ holding its publishes): wait. A worker silent
 * since then (frozen, or its event loop stalled) may have started it: wait until its lease runs
 * out or it is found gone, then count it lost — an attempt spent, never a second run behind the
 * first one's back. The worker, for its part, starts nothing it accepted before such a silence
 * (lease-watch.ts in the worker).
 */
export function decideExpiredDispatch(f: ExpiredDispatchFacts): ExpiredDispatchDecision {
  if (f.gone) return 'lost';
  if (f.entry === undefined) return 'wait'; // the registry could not be read: decide nothing
  if (f.entry === null) return 'lost';
  if (f.consumerMissing) return 'wait'; // alive without its RabbitMQ link: it holds the dispatch
  if (f.entry.runningExecutionIds.includes(f.executionId)) return 'wait';
  const writtenAtMs = Date.parse(f.entry.at);
  if (f.ackDeadline === null || (Number.isFinite(writtenAtMs) && writtenAtMs >= f.ackDeadline.getTime() + f.skewLimitMs)) return 'reroute';
  return 'wait';
}

/** {@link decideExpiredDispatch} for a dispatch to `workerId`, from this pass's readings and the broker's presence memory. */
export function decideExpiredDispatchOf(
  ctx: Pick<BrokerContext, 'presence' | 'config'>,
  workers: WorkerReadings,
  dispatch: { readonly workerId: string; readonly executionId: string; readonly ackDeadline: Date | null },
): ExpiredDispatchDecision {
  return decideExpiredDispatch({
    gone: workers.gone.has(dispatch.workerId),
    consumerMissing: ctx.presence.isConsumerMissing(dispatch.workerId),
    entry: workers.entries === null ? undefined : (workers.entries.get(dispatch.workerId) ?? null),
    executionId: dispatch.executionId,
    ackDeadline: dispatch.ackDeadline,
    skewLimitMs: ctx.config.workerSkewLimitMs,
  });
}
