/**
 * Queue depth per worker queue (metric) and the BACKLOG alert when a worker's queue holds more
 * than `backlogFactor` × its slots (DESIGN §7). R9 keeps queues short, so a backlog means
 * something is wrong (a worker that stopped consuming).
 */
import { raiseAlert } from '@ax/store';
import type { BrokerContext } from './context.js';

/** One pass; returns the depth per worker. */
export async function checkBacklogOnce(ctx: BrokerContext): Promise<Map<string, number>> {
  const depths = new Map<string, number>();
  for (const worker of await ctx.workers.registry()) {
    const depth = await ctx.bus.queueDepth(ctx.bus.topology.workerQueue(worker.workerId));
    if (depth === null) continue;
    depths.set(worker.workerId, depth.messageCount);
    ctx.metrics.queueDepth.set({ worker: worker.workerId }, depth.messageCount);
    if (depth.messageCount > ctx.config.backlogFactor * Math.max(1, worker.slots)) {
      await raiseAlert(ctx.pool, {
        kind: 'BACKLOG',
        severity: 'warning',
        subject: `worker:${worker.workerId}:${new Date().toISOString().slice(0, 13)}`,
        workerId: worker.workerId,
        message: `queue of worker ${worker.workerId} holds ${depth.messageCount} messages, over ${ctx.config.backlogFactor}× its ${worker.slots} slots`,
      });
    }
  }
  return depths;
}
