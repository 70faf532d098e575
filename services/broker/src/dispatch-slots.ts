/**
 * R9 around the claim: the slots of a claim's plan are reserved inside the claim transaction
 * (briefly, `PRE_COMMIT_RESERVATION_MS`) and, once it committed, extended over the publish
 * allowance for what was committed and given back for the rest. Every reservation made is
 * remembered in the claim's `reserved` list so that a failed transaction gives them all back.
 */
import { capacityOf, slotCapFor, type WorkerSnapshot } from '@ax/core';
import type { BrokerContext } from './context.js';
import type { Planned } from './claim-plan.js';
import { bestEffort } from './best-effort.js';
import { extendAll, releaseAll } from './reservations.js';

/** A reservation the claim made (and must settle). */
export interface Reserved {
  readonly workerId: string;
  readonly executionId: string;
}

/**
 * How long a slot reserved inside the claim transaction lives until the commit extends it. A
 * broker killed inside that transaction leaves reservations nobody releases, and since a claim
 * takes every free slot (`claimSize`) they hold every worker full for this long: 38 s with the
 * publish allowance, 18 s with ACK timeout + grace + 10 s (fault drill 3). The claim
 * transaction takes well under a second. One that outlives this (lock waits) dispatches
 * without the expired reservations; the worker then queues locally and an item that waits
 * past its ACK deadline is refused EXPIRED and re-routed (R8).
 */
const PRE_COMMIT_RESERVATION_MS = 5_000;

/**
 * R21: one slot per shard, in order, all or nothing; returns the id of the worker found full
 * (another broker filled it meanwhile: what this instance took is given back), or null.
 */
export async function reserveShards(
  ctx: BrokerContext,
  shards: ReadonlyArray<{ readonly workerId: string; readonly slots: number; readonly executionId: string }>,
  reserved: Reserved[],
): Promise<string | null> {
  const got: Reserved[] = [];
  for (const s of shards) {
    const ok = await ctx.reservations.reserve(s.workerId, s.slots, [s.executionId], PRE_COMMIT_RESERVATION_MS);
    if (ok !== 1) {
      await releaseAll(ctx.reservations, got);
      return s.workerId;
    }
    got.push({ workerId: s.workerId, executionId: s.executionId });
  }
  reserved.push(...got);
  return null;
}

/**
 * Reserves the slots of the routed plan, one Lua call per worker; returns the execution ids
 * a worker refused (it filled up meanwhile: never beyond its slots).
 */
export async function reserveChosen(ctx: BrokerContext, workers: WorkerSnapshot[], chosen: readonly Planned[], reserved: Reserved[]): Promise<Set<string>> {
  const byWorker = new Map<string, { workerId: string; slots: number; ids: string[] }>();
  // One reservation per worker and cap: below a worker's reserve priority the cap leaves its
  // reserved slots free (`slotCapFor`), so the Lua check holds that line across brokers too.
  for (const p of chosen) {
    const slots = slotCapFor(p.worker, p.instance.priority);
    const key = `${p.worker.id}\u0000${slots}`;
    const entry = byWorker.get(key) ?? { workerId: p.worker.id, slots, ids: [] };
    entry.ids.push(p.executionId);
    byWorker.set(key, entry);
  }
  const refused = new Set<string>();
  await Promise.all(
    [...byWorker.values()].map(async ({ workerId, slots, ids }) => {
      const granted = await ctx.reservations.reserve(workerId, slots, ids, PRE_COMMIT_RESERVATION_MS);
      for (const id of ids.slice(0, granted)) reserved.push({ workerId, executionId: id });
      for (const id of ids.slice(granted)) refused.add(id);
      if (granted < ids.length) {
        const target = workers.find((w) => w.id === workerId);
        if (target !== undefined) target.running = capacityOf(target);
      }
    }),
  );
  return refused;
}

/** After a failed claim transaction: every reservation it made goes back. */
export async function releaseFailedClaim(ctx: BrokerContext, reserved: readonly Reserved[]): Promise<void> {
  await bestEffort(ctx.logger, 'slots of a failed claim', [() => releaseAll(ctx.reservations, reserved)]);
}

/**
 * After the commit: reservations made for plans that did not survive (lost race) are given
 * back; the kept ones now cover the publish allowance too (see PRE_COMMIT_RESERVATION_MS), and
 * the rate not used is refunded. None of this may stop the publish of what is committed
 * (best-effort.ts).
 */
export async function settleCommitted(ctx: BrokerContext, reserved: readonly Reserved[], planned: readonly Planned[], granted: number): Promise<void> {
  const kept = new Set(planned.map((p) => p.executionId));
  await bestEffort(ctx.logger, 'slots and rate of a committed dispatch', [
    () => releaseAll(ctx.reservations, reserved.filter((r) => !kept.has(r.executionId))),
    () => extendAll(ctx.reservations, reserved.filter((r) => kept.has(r.executionId)), ctx.config.ackTimeoutMs + ctx.config.publishAllowanceMs + ctx.config.ackGraceMs),
    () => ctx.rateLimiter.refund(granted - planned.length),
  ]);
}
