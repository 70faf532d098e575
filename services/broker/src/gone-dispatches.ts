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
import type { BrokerContext } from './context.js';

/** Most messages read out of one worker's queue per timers pass. */
const TAKE_MAX_MESSAGES = 1_000;

/**
 * Takes the dispatches out of the queue of every worker among `workerIds` whose control queue
 * had no consumer at the last reading; returns their execution ids (they never reached it).
 */
export async function takeQueuedDispatches(ctx: BrokerContext, workerIds: Iterable<string>): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const workerId of new Set(workerIds)) {
    if (!ctx.presence.isConsumerMissing(workerId)) continue;
    const bodies = await ctx.bus.takeMessages(ctx.bus.topology.workerQueue(workerId), TAKE_MAX_MESSAGES);
    if (bodies === null || bodies.length === 0) continue;
    let items = 0;
    for (const body of bodies) {
      const parsed = parseMessage(body);
      if (!parsed.ok || parsed.message.kind !== 'dispatch') continue;
      for (const item of parsed.message.items) ids.add(item.executionId);
      items += parsed.message.items.length;
    }
    ctx.logger.info({ workerId, messages: bodies.length, items }, 'dispatches taken back from the queue of a worker without a consumer');
  }
  return ids;
}

/** What an expired dispatch becomes. */
export type ExpiredDispatchDecision = 'as-before' | 'lost' | 'wait';

/**
 * Pure: an expired dispatch (no ACK by its deadline) that is no longer in its worker's queue.
 * `as-before` (re-route, R8) while the worker's consumer is there; `lost` once the worker is
 * gone; `wait` while it is alive without a consumer.
 */
export function decideExpiredDispatch(consumerMissing: boolean, gone: boolean): ExpiredDispatchDecision {
  if (gone) return 'lost';
  return consumerMissing ? 'wait' : 'as-before';
}
