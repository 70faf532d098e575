/**
 * Firing (DESIGN §3, R2): due wheel entries take their Redis fire lock
 * (`SET <ns>:fire:<task>:<expectedMs> NX PX <fire lock TTL>`, pipelined; a Redis error counts
 * as won) and the won ones are inserted in batches guarded by the unique slot key and the
 * task's version (R3). A lost lock means another scheduler fires the slot; if it dies first,
 * the re-scan of refill.ts inserts the slot after the lock TTL.
 */
import type { EngineContext, EngineState } from './context.js';
import { createSlots, slotOf } from './context.js';
import type { WheelEntry } from './time-wheel.js';
import type { CachedTask } from './task-cache.js';
import type { SlotToCreate } from '@ax/store';
import { maxWaitingOf } from '@ax/core';

/**
 * A task whose slots may be created ahead of time (`precreateMs`): no parents (a child's
 * WAITING slot is created at its time) and not `serial` or `{queue: N}` (a pre-created instance
 * would count as "waiting" and coalesce the run before it, R4). The slot is PENDING with `due_at` = its time,
 * so brokers claim it only then.
 */
export function precreatable(task: CachedTask): boolean {
  return task.parents.length === 0 && maxWaitingOf(task.definition.block) === null;
}

/**
 * The wheel entries to fire now: everything whose pop time has come. A slot queued to be
 * created ahead of time whose task stopped being `precreatable` meanwhile goes back on the
 * wheel for its own time.
 */
export function popFireable(ctx: EngineContext, nowMs: number): WheelEntry[] {
  const out: WheelEntry[] = [];
  for (const e of ctx.wheel.popDue(nowMs)) {
    const task = e.expectedMs > nowMs ? ctx.cache.get(e.taskName) : undefined;
    if (task !== undefined && !precreatable(task)) ctx.wheel.add({ taskName: e.taskName, version: e.version, expectedMs: e.expectedMs });
    else out.push(e);
  }
  return out;
}

/**
 * How long after its time a pre-created slot is announced, on MySQL's clock: brokers claim
 * `due_at <= NOW(3)`, so a wake-up a little early finds nothing and the slot waits for their
 * poll (up to `AX_DISPATCH_POLL_MS`). Covers the error of the measured offset (half a round trip).
 */
export const ANNOUNCE_MARGIN_MS = 5;

type AnnounceState = Pick<EngineState, 'precreatedDueMs' | 'dbOffsetMs'>;

/** Whether the slot at `slotMs` is due on MySQL's clock (plus the margin) at local `nowMs`. */
export function dueOnDbClock(state: AnnounceState, slotMs: number, nowMs: number): boolean {
  return slotMs + ANNOUNCE_MARGIN_MS <= nowMs + state.dbOffsetMs;
}

/**
 * Local ms until the next pre-created slot is to be announced, or null when none waits. The
 * engine wakes its tick then, so a slot is announced a few ms after its time rather than at
 * the next tick (up to `tickIntervalMs` later).
 */
export function msUntilNextAnnounce(state: AnnounceState, nowMs: number): number | null {
  let next = Number.POSITIVE_INFINITY;
  for (const t of state.precreatedDueMs) if (t < next) next = t;
  if (next === Number.POSITIVE_INFINITY) return null;
  return Math.max(0, next + ANNOUNCE_MARGIN_MS - state.dbOffsetMs - nowMs);
}

/** Wakes the brokers when pre-created slots fall due (one message per tick, not per slot). */
export async function announceDue(ctx: EngineContext, nowMs: number): Promise<void> {
  let due = 0;
  for (const t of ctx.state.precreatedDueMs) {
    if (!dueOnDbClock(ctx.state, t, nowMs)) continue;
    ctx.state.precreatedDueMs.delete(t);
    due += 1;
  }
  if (due === 0) return;
  try {
    await ctx.redis.publish(ctx.keys.channels.instancesReady, JSON.stringify({ count: due }));
  } catch (error) {
    ctx.logger.warn({ err: error }, 'publishing instances-ready failed (brokers poll as well)');
  }
}

/** Fires `entries` (some ahead of their time, see `popFireable`); returns how many instances were created. */
export async function fireEntries(ctx: EngineContext, entries: readonly WheelEntry[], nowMs: number = ctx.clock.nowMs()): Promise<number> {
  const slots: SlotToCreate[] = [];
  for (const e of entries) {
    const task = ctx.cache.get(e.taskName);
    if (task === undefined || task.version !== e.version || !task.definition.enabled) continue;
    slots.push(slotOf(task, e.expectedMs));
  }
  if (slots.length === 0) return 0;
  const won = await takeFireLocks(ctx, slots);
  if (won.length === 0) return 0;
  const outcomes = await createSlots(ctx, won, 'schedule');
  let created = 0;
  for (const o of outcomes.values()) if (o.kind === 'created') created += 1;
  // Slots not due yet (created ahead of time, or jittered past now) are announced when due.
  for (const s of won) {
    const dueMs = s.dueMs ?? s.expectedMs;
    if (dueMs > nowMs) ctx.state.precreatedDueMs.add(dueMs);
  }
  return created;
}

/** The slots whose fire lock this scheduler won (or could not ask Redis about). */
async function takeFireLocks(ctx: EngineContext, slots: readonly SlotToCreate[]): Promise<SlotToCreate[]> {
  const pipeline = ctx.redis.pipeline();
  for (const s of slots) {
    pipeline.set(ctx.keys.fireLock(s.taskName, s.expectedMs), ctx.config.schedulerId, 'PX', ctx.config.fireLockTtlMs, 'NX');
  }
  let results: Array<[Error | null, unknown]> | null;
  try {
    results = await pipeline.exec();
  } catch (error) {
    ctx.logger.warn({ err: error, slots: slots.length }, 'fire lock pipeline failed; the unique key decides (R2)');
    ctx.metrics.lockErrors.inc(slots.length);
    return [...slots];
  }
  const won: SlotToCreate[] = [];
  slots.forEach((s, i) => {
    const r = results?.[i];
    if (r === undefined || r[0] !== null) {
      ctx.metrics.lockErrors.inc();
      won.push(s);
    } else if (r[1] === 'OK') {
      won.push(s);
    } else {
      ctx.metrics.lockContention.inc();
    }
  });
  return won;
}
