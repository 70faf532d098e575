/**
 * A broker engine: the loops and consumers of DESIGN §4 over clients it is given. `main.ts`
 * builds the clients from the environment; tests build engines in-process.
 */
import type { Bus, Consumer } from '@ax/bus';
import { closeRedis, isRetryableError, NOOP_TRACER, redisKeys, startBackgroundLoop, toError, type AxTracer, type BackgroundLoop, type Logger, type Metrics, type Redis } from '@ax/kit';
import { TaskDefinitionCache, type StorePool } from '@ax/store';
import { AckClocks } from './ack-clocks.js';
import { readQueueDepthsOnce } from './backlog.js';
import { scanBacklogOnce } from './backlog-scan.js';
import { BacklogHolds, deferBacklogOnce } from './backlog-deferral.js';
import type { BrokerConfig } from './config.js';
import type { BrokerContext } from './context.js';
import { createDeadLetterHandler } from './dead-letters.js';
import { deliverAlertsOnce } from './alerts.js';
import { DEFINITIONS_WARM_MS, warmDefinitionsOnce } from './definitions-warm.js';
import { dispatchOnce } from './dispatch.js';
import { handleReturned } from './dispatch-returned.js';
import { LinkMonitor } from './links.js';
import { LOGS_PREFETCH, createLogChunkHandler } from './log-chunks.js';
import { LEGACY_EVENTS_POLL_MS, LegacyQueues } from './legacy-events.js';
import { isLockConflict } from './lock-conflict.js';
import { createBrokerMetrics } from './metrics.js';
import { createRateLimiter } from './rate-limit.js';
import { createEventsHandler } from './replies.js';
import { createReservations } from './reservations.js';
import { EarliestWake } from './wakeups.js';
import { runRetriesOnce, runTimersOnce } from './timers.js';
import { WorkerPresence } from './worker-presence.js';
import { TeamDirectory } from './team-directory.js';
import { ENROLLMENT_TEAMS_CACHE_MS, WorkerDirectory } from './workers.js';

/** What a broker engine is built from. */
export interface BrokerDeps {
  readonly config: BrokerConfig;
  readonly pool: StorePool;
  readonly redis: Redis;
  /** Started or not; `start()` starts it. Owned by the caller (closed by it). */
  readonly bus: Bus;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly random?: () => number;
  /** Default: tracing off (`NOOP_TRACER`, #48). */
  readonly tracer?: AxTracer;
}

/** A running broker engine. */
export interface Broker {
  readonly context: BrokerContext;
  /** Starts the bus (if needed), consumers, pub/sub and loops. */
  start(): Promise<void>;
  /** Stops loops, consumers and the subscriber; the clients stay open. Idempotent. */
  stop(): Promise<void>;
}

/** How often confirmed dispatches get their ACK deadline written (`ack-clocks.ts`). */
const ACK_CLOCKS_POLL_MS = 250;

/** Builds an engine; nothing runs until `start()`. */
export function createBroker(deps: BrokerDeps): Broker {
  const { config, pool, redis, bus, logger } = deps;
  const keys = redisKeys(config.namespace);
  const reservations = createReservations(redis, keys);
  const loops: BackgroundLoop[] = [];
  const consumers: Consumer[] = [];
  let subscriber: Redis | undefined;
  let dispatchLoop: BackgroundLoop | undefined;
  let definitionsLoop: BackgroundLoop | undefined;
  let retriesLoop: BackgroundLoop | undefined;
  let timersLoop: BackgroundLoop | undefined;
  const retryWakeups = new EarliestWake(() => retriesLoop?.wake());
  const timerWakeups = new EarliestWake(() => timersLoop?.wake());
  let stopped = false;
  const links = new LinkMonitor(config.leaseTtlMs);

  const context: BrokerContext = {
    config,
    pool,
    redis,
    keys,
    bus,
    logger,
    metrics: createBrokerMetrics(deps.metrics),
    reservations,
    rateLimiter: createRateLimiter(redis, keys, config.dispatchRatePerSecond),
    workers: new WorkerDirectory(redis, keys, reservations, config.registryCacheMs, pool, Math.max(config.registryCacheMs, ENROLLMENT_TEAMS_CACHE_MS)),
    links,
    presence: new WorkerPresence(config.workerSilenceMs),
    definitions: new TaskDefinitionCache(),
    teams: new TeamDirectory(),
    ackClocks: new AckClocks({ ackTimeoutMs: config.ackTimeoutMs }),
    claimPace: { lastSmallClaimAtMs: Number.NEGATIVE_INFINITY },
    backlogHolds: new BacklogHolds({ belowPriority: config.backlogDeferBelowPriority, holdAbovePercent: config.backlogDeferHoldPercent }),
    random: deps.random ?? Math.random,
    tracer: deps.tracer ?? NOOP_TRACER,
    wakeRetriesIn: (delayMs) => retryWakeups.in(delayMs),
    wakeTimersIn: (delayMs) => timerWakeups.in(delayMs),
    wakeDispatch: () => dispatchLoop?.wake(),
    notifyFinished: (taskNames, bizDates) => {
      redis.publish(keys.channels.instancesFinished, JSON.stringify({ taskNames, bizDates })).catch((error: unknown) => {
        logger.warn({ err: toError(error) }, 'instances-finished not published (schedulers fall back to their scan)');
      });
    },
  };

  const guarded =
    (name: string, run: () => Promise<unknown>) =>
    async (): Promise<void> => {
      try {
        await run();
      } catch (error) {
        if (isLockConflict(error)) {
          // Another broker won a lock race: nothing is down; the loop runs again soon.
          logger.warn({ loop: name, err: toError(error) }, 'lost a lock race; retrying');
          if (name === 'dispatch') context.wakeDispatch();
          return;
        }
        if (isRetryableError(error)) links.setMysql(false);
        throw new Error(`${name}: ${toError(error).message}`, { cause: error });
      }
    };

  return {
    context,
    async start() {
      bus.on('connected', () => links.setAmqp(true));
      bus.on('disconnected', () => links.setAmqp(false));
      bus.onReturned((returned) => {
        handleReturned(context, returned).catch((error: unknown) => logger.error({ err: toError(error) }, 'returned dispatch not re-routed (ACK expiry will)'));
      });
      await bus.start();
      await context.teams.refresh(pool).catch((error: unknown) => logger.warn({ err: toError(error) }, 'teams not loaded yet (the definitions loop retries)'));
      const eventsHandler = createEventsHandler(context, deps.metrics);
      consumers.push(await bus.consume(bus.topology.eventsQueue, eventsHandler, { prefetch: config.eventsPrefetch }));
      const deadHandler = createDeadLetterHandler(context);
      const logsHandler = createLogChunkHandler(context, deps.metrics);
      // The classic shared queues of older builds: unbound, drained by these handlers, deleted (#23).
      const legacyQueues = new LegacyQueues(
        bus,
        { events: { handler: eventsHandler, prefetch: config.eventsPrefetch }, logs: { handler: logsHandler, prefetch: LOGS_PREFETCH }, dead: { handler: deadHandler, prefetch: 10 } },
        logger,
      );
      consumers.push({ cancel: () => legacyQueues.stopConsuming() });
      consumers.push(await bus.consume(bus.topology.deadQueue, deadHandler, { prefetch: 10 }));
      consumers.push(await bus.consume(bus.topology.logsQueue, logsHandler, { prefetch: LOGS_PREFETCH }));

      subscriber = redis.duplicate();
      subscriber.on('error', (error: Error) => logger.warn({ err: error }, 'redis subscriber error'));
      subscriber.on('message', (channel: string) => {
        if (channel === keys.channels.taskChanged) {
          definitionsLoop?.wake();
          return;
        }
        if (channel === keys.channels.workersChanged) context.workers.invalidate();
        dispatchLoop?.wake();
      });
      await subscriber.subscribe(keys.channels.instancesReady, keys.channels.workersChanged, keys.channels.taskChanged);

      dispatchLoop = startBackgroundLoop({ name: 'dispatch', intervalMs: config.dispatchPollMs, logger, run: guarded('dispatch', () => dispatchOnce(context)) });
      loops.push(dispatchLoop);
      loops.push(
        startBackgroundLoop({
          name: 'ack-clocks',
          intervalMs: ACK_CLOCKS_POLL_MS,
          logger,
          run: guarded('ack-clocks', async () => {
            // Deadlines just written expire in at most ackTimeout + grace: a timers pass a poll
            // period before that finds the earliest and wakes itself for it (#22, wakeups.ts).
            if ((await context.ackClocks.flush(pool)) > 0) context.wakeTimersIn(Math.max(0, config.ackTimeoutMs + config.ackGraceMs - config.timersPollMs));
          }),
        }),
      );
      timersLoop = startBackgroundLoop({ name: 'timers', intervalMs: config.timersPollMs, logger, run: guarded('timers', () => runTimersOnce(context)) });
      loops.push(timersLoop);
      // The retries pass on its own, woken when a retry falls due (its poll is the timers pass's).
      retriesLoop = startBackgroundLoop({ name: 'retries', intervalMs: 3_600_000, logger, run: guarded('retries', () => runRetriesOnce(context)) });
      loops.push(retriesLoop);
      loops.push(startBackgroundLoop({ name: 'alerts', intervalMs: config.alertPollMs, logger, run: guarded('alerts', () => deliverAlertsOnce(context)) }));
      loops.push(startBackgroundLoop({ name: 'queue-depth', intervalMs: config.backlogPollMs, logger, run: guarded('queue-depth', () => readQueueDepthsOnce(context)) }));
      // #45: why each due instance waits, the backlog by team and reason, the BACKLOG alert.
      loops.push(startBackgroundLoop({ name: 'backlog-scan', intervalMs: config.backlogScanMs, initialDelayMs: config.backlogScanMs, logger, run: guarded('backlog-scan', () => scanBacklogOnce(context)) }));
      if (context.backlogHolds.enabled) loops.push(startBackgroundLoop({ name: 'backlog-deferral', intervalMs: config.backlogDeferPollMs, logger, run: guarded('backlog-deferral', () => deferBacklogOnce(context)) }));
      const warmState = { overCapacity: false };
      definitionsLoop = startBackgroundLoop({ name: 'definitions', intervalMs: DEFINITIONS_WARM_MS, logger, run: guarded('definitions', () => warmDefinitionsOnce(context, warmState)) });
      loops.push(definitionsLoop);
      loops.push(startBackgroundLoop({ name: 'legacy-events', intervalMs: LEGACY_EVENTS_POLL_MS, logger, run: async () => void (await legacyQueues.retireOnce()) }));
      logger.info({ brokerId: config.brokerId, namespace: config.namespace }, 'broker started');
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      retryWakeups.stop();
      timerWakeups.stop();
      await Promise.all(loops.map((loop) => loop.stop()));
      // Deadlines of the last confirms, so other brokers expire them on time.
      await context.ackClocks.flush(pool, { all: true }).catch((error: unknown) => {
        logger.warn({ err: toError(error), confirms: context.ackClocks.size }, 'ACK deadlines not written; the claim-time deadlines stand');
      });
      for (const consumer of consumers) await consumer.cancel();
      if (subscriber !== undefined) await closeRedis(subscriber);
    },
  };
}
