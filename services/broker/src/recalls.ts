/**
 * Recalls of held dispatches (R9 prefetch), once per timers pass: reads which dispatches the
 * workers hold (their registry entries, `held`), asks `planRecalls` which to take back, and sends
 * each worker a `RECALL` cancel on its control queue. The worker answers a released one with a
 * `RECALLED` refusal (replies.ts: back to PENDING without an attempt, reservation released); one
 * already started just runs. Nothing here changes MySQL: a recall lost on the way costs nothing.
 */
import { RECALL_REASON, capacityOf } from '@ax/core';
import { requestCancel } from '@ax/bus';
import { toError } from '@ax/kit';
import type { BrokerContext } from './context.js';
import { planRecalls, type Holder } from './recall-plan.js';

/** How long a recalled id is not recalled again (its answer, or its start, shows by then). */
const RECALL_QUIET_MS = 10_000;

const sentByContext = new WeakMap<BrokerContext, Map<string, number>>();

/** Sends the recalls of one pass; returns how many dispatches were recalled. */
export async function recallHeld(ctx: BrokerContext, nowMs = Date.now()): Promise<number> {
  const registry = await ctx.workers.registry();
  const holders: Holder[] = [];
  for (const w of registry) {
    if (w.held === undefined || w.held.length === 0) continue;
    const sinceEntryMs = Math.max(0, nowMs - Date.parse(w.at));
    holders.push({ workerId: w.workerId, held: w.held.map((h) => ({ executionId: h.executionId, heldForMs: h.heldMs + sinceEntryMs })) });
  }
  if (holders.length === 0) return 0;
  const sent = sentByContext.get(ctx) ?? new Map<string, number>();
  sentByContext.set(ctx, sent);
  for (const [id, at] of sent) if (nowMs - at > RECALL_QUIET_MS) sent.delete(id);
  const holding = new Set(holders.map((h) => h.workerId));
  const free = new Map<string, number>();
  for (const s of await ctx.workers.snapshots()) {
    // A worker with free *run* slots: nothing held there, reservations (held included) below its slots.
    if (s.draining || holding.has(s.id) || capacityOf(s) === 0) continue;
    free.set(s.id, Math.max(0, s.slots - s.running));
  }
  const plan = planRecalls(holders, free, ctx.config.recallHeldAfterMs, new Set(sent.keys()));
  let recalled = 0;
  for (const r of plan) {
    try {
      await requestCancel(ctx.bus, { workerId: r.workerId, executionIds: r.executionIds, reason: RECALL_REASON });
      for (const id of r.executionIds) sent.set(id, nowMs);
      recalled += r.executionIds.length;
      ctx.logger.info({ workerId: r.workerId, executions: r.executionIds.length }, 'recalled held dispatches (R9 prefetch): another worker has a free slot');
    } catch (error) {
      ctx.logger.warn({ err: toError(error), workerId: r.workerId }, 'recall not sent; the next pass tries again');
    }
  }
  return recalled;
}
