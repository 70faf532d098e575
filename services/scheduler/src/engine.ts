/**
 * The scheduler engine: built from its dependencies (pool, Redis, clock, configuration,
 * logger), so the same code runs in the service (system clock, background loops) and in tests
 * (a ManualClock, calling `tick()` / `refill()` / `evaluateDag()` directly, no waiting).
 *
 * Loops started by `start()`:
 * - tick (every `tickIntervalMs`, and woken a few ms after the next pre-created slot's time on
 *   MySQL's clock): pop due fires off the wheel and fire them, announce pre-created slots that
 *   fell due (fire.ts);
 * - refill (every `refillIntervalMs`): queue the next `horizonMs` of fires, re-scan and decide
 *   misfires, advance watermarks (refill.ts);
 * - resync (every `resyncIntervalMs`): re-read every definition (fallback of `task-changed`);
 * - dag (every `dagScanIntervalMs`, and on `instances-finished`): readiness and dependency
 *   timeouts (dag.ts, dependency-timeout.ts);
 * - skew (every `skewCheckIntervalMs`): clock skew vs MySQL (clock-skew.ts);
 * - retention (every `retentionIntervalMs`): purge (retention.ts).
 */
import { NOOP_TRACER, redisKeys, startBackgroundLoop, toError, type BackgroundLoop, type Redis } from '@ax/kit';
import { checkClockSkew } from './clock-skew.js';
import type { EngineContext, SchedulerDeps } from './context.js';
import { evaluateDag, parseInstancesFinished, type DagResult, type InstancesFinishedMessage } from './dag.js';
import { cancelTimedOutWaiting } from './dependency-timeout.js';
import { announceDue, fireEntries, msUntilNextAnnounce, popFireable } from './fire.js';
import { createSchedulerMetrics } from './metrics.js';
import { queueUpcoming, reconcile } from './refill.js';
import { purgeExpired } from './retention.js';
import { TaskCache } from './task-cache.js';
import { TimeWheel } from './time-wheel.js';

/** A scheduler engine. */
export interface SchedulerEngine {
  readonly context: EngineContext;
  /** Re-reads every definition (and rebuilds the wheel entries of changed tasks). */
  reloadAll(): Promise<void>;
  /** Re-reads one task (a `task-changed` message). */
  reloadTask(nameOrId: string): Promise<void>;
  /** Queues upcoming fires, re-scans, decides misfires, advances watermarks. Returns instances created by the re-scan. */
  refill(): Promise<number>;
  /** Fires what is due (after a gap, refills first). Returns instances created. */
  tick(): Promise<number>;
  /** DAG readiness, dependency-only children, and dependency timeouts. */
  evaluateDag(hint?: InstancesFinishedMessage | null): Promise<DagResult & { timedOut: number }>;
  /** Clock skew check (pauses/resumes firing). Returns the offset in ms. */
  checkSkew(): Promise<number>;
  /** One retention pass. */
  purge(): Promise<number>;
  /** Loads definitions, subscribes to pub/sub and starts the loops. */
  start(): Promise<void>;
  /** Stops loops and the subscriber; waits for running iterations. */
  stop(): Promise<void>;
}

/** Builds an engine; nothing runs until `start()` (or a direct call). */
export function createSchedulerEngine(deps: SchedulerDeps): SchedulerEngine {
  const { pool, redis, clock, config, logger } = deps;
  const metrics = deps.metrics ?? createSchedulerMetrics();
  const cache = new TaskCache(logger);
  const ctx: EngineContext = {
    pool,
    redis,
    clock,
    config,
    logger,
    metrics,
    keys: redisKeys(config.namespace),
    cache,
    tracer: deps.tracer ?? NOOP_TRACER,
    wheel: new TimeWheel({ startMs: clock.nowMs() }),
    state: { liveSinceMs: clock.nowMs(), lastTickMs: null, firingPaused: false, queued: new Map(), precreatedDueMs: new Set(), dbOffsetMs: 0, calendarSkipsUntil: new Map(), reconcileQuiet: new Map(), lastFullReconcileMs: null, queuedCheckedGeneration: -1 },
  };
  let loaded = false;
  const loops: BackgroundLoop[] = [];
  let subscriber: Redis | undefined;
  let tickLoop: BackgroundLoop | undefined;
  /** Wakes the tick when the next pre-created slot falls due (see `msUntilNextAnnounce`). */
  let announceTimer: NodeJS.Timeout | undefined;
  const armAnnounce = (): void => {
    clearTimeout(announceTimer);
    const delayMs = msUntilNextAnnounce(ctx.state, clock.nowMs());
    if (delayMs === null || tickLoop === undefined) return;
    const loop = tickLoop;
    announceTimer = setTimeout(() => loop.wake(), delayMs);
    announceTimer.unref();
  };

  const reloadAll = async (): Promise<void> => {
    await cache.reloadAll(pool);
    loaded = true;
    metrics.tasks.set(cache.size);
  };

  const refill = async (): Promise<number> => {
    if (!loaded) await reloadAll();
    const now = clock.nowMs();
    queueUpcoming(ctx, now);
    if (ctx.state.firingPaused) return 0;
    return reconcile(ctx, now);
  };

  const tick = async (): Promise<number> => {
    if (!loaded) await reloadAll();
    const now = clock.nowMs();
    const last = ctx.state.lastTickMs;
    let created = 0;
    if (last !== null && now - last > config.misfireThresholdMs) {
      // A gap (pause, stall): what fell due meanwhile is for the misfire policy / re-scan.
      logger.warn({ gapMs: now - last }, 'scheduler was not ticking; treating the gap as missed time');
      ctx.state.liveSinceMs = now;
      ctx.state.lastTickMs = now;
      created += await refill();
    }
    ctx.state.lastTickMs = now;
    await announceDue(ctx, now);
    if (ctx.state.firingPaused) return created;
    const due = popFireable(ctx, now);
    metrics.wheelSize.set(ctx.wheel.size);
    if (due.length === 0) return created;
    const fresh = due.filter((e) => now - e.expectedMs <= config.misfireThresholdMs);
    return created + (await fireEntries(ctx, fresh, now));
  };

  const dag = async (hint: InstancesFinishedMessage | null = null): Promise<DagResult & { timedOut: number }> => {
    if (!loaded) await reloadAll();
    const r = await evaluateDag(ctx, hint);
    const timedOut = await cancelTimedOutWaiting(ctx);
    return { ...r, timedOut };
  };

  const reloadTask = async (nameOrId: string): Promise<void> => {
    if (/^\d+$/.test(nameOrId)) {
      await reloadAll();
      return;
    }
    await cache.reloadOne(pool, nameOrId);
    metrics.tasks.set(cache.size);
  };

  const start = async (): Promise<void> => {
    await reloadAll();
    ctx.state.liveSinceMs = clock.nowMs();
    const sub = redis.duplicate();
    subscriber = sub;
    sub.on('error', (error: Error) => logger.warn({ err: error }, 'subscriber error'));
    const dagLoop = startBackgroundLoop({ name: 'dag', intervalMs: config.dagScanIntervalMs, logger, run: async () => void (await dag()) });
    const refillLoop = startBackgroundLoop({ name: 'refill', intervalMs: config.refillIntervalMs, logger, run: async () => void (await refill()) });
    sub.on('message', (channel: string, message: string) => {
      if (channel === ctx.keys.channels.taskChanged) {
        reloadTask(message.trim())
          .then(() => refillLoop.wake())
          .catch((error: unknown) => logger.error({ err: toError(error), taskName: message }, 'reloading a changed task failed'));
      } else if (channel === ctx.keys.channels.instancesFinished) {
        const hint = parseInstancesFinished(message);
        dag(hint).catch((error: unknown) => logger.error({ err: toError(error) }, 'DAG evaluation failed'));
      }
    });
    await sub.subscribe(ctx.keys.channels.taskChanged, ctx.keys.channels.instancesFinished);
    tickLoop = startBackgroundLoop({
      name: 'tick',
      intervalMs: config.tickIntervalMs,
      jitter: 0,
      logger,
      run: async () => {
        try {
          await tick();
        } finally {
          armAnnounce();
        }
      },
    });
    loops.push(
      tickLoop,
      refillLoop,
      startBackgroundLoop({ name: 'resync', intervalMs: config.resyncIntervalMs, initialDelayMs: config.resyncIntervalMs, logger, run: reloadAll }),
      dagLoop,
      startBackgroundLoop({ name: 'clock-skew', intervalMs: config.skewCheckIntervalMs, logger, run: async () => void (await checkClockSkew(ctx)) }),
      startBackgroundLoop({
        name: 'retention',
        intervalMs: config.retentionIntervalMs,
        initialDelayMs: Math.min(60_000, config.retentionIntervalMs),
        logger,
        run: async (signal) => void (await purgeExpired(ctx, signal)),
      }),
    );
    logger.info({ tasks: cache.size, schedulerId: config.schedulerId }, 'scheduler engine started');
  };

  const stop = async (): Promise<void> => {
    clearTimeout(announceTimer);
    tickLoop = undefined;
    await Promise.all(loops.splice(0).map((l) => l.stop()));
    if (subscriber !== undefined) {
      const sub = subscriber;
      subscriber = undefined;
      sub.disconnect();
    }
  };

  return {
    context: ctx,
    reloadAll,
    reloadTask,
    refill,
    tick,
    evaluateDag: dag,
    checkSkew: () => checkClockSkew(ctx),
    purge: () => purgeExpired(ctx),
    start,
    stop,
  };
}
