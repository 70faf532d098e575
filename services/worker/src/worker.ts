/**
 * The worker (§5): consumes its dispatch queue, records every item in the outbox and AMQP-acks
 * it (R12), refuses what it must not run (EXPIRED, CLOCK_SKEW, SHUTTING_DOWN; R8), ACKs and runs
 * the rest within its slots, writes each result to the outbox before publishing it, keeps its
 * registry entry (= lease, R14) and honours cancels from its control queue. Each attempt's
 * output goes to `<ns>.logs` through the outbox too (`logs/`, DESIGN §11).
 */
import os from 'node:os';
import { DEFAULT_LOG_MAX_BYTES, parseMessage, RECALL_REASON, type CancelMessage, type DispatchItem, type DispatchMessage, type Exec, type ReservedSlots } from '@ax/core';
import type { Bus, BusMessage, ConsumeOutcome, Consumer } from '@ax/bus';
import { NOOP_TRACER, toError, type AxSpan, type AxTracer, type Logger, type Redis, type RedisKeys } from '@ax/kit';
import { endExecutionSpan, startExecutionSpan } from './execution-span.js';
import { isDrained, publishRegistration, removeRegistration, type WorkerRegistration } from '@ax/redis';
import { ACK_MARGIN_MS, refusalFor } from './admission.js';
import { describeScope, type TeamScope } from './enrollment/bootstrap-answer.js';
import type { WorkerAlert } from './alert-webhook.js';
import { ClockGuard, measureOffset } from './clock-guard.js';
import { DurationWindow } from './duration-window.js';
import { notStartedOutcome, stoppedOutcome, type ExecutionOutcome, type Executor } from './executors/types.js';
import { LeaseWatch } from './lease-watch.js';
import { PRINTED_NOTHING, type AttemptLog, type EndMode } from './logs/attempt-log.js';
import { LogPublisher } from './logs/log-publisher.js';
import { LogShipper } from './logs/log-shipper.js';
import { HELD_IN_MEMORY, type DispatchState, type LogRow, type Outbox, type OutgoingRow } from './outbox.js';
import { TickBatch } from './tick-batch.js';
import { OutboxPublisher } from './publisher.js';
import { recoverAfterRestart } from './recovery.js';
import { refusalItem, resultItem } from './result-items.js';
import { heldEntries } from './job-prefetch.js';
import { SlotWaitCanceledError, Slots } from './slots.js';
import { StopSwitch } from './stop-switch.js';
import { UnwrittenResults } from './unwritten-results.js';
import type { WorkerMetrics } from './worker-metrics.js';

/** Resolved settings of a worker (from the environment, see `env.ts`). */
export interface WorkerSettings {
  readonly workerId: string;
  readonly tags: readonly string[];
  /** `AX_WORKER_TEAMS`: teams whose work it takes, advertised in the registry. Default (absent or empty): every team. */
  readonly teams?: readonly string[];
  /** `AX_WORKER_SLOTS`. */
  readonly slots: number;
  /** `AX_WORKER_RESERVED_SLOTS`: slots kept for high priority, advertised in the registry. Default: none. */
  readonly reservedSlots?: ReservedSlots;
  /** `AX_HEARTBEAT_INTERVAL_MS` (5000). */
  readonly heartbeatIntervalMs: number;
  /** `AX_LEASE_TTL_MS` (15000). */
  readonly leaseTtlMs: number;
  /** `AX_WORKER_SKEW_LIMIT_MS` (2000). */
  readonly skewLimitMs: number;
  /** How often the clock is measured against Redis `TIME`; 30000. */
  readonly clockCheckIntervalMs: number;
  /** `AX_SHUTDOWN_GRACE_S` × 1000: how long running jobs may finish after SIGTERM. */
  readonly shutdownGraceMs: number;
  /** Unacked dispatch messages in flight (they are acked right after the outbox write). */
  readonly prefetch: number;
  /**
   * `AX_WORKER_JOB_PREFETCH`: dispatches held beyond the slots, advertised in the registry so
   * brokers reserve up to `slots + jobPrefetch` (R9 prefetch, job-prefetch.ts). Absent = 0.
   */
  readonly jobPrefetch?: number;
  /** Software version reported in the registry. */
  readonly version: string;
  /** `AX_LOG_MAX_BYTES`: output shipped per execution, both streams; default `DEFAULT_LOG_MAX_BYTES` (16 MiB). */
  readonly logMaxBytes?: number;
  /** `AX_LOG_FLUSH_MS`: longest wait of printed output before it is shipped; default 250. */
  readonly logFlushMs?: number;
  /** `AX_LOG_OUTBOX_MAX_BYTES`: unshipped output past which running jobs keep only their tails; default 256 MiB. */
  readonly logOutboxMaxBytes?: number;
  /** `AX_LOG_OUTPUT_IN_RESULT`: short output in the result where the dispatch allows it; default true. */
  readonly logOutputInResult?: boolean;
}

/** Default `AX_LOG_FLUSH_MS`. */
export const DEFAULT_LOG_FLUSH_MS = 250;
/** Default `AX_LOG_OUTBOX_MAX_BYTES` (256 MiB). */
export const DEFAULT_LOG_OUTBOX_MAX_BYTES = 256 * 1_048_576;

/** What the worker is built from. */
export interface WorkerDeps {
  readonly settings: WorkerSettings;
  readonly bus: Bus;
  readonly redis: Redis;
  readonly keys: RedisKeys;
  readonly outbox: Outbox;
  readonly executors: Readonly<Record<Exec['type'], Executor>>;
  readonly logger: Logger;
  readonly metrics?: WorkerMetrics;
  /** Sends an alert only the worker can see (clock skew) to the webhook; default: logged only. */
  readonly sendAlert?: (alert: WorkerAlert) => Promise<unknown>;
  /**
   * An enrolled worker's teams (its enrollment's, narrowed by AX_WORKER_TEAMS; replaced by
   * `setTeams` when a refresh changes them): items of other teams are refused, never run, and the
   * registry entry advertises these instead of `settings.teams` (R24). Default: unenrolled.
   */
  readonly teamScope?: TeamScope;
  /** Execution spans (#48); default off. */
  readonly tracer?: AxTracer;
}

interface Active {
  readonly item: DispatchItem;
  readonly controller: StopSwitch;
  /** The attempt's output (ended when its result is reported). */
  readonly output: AttemptLog;
  started: boolean;
  /** Monotonic ms at which the worker accepted it (`LeaseWatch`: no start after a lease gap since). */
  readonly acceptedAtMs: number;
  /** Set once its result went to the outbox, or (the write failed) to `UnwrittenResults`. */
  reported: boolean;
  /**
   * Set when it was released before it started (R9 prefetch: a broker recalled it, or the worker
   * is shutting down): it never starts and is answered with this refusal, so a broker gives it to
   * another worker without spending an attempt.
   */
  released: 'RECALLED' | 'SHUTTING_DOWN' | null;
  /** Set once it holds a slot: a recall then only marks it (the stop switch would cancel it). */
  slotTaken: boolean;
}

/** An accepted item and, when one was free at once, its slot (then it is recorded 'running'). */
interface Accepted {
  readonly item: DispatchItem;
  readonly release: (() => void) | null;
}

/** What a finished attempt leaves in the outbox: its result, or a refusal when it never started. */
interface Finish {
  readonly executionId: string;
  readonly item: Record<string, unknown>;
  readonly atMs: number;
  /** 'refusal': the job was kept from starting (`startBlocker`); default a result. */
  readonly kind?: 'refusal';
}

/** How long finished dispatches and confirmed items stay in the outbox. */
const OUTBOX_KEEP_MS = 86_400_000;
const PRUNE_INTERVAL_MS = 600_000;
/** Execution ids remembered from cancels that arrived before their dispatch. */
const EARLY_CANCELS_KEPT = 10_000;

/** A running worker. */
export class Worker {
  readonly guard: ClockGuard;
  private readonly slots: Slots;
  private readonly active = new Map<string, Active>();
  private readonly earlyCancels = new Set<string>();
  private readonly durations = new DurationWindow();
  private readonly publisher: OutboxPublisher;
  private readonly logPublisher: LogPublisher;
  private readonly logs: LogShipper;
  /** Results the outbox refused, published from memory until written (#23). */
  private readonly unwritten: UnwrittenResults;
  /** The last unconfirmed result ids read from the outbox: the lease while the outbox cannot be read. */
  private lastUnconfirmedResultIds: string[] = [];
  private readonly startedAt = new Date().toISOString();
  private dispatchConsumer: Consumer | undefined;
  private controlConsumer: Consumer | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private clockTimer: NodeJS.Timeout | undefined;
  private registered = false;
  private heartbeatRunning = false;
  private pruneTimer: NodeJS.Timeout | undefined;
  private shuttingDown = false;
  /** Set by `abandon`: results can no longer be delivered (the enrollment was revoked). */
  private abandoned = false;
  private teamScope: TeamScope | undefined;
  private stopped: Promise<void> | undefined;
  private readonly log: Logger;
  private readonly tracer: AxTracer;
  /** 'running' marks written together, before their jobs start (R13). */
  private readonly starts: TickBatch<{ executionId: string; atMs: number }>;
  /** Results written together (state + outgoing item per execution). */
  private readonly finishes: TickBatch<Finish>;
  /** Whether the registry lease held since a moment (#23: a frozen worker starts nothing it accepted before). */
  private readonly leaseWatch: LeaseWatch;

  constructor(private readonly deps: WorkerDeps) {
    const { settings, bus, outbox, logger } = deps;
    this.log = logger;
    this.tracer = deps.tracer ?? NOOP_TRACER;
    this.teamScope = deps.teamScope;
    this.leaseWatch = new LeaseWatch(settings.leaseTtlMs, performance.now());
    this.starts = new TickBatch((entries) => outbox.transaction(() => entries.forEach((e) => outbox.setState(e.executionId, 'running', e.atMs))));
    this.finishes = new TickBatch((entries) => {
      // The attempts' last output and `end` items are written with their results: a result in
      // the outbox always has all its output there too (logs/log-shipper.ts).
      const output = this.logs.takeEnded(entries.map((e) => e.executionId));
      let logRows: LogRow[] = [];
      let rows: OutgoingRow[];
      try {
        rows = outbox.transaction(() => {
          const written = entries.flatMap(
            (e) => outbox.finishRow(e.executionId, e.kind === 'refusal' ? 'expired' : 'done', e.kind ?? 'result', e.item, e.atMs, HELD_IN_MEMORY) ?? [],
          );
          if (output !== null) logRows = this.logs.write(output);
          return written;
        });
      } catch (error) {
        if (output !== null) this.logs.giveBack(output);
        throw error;
      }
      this.publisher.push(rows);
      this.logPublisher.push(logRows);
    });
    this.guard = new ClockGuard(settings.skewLimitMs);
    this.slots = new Slots(settings.slots, settings.reservedSlots);
    this.publisher = new OutboxPublisher({
      outbox,
      bus,
      exchange: bus.topology.eventsExchange,
      workerId: settings.workerId,
      logger: logger.child({ component: 'outbox' }),
      onConfirmed: (kind, count) => deps.metrics?.published.inc({ kind }, count),
    });
    this.logPublisher = new LogPublisher({
      outbox,
      bus,
      exchange: bus.topology.logsExchange,
      workerId: settings.workerId,
      logger: logger.child({ component: 'log-outbox' }),
      onConfirmed: (count) => deps.metrics?.published.inc({ kind: 'log' }, count),
    });
    this.logs = new LogShipper({
      outbox,
      publisher: this.logPublisher,
      logger: logger.child({ component: 'log-outbox' }),
      maxBytes: settings.logMaxBytes ?? DEFAULT_LOG_MAX_BYTES,
      flushMs: settings.logFlushMs ?? DEFAULT_LOG_FLUSH_MS,
      outboxMaxBytes: settings.logOutboxMaxBytes ?? DEFAULT_LOG_OUTBOX_MAX_BYTES,
    });
    this.unwritten = new UnwrittenResults({
      outbox,
      bus,
      exchange: bus.topology.eventsExchange,
      workerId: settings.workerId,
      logger: logger.child({ component: 'outbox' }),
      handOver: (rows) => this.publisher.push(rows),
      onConfirmed: (count) => deps.metrics?.published.inc({ kind: 'result' }, count),
    });
  }

  /**
   * Executions whose slot is taken or awaited, plus results not yet confirmed (in the outbox or,
   * when its write failed, in memory): the lease (R14). An outbox that cannot be read leases
   * what it held at the last read, so a sick disk never lets a finished job be declared lost.
   */
  leaseExecutionIds(): string[] {
    try {
      this.lastUnconfirmedResultIds = this.deps.outbox.unconfirmedResultIds();
    } catch (error) {
      this.log.warn({ err: toError(error) }, 'could not read unconfirmed results from the outbox; leasing the last ones read');
    }
    return [...new Set([...this.active.keys(), ...this.unwritten.leaseIds(), ...this.lastUnconfirmedResultIds])];
  }

  /** Jobs running now. */
  get running(): number {
    return this.slots.inUse;
  }

  /** Recovers (R13), checks the clock, starts consuming, then registers (R14). */
  async start(): Promise<void> {
    const { settings, bus, outbox } = this.deps;
    const recovered = await recoverAfterRestart(outbox, this.log);
    if (recovered > 0) this.log.warn({ executions: recovered }, 'reported executions interrupted by the previous run as WORKER_RESTART');
    this.publisher.replay();
    this.logPublisher.start();
    await this.checkClock();
    // Queues and consumers first, then the registry entry: a broker only routes to a worker
    // that is already consuming.
    await bus.assertWorkerQueues(settings.workerId);
    this.controlConsumer = await bus.consume(bus.topology.controlQueue(settings.workerId), (m) => this.onControl(m), { prefetch: 10 });
    this.dispatchConsumer = await bus.consume(bus.topology.workerQueue(settings.workerId), (m) => this.onDispatch(m), { prefetch: settings.prefetch });
    await this.heartbeat();
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), settings.heartbeatIntervalMs);
    this.clockTimer = setInterval(() => void this.checkClock(), settings.clockCheckIntervalMs);
    this.prune();
    this.pruneTimer = setInterval(() => this.prune(), PRUNE_INTERVAL_MS);
    this.log.info({ workerId: settings.workerId, slots: settings.slots, tags: settings.tags }, 'worker consuming');
  }

  // ---- dispatches ---------------------------------------------------------------------------

  private onDispatch(message: BusMessage): Promise<ConsumeOutcome> {
    const parsed = parseMessage(message.body);
    if (!parsed.ok) {
      this.deps.metrics?.deadLettered.inc();
      this.log.warn({ reason: parsed.reason, redelivered: message.redelivered }, 'invalid message dead-lettered');
      return Promise.resolve({ action: 'dead-letter', reason: parsed.reason });
    }
    if (parsed.message.kind !== 'dispatch') {
      this.deps.metrics?.deadLettered.inc();
      return Promise.resolve({ action: 'dead-letter', reason: `expected a dispatch message, got ${parsed.message.kind}` });
    }
    try {
      this.accept(parsed.message);
    } catch (error) {
      // The outbox could not be written (disk full, I/O error): nothing was decided, so let
      // RabbitMQ deliver it again (bounded by @ax/bus; the broker re-routes after the ACK timeout).
      this.log.error({ err: error }, 'could not record a dispatch in the outbox; requeued');
      return Promise.resolve('requeue');
    }
    return Promise.resolve('ack');
  }

  /**
   * Records, decides and starts the items of one dispatch message (synchronous outbox work).
   * An item that gets a slot at once is recorded 'running' by its first write (R13: before the
   * job starts), which saves a second write per job.
   */
  private accept(message: DispatchMessage): void {
    const { outbox, metrics } = this.deps;
    const now = Date.now();
    const toRun: Accepted[] = [];
    const replies: OutgoingRow[] = [];
    try {
      outbox.transaction(() => {
        for (const item of message.items) {
          const ctx = { executionId: item.executionId, instanceId: item.instanceId, taskName: item.taskName, traceId: item.traceId };
          if (this.earlyCancels.has(item.executionId)) {
            if (!this.recordNew(item, now, 'done')) continue;
            this.earlyCancels.delete(item.executionId);
            // Never run, so it printed nothing: the result seals its (empty) output.
            const result = resultItem(item, { outcome: 'CANCELED', error: 'canceled before it arrived' }, undefined, now, PRINTED_NOTHING);
            pushRow(replies, outbox.enqueueRow('result', item.executionId, result, now, HELD_IN_MEMORY));
            metrics?.dispatchItems.inc({ decision: 'canceled' });
            continue;
          }
          const refusal = refusalFor(item, now, {
            shuttingDown: this.shuttingDown,
            skewed: this.guard.skewed,
            offsetMs: this.guard.offsetMs,
            skewLimitMs: this.guard.limitMs,
            ...(this.teamScope !== undefined ? { teams: this.teamScope } : {}),
          });
          if (refusal !== null) {
            if (!this.recordNew(item, now, refusal.reason === 'EXPIRED' ? 'expired' : 'refused')) continue;
            pushRow(replies, outbox.enqueueRow('refusal', item.executionId, refusalItem(item, refusal.reason, now, refusal.detail), now, HELD_IN_MEMORY));
            metrics?.dispatchItems.inc({ decision: refusal.reason.toLowerCase() });
            this.log.warn({ ...ctx, reason: refusal.reason, detail: refusal.detail }, 'dispatch refused');
            continue;
          }
          const release = this.slots.tryAcquire(item.priority);
          if (!this.recordNew(item, now, release === null ? 'acked' : 'running')) {
            release?.();
            continue;
          }
          metrics?.dispatchItems.inc({ decision: 'accepted' });
          toRun.push({ item, release });
        }
      });
    } catch (error) {
      for (const accepted of toRun) accepted.release?.();
      throw error;
    }
    this.publisher.push(replies);
    for (const { item } of toRun) this.publisher.ack({ executionId: item.executionId, instanceId: item.instanceId, at: new Date(now).toISOString() }, now);
    for (const accepted of toRun) this.execute(accepted, now);
  }

  /**
   * Why an accepted job must not start now, or null (#23, asked at its start and again by the
   * executor right before the side effect): the worker's lease may have lapsed since it accepted
   * the job (frozen, or cut off from Redis), so a broker may have given the run to another
   * worker; or its ACK has still not left when R8 forbids sending it (`ackDeadline − 1 s`), so a
   * broker may re-route it.
   */
  private startBlocker(active: Active): string | null {
    if (active.released !== null) return releasedWhy(active.released);
    const gap = this.leaseWatch.gapSince(active.acceptedAtMs, performance.now());
    if (gap !== null) return gap;
    const { item } = active;
    if (this.publisher.ackPending(item.executionId) && Date.now() > Date.parse(item.ackDeadline) - ACK_MARGIN_MS) {
      return `its ACK had not left by the ACK deadline ${item.ackDeadline} less ${ACK_MARGIN_MS} ms (R8)`;
    }
    return null;
  }

  /** Records a dispatch; false (logged) when its execution id is already known (R12). */
  private recordNew(item: DispatchItem, nowMs: number, state: DispatchState): boolean {
    if (this.deps.outbox.recordDispatch(item, nowMs, state)) return true;
    this.deps.metrics?.dispatchItems.inc({ decision: 'duplicate' });
    this.log.info({ executionId: item.executionId, instanceId: item.instanceId }, 'dispatch already known: not run again (R12)');
    return false;
  }

  private execute(accepted: Accepted, nowMs: number): void {
    const active: Active = {
      item: accepted.item,
      controller: new StopSwitch(),
      output: this.logs.open(accepted.item),
      started: false,
      acceptedAtMs: performance.now(),
      reported: false,
      released: null,
      slotTaken: accepted.release !== null,
    };
    this.active.set(accepted.item.executionId, active);
    // #23: no job starts before the AMQP ack of its dispatch message is written (the bus acks in
    // the microtask after `accept` returns; this runs after it). So a dispatch still in this
    // worker's queue when it dies never started, and one no longer there may have: the broker
    // reads the queue of a dead worker to tell which (gone-dispatches.ts).
    // runOne settles its own failures; the catch is the last guard (#23: never an unhandled rejection).
    setImmediate(() => {
      this.runOne(active, accepted.release === null ? null : { release: accepted.release, startedAtMs: nowMs }).catch((error: unknown) =>
        this.onRunCrashed(active, error),
      );
    });
  }

  /** Runs one job; `slot` is the slot taken (and recorded 'running') at accept, if any. */
  private async runOne(active: Active, slot: { release: () => void; startedAtMs: number } | null): Promise<void> {
    const { outbox, executors, metrics } = this.deps;
    const { item, controller, output } = active;
    // The child logger is built only when something is logged: at thousands of jobs a second
    // its bindings cost more than the job's own bookkeeping.
    let child: typeof this.log | undefined;
    const log = (): typeof this.log =>
      (child ??= this.log.child({ executionId: item.executionId, instanceId: item.instanceId, taskName: item.taskName, traceId: item.traceId }));
    // One line per job at info ("job ended", with what it did and how long); "job started" is
    // debug: a second synchronous stdout write per job cost ~5 % of a busy worker's CPU (#24).
    const infoEnabled = this.log.isLevelEnabled('info');
    const debugEnabled = this.log.isLevelEnabled('debug');
    let outcome: ExecutionOutcome;
    let ran: ExecutionOutcome | undefined;
    let startedAtMs: number | undefined;
    let span: AxSpan | undefined;
    try {
      const release = slot?.release ?? (await this.slots.acquire(item.priority, controller.signal));
      active.slotTaken = true;
      try {
        const blocked = this.startBlocker(active);
        if (blocked !== null) {
          ran = notStartedOutcome(blocked);
          throw new NotStarted();
        }
        const startAtMs = slot?.startedAtMs ?? Date.now();
        // R13: recorded 'running' before the job starts; if that write fails, it never starts.
        if (slot === null) await this.starts.add({ executionId: item.executionId, atMs: startAtMs });
        startedAtMs = startAtMs;
        active.started = true;
        metrics?.running.set(this.slots.inUse);
        if (debugEnabled) log().debug({ exec: item.exec.type, attempt: item.attempt }, 'job started');
        span = this.tracer.enabled ? startExecutionSpan(this.tracer, item, startAtMs) : undefined;
        try {
          ran = await executors[item.exec.type].run({
            item,
            ...(span === undefined ? {} : { traceparent: span.traceparent }),
            deadlineMs: startAtMs + item.timeoutSeconds * 1000,
            signal: controller.signal,
            onSpawn: (pgid, procStart) => outbox.setProcess(item.executionId, pgid, procStart, Date.now()),
            output,
            mayStart: () => this.startBlocker(active),
          });
        } catch (error) {
          ran = { outcome: 'FAILED', exitCode: null, error: `executor error: ${toError(error).message}` };
        }
        outcome = ran;
      } finally {
        release();
        metrics?.running.set(this.slots.inUse);
      }
    } catch (error) {
      if (error instanceof NotStarted && ran !== undefined) {
        outcome = ran;
      } else if (error instanceof SlotWaitCanceledError && active.released !== null) {
        // R9: released while it waited for a slot: never started.
        outcome = notStartedOutcome(releasedWhy(active.released));
      } else if (error instanceof SlotWaitCanceledError) {
        outcome = { ...stoppedOutcome(controller.signal.reason), error: `${stoppedOutcome(controller.signal.reason).error} (not started)` };
      } else if (ran !== undefined) {
        // The job ran; only the bookkeeping after it failed: its outcome stands.
        log().error({ err: toError(error) }, 'worker error after the job ended; reporting its outcome');
        outcome = ran;
      } else {
        // #23: the worker's own bookkeeping failed (e.g. the 'running' mark could not be
        // written, so R13 forbids starting the job): reported FAILED, the slot is free again.
        log().error({ err: toError(error) }, 'worker error before the job could run; reported FAILED');
        outcome = { outcome: 'FAILED', exitCode: null, error: `worker error, not run: ${toError(error).message}` };
        startedAtMs = undefined;
      }
    }
    const endedAtMs = Date.now();
    if (span !== undefined) endExecutionSpan(span, outcome, endedAtMs);
    // Every attempt that got this far ends its output, whatever stopped it: with an `end` item,
    // or, when a result follows, in the result (`printedNothing`, or a short output itself).
    const resultEnd = this.logs.end(output, outcome.notStarted === true ? 'items' : this.endModeOf(item));
    if (outcome.notStarted === true) {
      // #23: the job's side effect never happened: a refusal, so the broker re-routes it without
      // spending an attempt (or fences it, when it already gave the run to another worker).
      log().warn({ reason: outcome.error }, 'job not started');
      this.deps.metrics?.dispatchItems.inc({ decision: 'not_started' });
      // A released one says why (R9: recalled, or shutting down); the broker re-routes all of them without an attempt.
      const reason = active.released ?? 'EXPIRED';
      await this.report(active, refusalItem(item, reason, endedAtMs, outcome.error), endedAtMs, resultItem(item, outcome, undefined, endedAtMs));
      this.active.delete(item.executionId);
      return;
    }
    await this.report(active, resultItem(item, outcome, startedAtMs, endedAtMs, resultEnd), endedAtMs);
    this.active.delete(item.executionId);
    if (startedAtMs !== undefined) this.recordDuration(endedAtMs, endedAtMs - startedAtMs, item.exec.type, outcome);
    if (infoEnabled) {
      const durationMs = startedAtMs === undefined ? undefined : endedAtMs - startedAtMs;
      log().info({ exec: item.exec.type, attempt: item.attempt, outcome: outcome.outcome, exitCode: outcome.exitCode, durationMs, async: outcome.async, error: outcome.error }, 'job ended');
    }
  }

  /**
   * Writes the result to the outbox (its durable path); when that write fails (#23) the result
   * is kept in memory, published from there and written later (`UnwrittenResults`). With
   * `refusedInstead`, `item` is a refusal (the job never started) and `refusedInstead` the failed
   * result kept in memory if the refusal cannot be written. Never throws.
   */
  private async report(active: Active, item: Record<string, unknown>, atMs: number, refusedInstead?: Record<string, unknown>): Promise<void> {
    const executionId = active.item.executionId;
    const entry: Finish = refusedInstead === undefined ? { executionId, item, atMs } : { executionId, item, atMs, kind: 'refusal' };
    try {
      await this.finishes.add(entry);
    } catch (error) {
      this.unwritten.keep([refusedInstead === undefined ? entry : { executionId, item: refusedInstead, atMs }], error);
    }
    active.reported = true;
  }

  /** How an attempt of `item` ends its output when a result follows: in the result when its broker stores output from there. */
  private endModeOf(item: Pick<DispatchItem, 'outputInResult'>): EndMode {
    return item.outputInResult === true && this.deps.settings.logOutputInResult !== false ? 'inResult' : 'emptyInResult';
  }

  /** The last guard of `runOne`: a result for the execution unless it has one, and a log line. */
  private onRunCrashed(active: Active, error: unknown): void {
    const { item } = active;
    const ids = { executionId: item.executionId, instanceId: item.instanceId, taskName: item.taskName, traceId: item.traceId };
    try {
      // A no-op when ended already (then it says again whether the end goes in the result).
      const resultEnd = this.logs.end(active.output, this.endModeOf(item));
      this.log.error({ ...ids, err: toError(error), reported: active.reported }, 'job bookkeeping failed');
      if (!active.reported) {
        const now = Date.now();
        const result = resultItem(item, { outcome: 'FAILED', exitCode: null, error: `worker error: ${toError(error).message}` }, undefined, now, resultEnd);
        this.unwritten.keep([{ executionId: item.executionId, item: result, atMs: now }], error);
        active.reported = true;
      }
    } finally {
      this.active.delete(item.executionId);
    }
  }

  private recordDuration(endedAtMs: number, durationMs: number, type: string, outcome: ExecutionOutcome): void {
    this.durations.add(endedAtMs, durationMs);
    this.deps.metrics?.executions.inc({ type, outcome: outcome.outcome });
    this.deps.metrics?.duration.observe({ type }, durationMs / 1000);
  }

  // ---- cancels ------------------------------------------------------------------------------

  private onControl(message: BusMessage): Promise<ConsumeOutcome> {
    const parsed = parseMessage(message.body);
    if (!parsed.ok || parsed.message.kind !== 'cancel') {
      this.deps.metrics?.deadLettered.inc();
      return Promise.resolve({ action: 'dead-letter', reason: parsed.ok ? `expected a cancel message, got ${parsed.message.kind}` : parsed.reason });
    }
    this.cancel(parsed.message);
    return Promise.resolve('ack');
  }

  private cancel(message: CancelMessage): void {
    if (message.reason === RECALL_REASON) {
      this.recall(message.executionIds);
      return;
    }
    for (const executionId of message.executionIds) {
      const active = this.active.get(executionId);
      if (active !== undefined) {
        this.log.info({ executionId, reason: message.reason, started: active.started }, 'cancel: stopping the execution');
        active.controller.abort('cancel');
        continue;
      }
      if (this.deps.outbox.dispatch(executionId) !== undefined) continue; // already finished or refused
      this.earlyCancels.add(executionId);
      if (this.earlyCancels.size > EARLY_CANCELS_KEPT) {
        const oldest = this.earlyCancels.values().next().value;
        if (oldest !== undefined) this.earlyCancels.delete(oldest);
      }
    }
  }

  /**
   * A broker recalls held dispatches (R9 prefetch). One not started yet is released: it never
   * starts (`startBlocker`, checked again by the executor right before the side effect) and is
   * answered with a `RECALLED` refusal, which the broker applies by putting the instance back to
   * PENDING without an attempt. One already started is answered by what it sends anyway (its
   * result); the recall is dropped. An id this worker no longer holds (finished, refused, never
   * received) is ignored: a recall never cancels anything.
   */
  private recall(executionIds: Iterable<string>, reason: 'RECALLED' | 'SHUTTING_DOWN' = 'RECALLED'): void {
    for (const executionId of executionIds) {
      const active = this.active.get(executionId);
      if (active === undefined || active.released !== null) continue;
      if (active.started) {
        if (reason === 'RECALLED') this.log.info({ executionId }, 'recall: already started; it runs here');
        continue;
      }
      active.released = reason;
      this.log.info({ executionId, reason }, 'released before it started');
      this.deps.metrics?.dispatchItems.inc({ decision: reason.toLowerCase() });
      // Waiting for a slot: wake it out of the wait. Holding one already, it is about to start:
      // the mark alone keeps it from starting (`startBlocker`), and the stop switch must not
      // turn it into a CANCELED result.
      if (!active.slotTaken) active.controller.abort('recall');
    }
  }

  // ---- registry, lease and clock ------------------------------------------------------------

  /** The teams an enrolled worker serves (undefined: unenrolled). */
  get teams(): TeamScope | undefined {
    return this.teamScope;
  }

  /**
   * An enrolled worker's teams changed (a refresh of its enrollment): items of a team no longer
   * served are refused from now on, and the next heartbeat advertises the new list.
   */
  setTeams(scope: TeamScope): void {
    const before = this.teamScope === undefined ? undefined : describeScope(this.teamScope);
    this.teamScope = scope;
    if (before !== describeScope(scope)) {
      this.log.warn({ before, after: describeScope(scope) }, 'teams served changed (enrollment refreshed)');
      void this.heartbeat();
    }
  }

  /** The registry entry as it would be published now. */
  registration(draining: boolean, nowMs = Date.now()): WorkerRegistration {
    const { settings } = this.deps;
    const skewed = this.guard.skewed;
    const scope = this.teamScope;
    // An enrolled worker left with no team takes nothing (an empty list would mean every team).
    const servesNone = scope !== undefined && !scope.all && scope.teams.length === 0;
    return {
      workerId: settings.workerId,
      host: os.hostname(),
      tags: [...settings.tags],
      teams: scope === undefined ? [...(settings.teams ?? [])] : scope.all ? [] : [...scope.teams],
      ...(settings.reservedSlots !== undefined ? { reservedSlots: settings.reservedSlots } : {}),
      cores: Math.max(1, os.availableParallelism()),
      // A skewed worker keeps only the lease of what it still runs: no capacity to route to.
      slots: skewed ? 0 : settings.slots,
      ...((settings.jobPrefetch ?? 0) > 0 ? { prefetch: skewed ? 0 : settings.jobPrefetch } : {}),
      running: this.slots.inUse,
      // Held dispatches are in the lease (`active`) and listed apart: what a broker may recall (R9).
      runningExecutionIds: this.leaseExecutionIds(),
      held: this.heldNow(),
      avgDurationMs5m: this.durations.average(nowMs),
      draining: draining || skewed || this.shuttingDown || servesNone,
      version: settings.version,
      startedAt: this.startedAt,
      at: new Date(nowMs).toISOString(),
      clockOffsetMs: this.guard.offsetMs,
    };
  }

  /** Dispatches ACKed and waiting for a slot (not started, not recalled), with how long each has been held. */
  private heldNow(): Array<{ executionId: string; heldMs: number }> {
    const waiting: Array<{ executionId: string; acceptedAtMs: number }> = [];
    for (const a of this.active.values()) if (!a.started && a.released === null) waiting.push({ executionId: a.item.executionId, acceptedAtMs: a.acceptedAtMs });
    return heldEntries(waiting, performance.now());
  }

  private async heartbeat(): Promise<void> {
    const { redis, keys, settings, outbox } = this.deps;
    if (this.heartbeatRunning) return; // a slow Redis: never two heartbeats at once
    this.heartbeatRunning = true;
    try {
      this.logMetrics();
      try {
        this.deps.metrics?.outboxUnconfirmed.set(outbox.unconfirmedCount());
      } catch (error) {
        this.log.warn({ err: toError(error) }, 'could not count unconfirmed outbox items');
      }
      const lease = this.leaseExecutionIds();
      if (this.guard.skewed && lease.length === 0) {
        // §5: a skewed worker leaves the registry (once nothing of its own is left to lease).
        if (this.registered) {
          await removeRegistration(redis, keys, settings.workerId);
          this.registered = false;
          this.log.warn('left the registry: clock skewed');
        }
        return;
      }
      const sentAtMs = performance.now();
      const drained = await isDrained(redis, keys, settings.workerId, this.startedAt);
      await publishRegistration(redis, keys, this.registration(drained), settings.leaseTtlMs);
      this.leaseWatch.renewed(sentAtMs, performance.now());
      this.registered = true;
    } catch (error) {
      this.log.warn({ err: error }, 'heartbeat failed; retrying at the next interval');
    } finally {
      this.heartbeatRunning = false;
    }
  }

  /** Job output metrics, fed once per heartbeat. */
  private logMetrics(): void {
    const { metrics } = this.deps;
    const stats = this.logs.takeStats();
    if (metrics === undefined) return;
    metrics.logBytes.inc({ stream: 'stdout' }, stats.stdoutBytes);
    metrics.logBytes.inc({ stream: 'stderr' }, stats.stderrBytes);
    metrics.logTruncated.inc(stats.truncated);
    metrics.logOutboxBytes.set(this.logPublisher.backlogBytes);
  }

  /** Drops confirmed items and finished dispatches older than a day (redeliveries come within seconds). */
  private prune(): void {
    try {
      const removed = this.deps.outbox.prune(Date.now() - OUTBOX_KEEP_MS);
      if (removed.dispatch + removed.outgoing > 0) this.log.debug(removed, 'outbox pruned');
    } catch (error) {
      this.log.warn({ err: error }, 'outbox prune failed');
    }
  }

  private async checkClock(): Promise<void> {
    try {
      const sample = await measureOffset(this.deps.redis);
      this.deps.metrics?.clockOffset.set(sample.offsetMs);
      const change = this.guard.update(sample);
      if (change === 'became-skewed') {
        this.deps.metrics?.alerts.inc({ kind: 'CLOCK_SKEW' });
        const alert: WorkerAlert = {
          kind: 'CLOCK_SKEW',
          severity: 'critical',
          workerId: this.deps.settings.workerId,
          message: `worker clock is ${sample.offsetMs} ms off Redis TIME (limit ${this.guard.limitMs} ms): refusing work and leaving the registry`,
          at: new Date().toISOString(),
        };
        this.log.error({ alert, offsetMs: sample.offsetMs, roundTripMs: sample.roundTripMs }, 'ALERT CLOCK_SKEW: refusing all work');
        // Nobody else hears of it (the worker leaves the registry): the worker sends it itself.
        this.deps.sendAlert?.(alert).catch((error: unknown) => this.log.warn({ err: toError(error) }, 'alert webhook failed'));
        await this.heartbeat();
      } else if (change === 'recovered') {
        this.log.warn({ offsetMs: sample.offsetMs }, 'clock back within 1 s of Redis TIME: taking work again');
        await this.heartbeat();
      }
    } catch (error) {
      this.log.warn({ err: error }, 'clock check failed; keeping the last state');
    }
  }

  // ---- shutdown -----------------------------------------------------------------------------

  /**
   * SIGTERM (§5): stop taking work, let running jobs finish within the grace, then kill and
   * report them, flush the outbox, deregister. Idempotent.
   */
  stop(): Promise<void> {
    this.stopped ??= this.doStop();
    return this.stopped;
  }

  /**
   * Stops at once, nothing more to deliver (the enrollment was revoked: its RabbitMQ and Redis
   * users are gone, brokers recover its executions as from a lost worker): takes no more work,
   * kills the running jobs without a grace, then stops as `stop` does with a short flush.
   */
  abandon(reason: string): Promise<void> {
    this.abandoned = true;
    this.shuttingDown = true;
    for (const active of this.active.values()) active.controller.abort('shutdown');
    if (this.active.size > 0) this.log.warn({ executions: [...this.active.keys()], reason }, 'killing the running jobs: their results cannot be delivered');
    return this.stop();
  }

  /**
   * Publishes what is unconfirmed (outbox and results held in memory), backoff aside; true when
   * everything was confirmed within `timeoutMs`. Never rejects (also used on a fatal error).
   */
  async flushResults(timeoutMs: number): Promise<boolean> {
    const settle = async (flush: Promise<boolean>, what: string): Promise<boolean> => {
      try {
        return await flush;
      } catch (error) {
        this.log.warn({ err: toError(error), what }, 'flush failed');
        return false;
      }
    };
    this.logs.flushNow();
    const [outbox, memory, logs] = await Promise.all([
      settle(this.publisher.flush(timeoutMs), 'outbox'),
      settle(this.unwritten.flush(timeoutMs), 'unwritten results'),
      settle(this.logPublisher.flush(timeoutMs), 'job output'),
    ]);
    if (!logs) this.log.warn('job output not fully shipped; the outbox is replayed at the next start');
    return outbox && memory;
  }

  private async doStop(): Promise<void> {
    const { settings, redis, keys } = this.deps;
    this.shuttingDown = true;
    await this.dispatchConsumer?.cancel();
    // R9: what waits for a slot (held ahead) is given back at once, not run during the grace
    // nor killed at its end: a SHUTTING_DOWN refusal, re-routed without an attempt.
    if (!this.abandoned) this.recall([...this.active.keys()], 'SHUTTING_DOWN');
    await this.heartbeat(); // draining: true
    const graceEnds = Date.now() + (this.abandoned ? 0 : settings.shutdownGraceMs);
    while (this.active.size > 0 && Date.now() < graceEnds) await sleep(100);
    if (this.active.size > 0) {
      this.log.warn({ executions: [...this.active.keys()] }, 'shutdown grace over: killing the jobs still running');
      for (const active of this.active.values()) active.controller.abort('shutdown');
      const killEnds = Date.now() + 15_000;
      while (this.active.size > 0 && Date.now() < killEnds) await sleep(50);
    }
    await this.controlConsumer?.cancel();
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.clockTimer) clearInterval(this.clockTimer);
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    const flushed = await this.flushResults(this.abandoned ? 1_000 : 10_000);
    if (!flushed) this.log.warn({ unconfirmed: this.leaseExecutionIds().length }, 'results not fully confirmed; the outbox is replayed at the next start');
    this.publisher.stop();
    this.unwritten.stop();
    this.logs.stop();
    this.logPublisher.stop();
    if (!flushed) return; // keep the lease until it expires: unconfirmed results are not lost (R14)
    try {
      await removeRegistration(redis, keys, settings.workerId);
    } catch (error) {
      this.log.warn({ err: error }, 'could not deregister; the entry expires with its TTL');
    }
    this.log.info('worker stopped');
  }
}

/** Why a released job did not start (its refusal's detail). */
function releasedWhy(reason: 'RECALLED' | 'SHUTTING_DOWN'): string {
  return reason === 'RECALLED' ? 'recalled by a broker before it started (R9 prefetch)' : 'held ahead when the worker shut down (R9 prefetch)';
}

function pushRow(rows: OutgoingRow[], row: OutgoingRow | null): void {
  if (row !== null) rows.push(row);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Thrown inside `runOne` when `startBlocker` keeps a job from starting (its outcome is set first). */
class NotStarted extends Error {
  override readonly name = 'NotStarted';
}
