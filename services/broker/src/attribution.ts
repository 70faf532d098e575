/**
 * R24 in the broker (ENROLLMENT-CONTRACT point 4): an ACK, refusal, result or log chunk is
 * applied only when the validated RabbitMQ user that sent it (`BusMessage.userId`) may speak for
 * the worker the execution was dispatched to (the execution row's `worker_id`, never the
 * message's own `workerId` claim); a heartbeat likewise for the worker it names. Anything else is
 * dropped alone, as refused items are (refused-items.ts): counted in
 * `ax_unattributed_items_total{kind}` and logged at warn with the user, execution and worker,
 * never the payload; the rest of its message applies.
 */
import { isAttributed, mayRelayReport } from '@ax/core';
import type { Logger } from '@ax/kit';
import type { BrokerContext } from './context.js';

/** What an item is. */
export type AttributedKind = 'ack' | 'refusal' | 'result' | 'report' | 'log' | 'heartbeat';

/** One item to attribute. */
export interface AttributionFacts {
  readonly kind: AttributedKind;
  /** The message's validated `user_id` (undefined: none). */
  readonly sender: string | undefined;
  /** The worker the execution was dispatched to (for a heartbeat: the worker it names). */
  readonly workerId: string;
  readonly executionId?: string;
  /** The worker the message claims to come from (logged when it differs). */
  readonly claimedWorkerId?: string;
}

/**
 * True when the item may be applied; otherwise counts and logs it. A business's report (a result
 * with origin `report`, relayed by admin-api) may come from a service login only, whatever the
 * worker.
 */
export function attributed(ctx: Pick<BrokerContext, 'config' | 'metrics'>, logger: Logger, facts: AttributionFacts): boolean {
  const ok = facts.kind === 'report' ? mayRelayReport(facts.sender) : isAttributed(ctx.config.namespace, facts.sender, facts.workerId);
  if (ok) return true;
  ctx.metrics.unattributedItems.inc({ kind: facts.kind });
  logger.warn(
    {
      kind: facts.kind,
      user: facts.sender ?? null,
      executionId: facts.executionId,
      workerId: facts.workerId,
      ...(facts.claimedWorkerId !== undefined && facts.claimedWorkerId !== facts.workerId ? { claimedWorkerId: facts.claimedWorkerId } : {}),
    },
    "item not sent by its worker's enrollment (R24); dropped alone, the rest of its message applied",
  );
  return false;
}
