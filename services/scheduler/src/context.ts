/** What the engine's parts share: dependencies, configuration and the in-memory state. */
import type { Pool } from 'mysql2/promise';
import { bizDateOf, maxWaitingOf, slotJitterMs, type Clock } from '@ax/core';
import type { AxSpan, AxTracer, Logger, Redis, RedisKeys } from '@ax/kit';
import { createSlotInstances, isRetryableMysqlError, slotKey, withTransaction, type SlotOutcome, type SlotToCreate } from '@ax/store';
import type { SchedulerConfig } from './config.js';
import type { SchedulerMetrics } from './metrics.js';
import type { CachedTask, TaskCache } from './task-cache.js';
import type { TimeWheel } from './time-wheel.js';

/** The dependencies an engine is built from. */
export interface SchedulerDeps {
  readonly pool: Pool;
  readonly redis: Redis;
  readonly clock: Clock;
  readonly config: SchedulerConfig;
  readonly logger: Logger;
  /** Default: a fresh registry. */
  readonly metrics?: SchedulerMetrics;
  /** Default: tracing off (`NOOP_TRACER`). */
  readonly tracer?: AxTracer;
}

/** Mutable state of one engine. */
export interface EngineState {
  /** Start of the current live period: slots before `liveSinceMs − misfire threshold` that nobody fired are misfires. */
  liveSinceMs: number;
  /** Time of the last `tick` (null before the first). */
  lastTickMs: number | null;
  /** Firing stopped by clock skew (R-clock, §9). */
  firingPaused: boolean;
  /**
   * Per task: definition version, the end of what is on the wheel, and (when the wheel holds all
   * of its fires up to `untilMs`) its first fire after that, null for none: until the horizon
   * reaches it there is nothing to add (refill.ts).
   */
  readonly queued: Map<string, { version: number; untilMs: number; nextMs?: number | null }>;
  /** The task cache's generation when the wheel last dropped the tasks the cache no longer schedules. */
  queuedCheckedGeneration: number;
  /** Slot times of instances created ahead of time (`precreateMs`) that are not due yet: when
   *  one falls due, `instances-ready` wakes the brokers (their poll is the fallback). */
  readonly precreatedDueMs: Set<number>;
  /** MySQL's clock minus ours, ms, as last measured (clock-skew.ts); 0 until then. */
  dbOffsetMs: number;
  /** Per `<task>@<version>`: calendar-skipped fires up to here were offered for counting (refill.ts). */
  readonly calendarSkipsUntil: Map<string, number>;
  /**
   * Reconcile's memory between full passes (refill.ts): per task, the cached definition it read
   * the row for and the first instant at which that row could have work again.
   */
  readonly reconcileQuiet: Map<string, { task: object; untilMs: number }>;
  /** When reconcile last read every task's row (null: never). */
  lastFullReconcileMs: number | null;
}

export interface EngineContext {
  readonly pool: Pool;
  readonly redis: Redis;
  readonly clock: Clock;
  readonly config: SchedulerConfig;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
  readonly keys: RedisKeys;
  readonly cache: TaskCache;
  readonly wheel: TimeWheel;
  readonly state: EngineState;
  /** Fire spans (#48); off: the run's trace context is a fresh `traceparent` all the same. */
  readonly tracer: AxTracer;
}

/**
 * MariaDB 10.11 now and then refuses a concurrent `INSERT IGNORE … SELECT` with 1467 "Failed to
 * read auto-increment value from storage engine" (seen in the steady bench: a 500-slot chunk
 * failed and waited for the R2 re-scan, 30 s late). The statement is idempotent by the slot's
 * unique key, so it is simply tried again like a deadlock.
 */
export function isAutoIncrementReadFailure(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { errno?: unknown }).errno === 1467;
}

/** Attempts of a slot-creating transaction that hit a deadlock or lock timeout. */
const CREATE_ATTEMPTS = 4;
/** Slots per transaction. */
const CHUNK = 500;
/** Transactions run at once for a large batch of non-serial slots. */
const PARALLEL_TRANSACTIONS = 2;

/**
 * The slot of `task` at `expectedMs` (R1 fields: biz_date, state, attempts), with `due_at` =
 * the slot plus the task's stable jitter offset (`jitterSeconds`; the same on every scheduler).
 */
export function slotOf(task: CachedTask, expectedMs: number, trigger: 'schedule' | 'dependency' = 'schedule'): SlotToCreate {
  const def = task.definition;
  return {
    taskId: task.id,
    taskName: task.name,
    version: task.version,
    expectedMs,
    dueMs: expectedMs + slotJitterMs(task.name, expectedMs, def.jitterSeconds),
    bizDate: bizDateOf(expectedMs, def.schedule.timezone, def.bizDateOffsetDays),
    trigger,
    state: task.parents.length > 0 && trigger === 'schedule' ? 'WAITING' : 'PENDING',
    maxAttempts: def.retry.max + 1,
    serial: maxWaitingOf(def.block) !== null,
    maxWaiting: maxWaitingOf(def.block) ?? 1,
  };
}

/**
 * Creates slots in transactions of at most 500 (retrying deadlocks; up to 2 at once when no
 * slot is `serial`), records metrics and
 * publishes `<ns>:instances-ready` after the commit when a PENDING instance was created.
 * `label` is the metrics trigger label.
 */
export async function createSlots(ctx: EngineContext, slots: readonly SlotToCreate[], label: string): Promise<Map<string, SlotOutcome>> {
  const all = new Map<string, SlotOutcome>();
  let readyCreated = 0;
  const chunks: SlotToCreate[][] = [];
  for (let i = 0; i < slots.length; i += CHUNK) chunks.push(slots.slice(i, i + CHUNK));
  const runChunk = async (untraced: SlotToCreate[]): Promise<void> => {
    const { chunk, spans } = withFireSpans(ctx.tracer, untraced, label);
    let outcomes: Map<string, SlotOutcome> | undefined;
    for (let attempt = 1; outcomes === undefined; attempt += 1) {
      try {
        outcomes = await withTransaction(ctx.pool, (conn) => createSlotInstances(conn, chunk));
      } catch (error) {
        if (attempt >= CREATE_ATTEMPTS || !(isRetryableMysqlError(error) || isAutoIncrementReadFailure(error))) throw error;
        ctx.logger.debug({ err: error, attempt }, 'slot insert retried');
        await new Promise((resolve) => setTimeout(resolve, 25 * attempt)); // let the other transaction finish
      }
    }
    const committedMs = ctx.clock.nowMs();
    for (const s of chunk) {
      const key = slotKey(s.taskName, s.expectedMs);
      const o = outcomes.get(key);
      if (o === undefined) continue;
      all.set(key, o);
      if (o.kind === 'created') {
        endFireSpan(spans.get(key), o.instanceId);
        ctx.metrics.fires.inc({ trigger: label });
        ctx.metrics.fireLag.observe(Math.max(0, committedMs - s.expectedMs) / 1000);
        // A slot created ahead of time is announced when it falls due (fire.ts), not now:
        // a broker woken for it would find nothing to claim.
        if (s.state === 'PENDING' && (s.dueMs ?? s.expectedMs) <= committedMs) readyCreated += 1;
      } else if (o.kind === 'coalesced') {
        ctx.metrics.coalesced.inc({ cause: 'serial' });
      } else if (o.kind === 'refused') {
        ctx.metrics.refused.inc();
      }
    }
  };
  // Serial slots of one task must be decided in one transaction (R4): keep them together by
  // running serial chunks one at a time; parallel-only batches use a few connections at once.
  const concurrency = slots.some((s) => s.serial) ? 1 : PARALLEL_TRANSACTIONS;
  const failures: unknown[] = [];
  for (let i = 0; i < chunks.length; i += concurrency) {
    const results = await Promise.allSettled(chunks.slice(i, i + concurrency).map(runChunk));
    for (const r of results) if (r.status === 'rejected') failures.push(r.reason);
  }
  if (readyCreated > 0) {
    try {
      await ctx.redis.publish(ctx.keys.channels.instancesReady, JSON.stringify({ count: readyCreated }));
    } catch (error) {
      // Brokers also poll: a lost wake-up only delays dispatch.
      ctx.logger.warn({ err: error }, 'publishing instances-ready failed');
    }
  }
  if (failures.length > 0) throw failures[0];
  return all;
}

/**
 * The slots with the run's trace context (#48): each slot without one gets a fire span, the root
 * of its run's trace, whose `traceparent` the insert stores on the instance. Spans are keyed by
 * {@link slotKey}; only those of created instances are ended (and so exported): a slot that
 * existed, was coalesced or refused started no run.
 */
function withFireSpans(tracer: AxTracer, slots: readonly SlotToCreate[], label: string): { chunk: SlotToCreate[]; spans: Map<string, AxSpan> } {
  const spans = new Map<string, AxSpan>();
  const chunk = slots.map((s) => {
    if (s.traceParent !== undefined) return s;
    const span = tracer.startSpan('ax.fire', {
      kind: 'producer',
      attributes: { 'ax.task.name': s.taskName, 'ax.expected_time': new Date(s.expectedMs).toISOString(), 'ax.trigger': label },
    });
    spans.set(slotKey(s.taskName, s.expectedMs), span);
    return { ...s, traceParent: span.traceparent };
  });
  return { chunk, spans };
}

function endFireSpan(span: AxSpan | undefined, instanceId: string): void {
  if (span === undefined) return;
  span.setAttributes({ 'ax.instance.id': instanceId });
  span.end();
}
