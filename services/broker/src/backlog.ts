/**
 * Queue depth per worker queue (`ax_worker_queue_depth`). Only a metric: R9 never lets a worker
 * queue grow, so the depth says little about a backlog. The BACKLOG alert comes from the real
 * backlog, due work not dispatched by team (backlog-scan.ts); the alert this pass used to raise
 * (a queue over 100× its worker's slots) could not fire under R9 (#45).
 */
import type { BrokerContext } from './context.js';

/** One pass; returns the depth per worker. */
export async function readQueueDepthsOnce(ctx: BrokerContext): Promise<Map<string, number>> {
  const depths = new Map<string, number>();
  for (const worker of await ctx.workers.registry()) {
    const depth = await ctx.bus.queueDepth(ctx.bus.topology.workerQueue(worker.workerId));
    if (depth === null) continue;
    depths.set(worker.workerId, depth.messageCount);
    ctx.metrics.queueDepth.set({ worker: worker.workerId }, depth.messageCount);
  }
  return depths;
}
