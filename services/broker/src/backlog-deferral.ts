/**
 * Backlog deferral (issue #22): while a worker pool is backlogged with work that matters,
 * instances below `AX_BACKLOG_DEFER_BELOW_PRIORITY` are held back — left PENDING and due, never
 * claimed for that pool — and released when the backlog clears; then they dispatch normally,
 * by priority. Off by default (0). The decisions are pure (@ax/core `backlog-deferral.ts`,
 * where the reasons for the measure are written down); this file is the I/O around them.
 *
 * What an operator sets and sees:
 * - `AX_BACKLOG_DEFER_BELOW_PRIORITY=P` (0..9, 0 = off) and `AX_BACKLOG_DEFER_HOLD_PERCENT`
 *   (default 100): a pool (the workers serving one team + tag set) holds once its instances of
 *   priority ≥ P that are due PENDING, DISPATCHED or RUNNING exceed that % of its slots, and
 *   clears at or below half of it. Instances of priority ≥ P are never held.
 * - Event `DEFERRED` (data `{reason: 'BACKLOG', pool, belowPriority, since, important, slots}`)
 *   once per held instance per hold; the instance's next event is the normal `DISPATCHED`
 *   (or `CANCELED`, …) once the hold ends. No state changes: a held instance is PENDING like
 *   any other, so nothing can be lost or doubled — claims stay the conditional updates they are.
 * - A `BACKLOG` alert (warning, subject `pool:<pool>:<since>`) when a hold starts; the broker
 *   logs the start and the end.
 * - Metrics: `ax_backlog_hold{pool}` 1 while held; `ax_dispatch_deferred_instances{pool}` the
 *   instances held now; `ax_dispatch_deferred_total{pool}` DEFERRED events written.
 *
 * How it runs: every `backlogDeferPollMs` one grouped read counts each task's instances above
 * and below P, the tasks' definitions name their pools, the registry gives each pool's slots.
 * The holds are shared by every broker in a Redis hash (`<ns>:backlog-holds`, pool → start on
 * the database clock): a hold starts with `HSETNX` (the first broker's start stands, so "once
 * per hold" means the same hold everywhere) and ends with `HDEL`; every broker applies the same
 * policy to the same readings, so they agree. Without Redis a broker keeps its own view.
 * The dispatch loop reads the last pass: the claim leaves out the held instances of the tasks
 * the pass saw (`claimDuePending` `defer`), and any other held instance it claims (a task new
 * since the pass) it lets go, with its DEFERRED event. The pass writes the events of the held
 * instances the claim never sees, a bounded batch per pass under `FOR UPDATE SKIP LOCKED`.
 */
import { canServe, isDeferrable, nextBacklogHold, poolKeyOf, holdThresholds, type BacklogDeferralPolicy, type PoolRequest, type WorkerSnapshot } from '@ax/core';
import { toError } from '@ax/kit';
import { databaseNow, deferralLoadByTask, loadTasksById, lockDeferrable, raiseAlert, recordDeferredOnce, type Queryable } from '@ax/store';
import type { BrokerContext } from './context.js';
import { inTransaction } from './transaction.js';

/** One pool's hold. */
export interface PoolHold {
  readonly pool: string;
  /** When it started, on the database clock (DEFERRED events since then count for this hold). */
  readonly since: Date;
  /** The reading that holds it, for the events' message. */
  readonly important: number;
  readonly slots: number;
}

/** The pools whose backlog holds, as of the last pass; read by the dispatch loop. */
export class BacklogHolds {
  #held = new Map<string, PoolHold>();
  #taskIds: string[] = [];

  constructor(readonly policy: BacklogDeferralPolicy) {}

  /** False with `AX_BACKLOG_DEFER_BELOW_PRIORITY=0`. */
  get enabled(): boolean {
    return this.policy.belowPriority > 0;
  }

  /** The pools held now. */
  get held(): ReadonlyMap<string, PoolHold> {
    return this.#held;
  }

  /** What the claim leaves out: held instances of the tasks the last pass saw waiting (none: undefined). */
  claimFilter(): { belowPriority: number; taskIds: readonly string[] } | undefined {
    return this.#taskIds.length === 0 ? undefined : { belowPriority: this.policy.belowPriority, taskIds: this.#taskIds };
  }

  /** The hold an instance of `priority` routed by `request` waits under, or undefined when it may go. */
  holdOf(request: PoolRequest, priority: number): PoolHold | undefined {
    if (this.#held.size === 0 || !isDeferrable(priority, this.policy)) return undefined;
    return this.#held.get(poolKeyOf(request));
  }

  /** Replaces the view (one pass). */
  update(held: ReadonlyMap<string, PoolHold>, taskIds: readonly string[]): void {
    this.#held = new Map(held);
    this.#taskIds = [...taskIds];
  }
}

/** What one pass saw and did (tests, logs). */
export interface DeferralPass {
  /** Every pool read, with its reading. */
  readonly pools: ReadonlyMap<string, { readonly important: number; readonly deferrable: number; readonly slots: number; readonly held: boolean }>;
  readonly started: readonly string[];
  readonly ended: readonly string[];
  /** DEFERRED events written by this pass. */
  readonly recorded: number;
}

/** Most DEFERRED events one pass writes per pool (the rest follow in the next passes). */
export const DEFERRED_EVENTS_PER_PASS = 500;

interface PoolReading {
  request: PoolRequest;
  important: number;
  deferrable: number;
  /** Tasks of the pool with held instances waiting. */
  taskIds: string[];
}

/** One pass: read the loads, move the holds, record the held instances. Nothing when deferral is off. */
export async function deferBacklogOnce(ctx: BrokerContext): Promise<DeferralPass> {
  const holds = ctx.backlogHolds;
  const policy = holds.policy;
  if (!holds.enabled) return { pools: new Map(), started: [], ended: [], recorded: 0 };
  const loads = await deferralLoadByTask(ctx.pool, policy.belowPriority);
  const tasks = await loadTasksById(ctx.pool, loads.map((l) => l.taskId), ctx.definitions);
  const readings = new Map<string, PoolReading>();
  for (const load of loads) {
    const task = tasks.get(load.taskId);
    if (task === undefined) continue; // deleted meanwhile: the claim cancels its instances
    const request = { tags: task.definition.tags, team: task.definition.team };
    const key = poolKeyOf(request);
    const reading = readings.get(key) ?? { request, important: 0, deferrable: 0, taskIds: [] };
    reading.important += load.important;
    reading.deferrable += load.deferrable;
    if (load.deferrable > 0) reading.taskIds.push(load.taskId);
    readings.set(key, reading);
  }
  const workers = await ctx.workers.snapshots();
  const previous = await readSharedHolds(ctx);
  const next = new Map<string, PoolHold>();
  const pools = new Map<string, { important: number; deferrable: number; slots: number; held: boolean }>();
  const started: string[] = [];
  const ended: string[] = [];
  let now: Date | undefined;
  for (const key of new Set([...readings.keys(), ...previous.keys()])) {
    const reading = readings.get(key);
    const slots = reading === undefined ? 0 : poolSlots(workers, reading.request);
    const important = reading?.important ?? 0;
    const before = previous.get(key);
    const held = nextBacklogHold(before !== undefined, { slots, important }, policy);
    pools.set(key, { important, deferrable: reading?.deferrable ?? 0, slots, held });
    if (!held) {
      if (before !== undefined) ended.push(key);
      continue;
    }
    let since = before;
    if (since === undefined) {
      now ??= await databaseNow(ctx.pool);
      since = await startSharedHold(ctx, key, now);
      started.push(key);
    }
    next.set(key, { pool: key, since, important, slots });
  }
  await syncSharedHolds(ctx, ended, next.size > 0);
  holds.update(next, [...next.keys()].flatMap((key) => readings.get(key)?.taskIds ?? []));

  for (const key of started) {
    const hold = next.get(key) as PoolHold;
    const { holdAbove, clearAtOrBelow } = holdThresholds(hold.slots, policy);
    ctx.logger.info({ pool: key, important: hold.important, slots: hold.slots, belowPriority: policy.belowPriority }, 'backlog holds: deferring low-priority instances');
    await raiseAlert(ctx.pool, {
      kind: 'BACKLOG',
      severity: 'warning',
      subject: `pool:${key}:${hold.since.toISOString()}`,
      message: `worker pool ${key} is backlogged: ${hold.important} instances of priority ≥ ${policy.belowPriority} want its ${hold.slots} slots (holds above ${holdAbove}, clears at ${clearAtOrBelow}); instances below priority ${policy.belowPriority} wait until it clears`,
    });
  }
  for (const key of ended) ctx.logger.info({ pool: key, ...pools.get(key) }, 'backlog cleared: deferred instances dispatch again');
  if (ended.length > 0) ctx.wakeDispatch();

  let recorded = 0;
  for (const [key, hold] of next) {
    const taskIds = readings.get(key)?.taskIds ?? [];
    if (taskIds.length === 0) continue;
    recorded += await inTransaction(ctx, async (conn) => {
      const ids = await lockDeferrable(conn, taskIds, policy.belowPriority, DEFERRED_EVENTS_PER_PASS);
      return recordDeferred(ctx, conn, ids, hold);
    });
  }

  for (const [key, p] of pools) {
    ctx.metrics.backlogHold.set({ pool: key }, p.held ? 1 : 0);
    ctx.metrics.deferredInstances.set({ pool: key }, p.held ? p.deferrable : 0);
  }
  return { pools, started, ended, recorded };
}

/**
 * Writes the DEFERRED events of held instances (rows the caller has locked), once per instance
 * and hold, and counts them. Used by the pass and by the dispatch loop.
 */
export async function recordDeferred(ctx: BrokerContext, conn: Queryable, instanceIds: readonly string[], hold: PoolHold): Promise<number> {
  const { belowPriority, holdAbovePercent } = ctx.backlogHolds.policy;
  const { clearAtOrBelow } = holdThresholds(hold.slots, { holdAbovePercent });
  const fresh = await recordDeferredOnce(
    conn,
    instanceIds,
    hold.since,
    `held: priority below ${belowPriority} while worker pool ${hold.pool} is backlogged (${hold.important} instances of priority ≥ ${belowPriority} for ${hold.slots} slots); dispatches once that falls to ${clearAtOrBelow}`,
    { reason: 'BACKLOG', pool: hold.pool, belowPriority, since: hold.since.toISOString(), important: hold.important, slots: hold.slots },
  );
  ctx.metrics.deferred.inc({ pool: hold.pool }, fresh.length);
  return fresh.length;
}

/** Slots of the non-draining workers that can serve the pool. */
function poolSlots(workers: readonly WorkerSnapshot[], request: PoolRequest): number {
  let slots = 0;
  for (const w of workers) if (canServe(w, request)) slots += Math.max(0, w.slots);
  return slots;
}

/** How long the shared holds outlive the last pass that saw them (brokers gone or turned off). */
function sharedTtlMs(ctx: BrokerContext): number {
  return Math.max(60_000, 20 * ctx.config.backlogDeferPollMs);
}

async function readSharedHolds(ctx: BrokerContext): Promise<Map<string, Date>> {
  try {
    const raw = await ctx.redis.hgetall(ctx.keys.backlogHolds);
    const out = new Map<string, Date>();
    for (const [pool, iso] of Object.entries(raw)) {
      const since = new Date(iso);
      if (!Number.isNaN(since.getTime())) out.set(pool, since);
    }
    return out;
  } catch (error) {
    ctx.logger.warn({ err: toError(error) }, 'backlog holds not read from Redis; using this broker’s view');
    return new Map([...ctx.backlogHolds.held].map(([pool, hold]) => [pool, hold.since]));
  }
}

/** Starts a shared hold unless another broker did first; returns the start that stands. */
async function startSharedHold(ctx: BrokerContext, pool: string, now: Date): Promise<Date> {
  try {
    const key = ctx.keys.backlogHolds;
    await ctx.redis.hsetnx(key, pool, now.toISOString());
    await ctx.redis.pexpire(key, sharedTtlMs(ctx));
    const stored = await ctx.redis.hget(key, pool);
    const since = stored === null ? now : new Date(stored);
    return Number.isNaN(since.getTime()) ? now : since;
  } catch (error) {
    ctx.logger.warn({ err: toError(error), pool }, 'backlog hold not shared in Redis; this broker holds it alone');
    return now;
  }
}

/** Ends the holds of `ended`, and keeps the hash alive while some hold stands. */
async function syncSharedHolds(ctx: BrokerContext, ended: readonly string[], anyHeld: boolean): Promise<void> {
  try {
    if (ended.length > 0) await ctx.redis.hdel(ctx.keys.backlogHolds, ...ended);
    if (anyHeld) await ctx.redis.pexpire(ctx.keys.backlogHolds, sharedTtlMs(ctx));
  } catch (error) {
    ctx.logger.warn({ err: toError(error), ended }, 'backlog holds not updated in Redis');
  }
}
