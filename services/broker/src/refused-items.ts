/**
 * Items refused alone (#45, DESIGN §11 "Noisy neighbours"): `parseMessageByItem` reads a
 * worker's batched reply item by item, and the consumers (replies.ts, log-chunks.ts) apply the
 * good items as before. A refused item is counted (`ax_refused_items_total{kind,reason}`),
 * logged with its execution id, and dropped, not dead-lettered: the dead-letter store keeps
 * whole messages of a source queue, so a lone item would need a second, confirmed publish from
 * inside the consumer (a new way to fail mid-batch) and would let one broken or hostile worker
 * fill the table; the log line and, for a result, the execution's own run log say what was
 * refused and why.
 *
 * A refused result whose ids are readable is not simply dropped: the worker finished that
 * execution and will not say so again, so dropping it would leave the instance RUNNING until
 * its lease ran out and then end it LOST_WORKER, the wrong reason. It is applied as a FAILED
 * result naming the refusal instead ({@link failedResultOf}), through the same fencing as any
 * result: the worker could have sent that FAILED itself, so it grants nothing new.
 */
import { RESULT_ERROR_MAX_LENGTH, type ItemwiseKind, type RefusedItem, type ResultItem } from '@ax/core';
import type { Logger } from '@ax/kit';
import type { BrokerMetrics } from './metrics.js';

/** Counts and logs each refused item of one message. */
export function reportRefusedItems(
  metrics: Pick<BrokerMetrics, 'refusedItems'>,
  logger: Logger,
  kind: ItemwiseKind,
  workerId: string,
  refused: readonly RefusedItem[],
): void {
  for (const item of refused) {
    metrics.refusedItems.inc({ kind, reason: item.cause });
    logger.warn({ kind, workerId, executionId: item.executionId, instanceId: item.instanceId, cause: item.cause, reason: item.reason }, 'message item refused alone; the rest of its message applied');
  }
}

/**
 * The FAILED result applied for a refused result item, or `undefined` when the item does not
 * say which execution it is about (then it can only be dropped). `endedAt`: now (ISO-8601).
 */
export function failedResultOf(refused: RefusedItem, endedAt: string): ResultItem | undefined {
  if (refused.executionId === undefined || refused.instanceId === undefined) return undefined;
  return {
    executionId: refused.executionId,
    instanceId: refused.instanceId,
    outcome: 'FAILED',
    exitCode: null,
    error: `result refused by the broker: ${refused.reason}`.slice(0, RESULT_ERROR_MAX_LENGTH),
    endedAt,
  };
}
