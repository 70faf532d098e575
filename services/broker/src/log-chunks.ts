/**
 * The logs consumer (issue #19, DESIGN §11): job output chunks and end markers from workers on
 * `<ns>.logs` → `job_log_chunk` / `job_log_end`. Every broker consumes the queue
 * (competitively: appends are idempotent by (execution, stream, offset), so which broker writes
 * a chunk, and in which order, does not matter).
 *
 * - On a channel of its own (the bus gives each consumer one) with its own prefetch, so a burst
 *   of output never delays ACKs and results on `<ns>.events`; and through one statement in
 *   flight at a time (group commit, as event-batch.ts): what arrives meanwhile forms the next
 *   batch, so output takes at most one pool connection away from the events consumer.
 * - A message that cannot be read (its envelope), or of another kind, is dead-lettered with the
 *   parser's reason; a bad item inside a readable message is refused alone (counted in
 *   `ax_refused_items_total{kind="log"}`, logged, dropped: refused-items.ts) and the message's
 *   other items are stored (#45).
 * - Items of an execution the store does not know, or that was dispatched to another worker,
 *   are dropped and counted (a worker writes only its own executions' output; a chunk that
 *   arrives after its instance was purged does not come back as an orphan). So are items whose
 *   sender (the validated RabbitMQ user) may not speak for that worker (R24, attribution.ts:
 *   `ax_unattributed_items_total{kind="log"}`), whatever worker the message claims to be.
 * - A retryable store error (MySQL away, deadlock, failover) holds the delivery unacked and
 *   retries on a {@link StoreOutageGate} (capped exponential backoff, one attempt at a time):
 *   nothing is lost, nothing spins; on stop the delivery is released to the queue unchanged.
 *   Any other error dead-letters the message (after isolating it from the batch it was in).
 */
import type { BusMessage, ConsumeOutcome } from '@ax/bus';
import { parseMessageByItem, type LogMessage } from '@ax/core';
import { toError, type Counter, type Metrics } from '@ax/kit';
import { appendLogItems, workersOfExecutions, type LogEnd, type NewLogChunk } from '@ax/store';
import type { BrokerContext } from './context.js';
import { isRetryableStoreError } from './dead-letters.js';
import { reportRefusedItems } from './refused-items.js';
import { attributed } from './attribution.js';
import { StoreOutageGate, type StoreOutageGateOptions } from './store-outage-gate.js';

/** Unacked `log` messages per broker (`<ns>.logs`). */
export const LOGS_PREFETCH = 50;

/** Decoded output bytes per batch at most (one batch stops growing past this). */
const MAX_BATCH_BYTES = 8 * 1_048_576;

/** Options of {@link createLogChunkHandler}. */
export type LogChunkHandlerOptions = StoreOutageGateOptions;

/** The series of job output stored (by the logs consumer, and with results: result-output.ts). */
export interface LogMetrics {
  readonly bytes: Counter<'stream'>;
  readonly storedBytes: Counter;
  readonly dropped: Counter<'why'>;
}

const logMetrics = new WeakMap<Metrics, LogMetrics>();

/** The job output series of `metrics`, registered on first use. */
export function logMetricsOf(metrics: Metrics): LogMetrics {
  let series = logMetrics.get(metrics);
  if (series === undefined) {
    series = createLogMetrics(metrics);
    logMetrics.set(metrics, series);
  }
  return series;
}

function createLogMetrics(metrics: Metrics): LogMetrics {
  return {
    bytes: metrics.counter({ name: 'ax_log_bytes_total', help: 'Job output bytes appended (decoded, duplicates included)', labelNames: ['stream'] }),
    storedBytes: metrics.counter({ name: 'ax_log_stored_bytes_total', help: 'Job output bytes written to the store (after compression)' }),
    dropped: metrics.counter({ name: 'ax_log_items_dropped_total', help: 'Log items of unknown executions or of another worker', labelNames: ['why'] }),
  };
}

/** A `log` message with the validated RabbitMQ user that sent it (R24). */
type SentLog = LogMessage & { readonly sender?: string | undefined };

interface Pending {
  readonly message: SentLog;
  readonly bytes: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

function decodedBytes(message: LogMessage): number {
  let n = 0;
  for (const item of message.items) if (item.part === 'chunk') n += Math.floor((item.data.length * 3) / 4);
  return n;
}

/** Group commit of `log` messages: one append in flight; what arrives meanwhile is the next batch. */
class LogWriter {
  readonly #pending: Pending[] = [];
  #flushing = false;

  constructor(private readonly write: (messages: readonly SentLog[]) => Promise<void>) {}

  submit(message: SentLog): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ message, bytes: decodedBytes(message), resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        setImmediate(() => void this.#flush());
      }
    });
  }

  async #flush(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        let bytes = 0;
        let take = 0;
        while (take < this.#pending.length && (take === 0 || bytes + (this.#pending[take] as Pending).bytes <= MAX_BATCH_BYTES)) {
          bytes += (this.#pending[take] as Pending).bytes;
          take += 1;
        }
        await this.#apply(this.#pending.splice(0, take));
      }
    } finally {
      this.#flushing = false;
    }
  }

  async #apply(batch: readonly Pending[]): Promise<void> {
    try {
      await this.write(batch.map((p) => p.message));
      for (const p of batch) p.resolve();
    } catch (error) {
      if (batch.length === 1 || isRetryableStoreError(error)) {
        for (const p of batch) p.reject(error);
        return;
      }
      // Isolate the message that fails: the others still apply.
      for (const p of batch) {
        try {
          await this.write([p.message]);
          p.resolve();
        } catch (single) {
          p.reject(single);
        }
      }
    }
  }
}

/** The handler of `<ns>.logs`. `metrics` registers the consumer's series. */
export function createLogChunkHandler(ctx: BrokerContext, metrics: Metrics, options: LogChunkHandlerOptions = {}): (message: BusMessage) => Promise<ConsumeOutcome> {
  const gate = new StoreOutageGate({ random: ctx.random, ...options });
  const logger = ctx.logger.child({ component: 'log-chunks', queue: ctx.bus.topology.logsQueue });
  const series = logMetricsOf(metrics);

  const writer = new LogWriter(async (messages) => {
    const ids = [...new Set(messages.flatMap((m) => m.items.map((i) => i.executionId)))];
    const workers = await workersOfExecutions(ctx.pool, ids);
    const chunks: NewLogChunk[] = [];
    const ends: LogEnd[] = [];
    for (const m of messages) {
      for (const item of m.items) {
        const owner = workers.get(item.executionId);
        // R24 first: whatever worker the message claims, its sender must speak for the owner.
        if (owner !== undefined && !attributed(ctx, logger, { kind: 'log', sender: m.sender, workerId: owner, executionId: item.executionId, claimedWorkerId: m.workerId })) continue;
        if (owner !== m.workerId) {
          const why = owner === undefined ? 'unknown_execution' : 'other_worker';
          series.dropped.inc({ why });
          logger.warn({ executionId: item.executionId, workerId: m.workerId, owner, why }, 'log item dropped');
          continue;
        }
        if (item.part === 'end') {
          ends.push({ executionId: item.executionId, stdoutBytes: item.stdoutBytes, stderrBytes: item.stderrBytes, truncated: item.truncated });
          continue;
        }
        const data = Buffer.from(item.data, 'base64');
        series.bytes.inc({ stream: item.stream }, data.length);
        chunks.push({ executionId: item.executionId, stream: item.stream, offset: item.offset, allOffset: item.allOffset, data });
      }
    }
    if (chunks.length === 0 && ends.length === 0) return;
    const outcome = await appendLogItems(ctx.pool, chunks, ends);
    series.storedBytes.inc(outcome.storedBytes);
  });

  return async (raw) => {
    const parsed = parseMessageByItem(raw.body);
    if (!parsed.ok) {
      ctx.metrics.invalidMessages.inc({ kind: 'invalid' });
      logger.warn({ reason: parsed.reason }, 'invalid log message dead-lettered');
      return { action: 'dead-letter', reason: parsed.reason };
    }
    const message = parsed.message;
    if (message.kind !== 'log') {
      ctx.metrics.invalidMessages.inc({ kind: message.kind });
      return { action: 'dead-letter', reason: `a ${message.kind} message does not belong on the logs queue` };
    }
    if (parsed.refused.length > 0) {
      reportRefusedItems(ctx.metrics, logger, 'log', message.workerId, parsed.refused);
      if (message.items.length === 0) return 'ack'; // every item refused: nothing to store
    }
    for (;;) {
      const turn = await gate.enter(raw.signal);
      if (turn === null) return 'release'; // stopping: RabbitMQ keeps it for the next consumer
      try {
        await writer.submit({ ...message, sender: raw.userId });
        const outageMs = gate.succeeded();
        if (outageMs !== undefined) logger.info({ outageMs }, 'job output stored again after a store outage');
        return 'ack';
      } catch (thrown) {
        const error = toError(thrown);
        if (!isRetryableStoreError(error)) {
          logger.error({ err: error, workerId: message.workerId, items: message.items.length }, 'log message cannot be stored; dead-lettering it');
          return { action: 'dead-letter', reason: `not stored: ${error.message}` };
        }
        const retryInMs = gate.failed(turn);
        if (raw.signal.aborted) return 'release';
        logger.warn({ err: error, failures: gate.consecutiveFailures, retryInMs }, 'job output not stored (store unavailable); holding it unacked and retrying');
      } finally {
        turn.release();
      }
    }
  };
}
