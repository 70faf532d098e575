/** R8: what a dispatch the bus returned unroutable (its worker's queue is gone) becomes. */
import { parseMessage } from '@ax/core';
import type { ReturnedMessage } from '@ax/bus';
import { appendEvents, setExecutionState, transitionInstance, type NewEvent } from '@ax/store';
import type { BrokerContext } from './context.js';
import { inTransaction } from './transaction.js';

/**
 * R8: a dispatch that came back unroutable (its worker's queue is gone) is re-routed without
 * counting: DISPATCHED → PENDING fenced by its execution, RETURNED event, slot released.
 */
export async function handleReturned(ctx: BrokerContext, returned: ReturnedMessage): Promise<void> {
  const parsed = parseMessage(returned.body);
  if (!parsed.ok || parsed.message.kind !== 'dispatch') return;
  const message = parsed.message;
  ctx.workers.markUnroutable(message.workerId, 5_000);
  const rerouted: string[] = [];
  await inTransaction(ctx, async (conn) => {
    const events: NewEvent[] = [];
    for (const item of message.items) {
      const won = await transitionInstance(conn, {
        id: item.instanceId,
        from: 'DISPATCHED',
        to: 'PENDING',
        fenceExecutionId: item.executionId,
        set: { ack_deadline: null },
      });
      if (!won) continue;
      rerouted.push(item.executionId);
      events.push({ instanceId: item.instanceId, type: 'RETURNED', executionId: item.executionId, workerId: message.workerId, message: 'unroutable: the worker queue is gone; re-routed without counting' });
    }
    await setExecutionState(conn, rerouted, 'RETURNED', 'UNROUTABLE', { ended: true, onlyFrom: ['DISPATCHED'] });
    await appendEvents(conn, events);
  });
  await ctx.reservations.release(message.workerId, message.items.map((i) => i.executionId));
  ctx.metrics.returned.inc(rerouted.length);
  if (rerouted.length > 0) ctx.wakeDispatch();
}
