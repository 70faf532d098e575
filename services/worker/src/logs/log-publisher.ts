/**
 * Publishes the outbox's `log_outgoing` rows (job output, DESIGN §11) as `log` messages on
 * `<ns>.logs` over the bus's confirm channel, and deletes each row once RabbitMQ confirmed it.
 *
 * - Rows just written are handed over in memory (`push`) and never read back; the table is read
 *   only at start (what a restart left), after a failed publish, and when the memory queue is
 *   over its bound (a long outage: the rows wait on disk, not in memory).
 * - Several rows travel in one message (at most `MAX_ITEMS_PER_MESSAGE` items and
 *   `maxMessageDataBytes` of data); the body is put together from the rows' texts, nothing is
 *   parsed or encoded again. A row waits up to `lingerMs` for others to join it (the rows are
 *   already durable, so waiting risks nothing): at thousands of short jobs a second, the `end`
 *   items of one result batch would otherwise be one message each, and a publish with its
 *   confirm costs the worker more CPU than the items in it.
 * - Confirmed rows are deleted together, at most `deleteDelayMs` later (one transaction for many
 *   messages: a commit per message showed in the worker's write calls); a crash before that
 *   only sends them again.
 * - Rows are published in id order, so an execution's `end` follows its chunks. While RabbitMQ
 *   is unreachable `@ax/bus` holds the messages in flight and resends them after the reconnect;
 *   a rejected publish is retried with backoff from the table. At-least-once: a chunk may arrive
 *   twice (the store appends by offset, a duplicate changes nothing), and after a failed publish
 *   an `end` may overtake a resent chunk of its execution — the `end` carries the byte counts,
 *   so the store knows what is still missing.
 */
import { MAX_ITEMS_PER_MESSAGE } from '@ax/core';
import { toError, type Logger } from '@ax/kit';
import type { LogRow, Outbox } from '../outbox.js';
import { retryDelayMs, type EventPublisher } from '../publisher.js';

/** Options of `LogPublisher`. */
export interface LogPublisherOptions {
  readonly outbox: Outbox;
  readonly bus: EventPublisher;
  /** `<ns>.logs` (`topology.logsExchange`). */
  readonly exchange: string;
  readonly workerId: string;
  readonly logger: Logger;
  /** Messages in flight at once; default 2. */
  readonly maxInflight?: number;
  /** Most chunk data per message, bytes; default 4 MiB (the body is about 4/3 of it, well under `MAX_MESSAGE_BYTES`). */
  readonly maxMessageDataBytes?: number;
  /** Data bytes of pushed rows kept in memory; past it rows are read back from the table. Default 16 MiB. */
  readonly memoryQueueBytes?: number;
  /** Longest wait of a pushed row for others to share its message; default 100 ms. 0: at once. */
  readonly lingerMs?: number;
  /** Longest wait before confirmed rows are deleted; default 1000 ms. */
  readonly deleteDelayMs?: number;
  /** Called after every confirmed message with its item count (metrics). */
  readonly onConfirmed?: (items: number) => void;
  readonly nowMs?: () => number;
}

/** Rows read from the table at once. */
const READ_ROWS = 64;

/** Ships job output to RabbitMQ. */
export class LogPublisher {
  private queue: LogRow[] = [];
  private queuedBytes = 0;
  private queuedItems = 0;
  /** When the oldest row in the memory queue was pushed. */
  private queuedSinceMs = 0;
  private lingerTimer: NodeJS.Timeout | undefined;
  /** Confirmed rows not yet deleted. */
  private confirmedIds = new Set<number>();
  private deleteTimer: NodeJS.Timeout | undefined;
  /** True while rows are to be read from the table (after a restart, a failure, a full memory queue). */
  private fromTable = false;
  private cursor = 0;
  private readonly inflightIds = new Set<number>();
  private inflight = 0;
  private failures = 0;
  private retryAtMs = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private scheduled = false;
  private stopped = false;
  private backlog = 0;
  private readonly idleWaiters: Array<() => void> = [];
  private readonly maxInflight: number;
  private readonly maxMessageDataBytes: number;
  private readonly memoryQueueBytes: number;
  private readonly now: () => number;
  private readonly lingerMs: number;
  private readonly deleteDelayMs: number;
  private readonly prefix: string;

  constructor(private readonly options: LogPublisherOptions) {
    this.maxInflight = options.maxInflight ?? 2;
    this.maxMessageDataBytes = options.maxMessageDataBytes ?? 4 * 1_048_576;
    this.memoryQueueBytes = options.memoryQueueBytes ?? 16 * 1_048_576;
    this.now = options.nowMs ?? Date.now;
    this.lingerMs = options.lingerMs ?? 100;
    this.deleteDelayMs = options.deleteDelayMs ?? 1_000;
    this.prefix = `{"v":1,"kind":"log","workerId":${JSON.stringify(options.workerId)},"items":[`;
  }

  /** Data bytes written to the table and not yet confirmed (the shipper's backlog bound). */
  get backlogBytes(): number {
    return this.backlog;
  }

  /** Reads what the table holds (a previous run's unshipped output) and starts sending it. */
  start(): void {
    try {
      this.backlog = this.options.outbox.logBacklog().bytes;
    } catch (error) {
      this.options.logger.warn({ err: toError(error) }, 'log outbox: could not read the backlog');
    }
    this.fromTable = true;
    this.cursor = 0;
    this.wake();
  }

  /** Sends rows just written to the table. */
  push(rows: readonly LogRow[]): void {
    for (const row of rows) {
      this.backlog += row.dataBytes;
      if (this.fromTable) continue; // read back in id order with the rest
      if (this.queuedBytes + row.dataBytes > this.memoryQueueBytes) {
        // Backed up (an outage): forget the memory copies, read them back as they can go.
        this.toTable();
        continue;
      }
      if (this.queue.length === 0) this.queuedSinceMs = this.now();
      this.queue.push(row);
      this.queuedBytes += row.dataBytes;
      this.queuedItems += row.items;
    }
    this.wake();
  }

  /** Resolves true once every row is confirmed, false after `timeoutMs` (backoff skipped). */
  async flush(timeoutMs: number): Promise<boolean> {
    const deadline = this.now() + timeoutMs;
    for (;;) {
      let rows: number;
      try {
        this.deleteConfirmed();
        rows = this.options.outbox.logBacklog().rows;
      } catch (error) {
        this.options.logger.warn({ err: toError(error) }, 'log outbox: could not count unshipped output');
        return false;
      }
      if (rows === 0) return true;
      if (this.now() >= deadline) return false;
      this.retryAtMs = 0;
      this.pump(true);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(200, Math.max(1, deadline - this.now())));
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Stops scheduling; publishes in flight keep their promises. */
  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.deleteConfirmed();
  }

  /** Deletes the rows confirmed so far (never throws: a row left is only sent again). */
  private deleteConfirmed(): void {
    if (this.deleteTimer) clearTimeout(this.deleteTimer);
    this.deleteTimer = undefined;
    if (this.confirmedIds.size === 0) return;
    const ids = [...this.confirmedIds];
    this.confirmedIds = new Set();
    try {
      this.options.outbox.deleteLogs(ids);
    } catch (error) {
      // Closed under us (shutdown) or a sick disk: the rows are sent again later, harmlessly.
      this.options.logger.warn({ err: toError(error), rows: ids.length }, 'log outbox: could not delete shipped output');
    }
  }

  private wake(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private toTable(): void {
    this.fromTable = true;
    this.cursor = 0;
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedItems = 0;
  }

  /** True when the memory queue should go now: a full message waits, or its oldest row lingered enough. */
  private due(force: boolean): boolean {
    if (force || this.fromTable || this.lingerMs <= 0) return true;
    if (this.queuedItems >= MAX_ITEMS_PER_MESSAGE || this.queuedBytes >= this.maxMessageDataBytes) return true;
    const waitMs = this.queuedSinceMs + this.lingerMs - this.now();
    if (waitMs <= 0) return true;
    if (this.lingerTimer === undefined && !this.stopped) {
      this.lingerTimer = setTimeout(() => {
        this.lingerTimer = undefined;
        this.pump();
      }, waitMs);
      this.lingerTimer.unref();
    }
    return false;
  }

  private pump(force = false): void {
    if (this.now() < this.retryAtMs) return this.scheduleRetry();
    while (this.inflight < this.maxInflight && (this.queue.length > 0 || this.fromTable) && this.due(force)) {
      let batch: LogRow[];
      try {
        batch = this.nextBatch();
      } catch (error) {
        // Never out of a timer (#23): the rows stay in the table and are read again.
        this.options.logger.warn({ err: toError(error) }, 'log outbox: could not read output to ship; retrying');
        this.failures += 1;
        this.retryAtMs = this.now() + retryDelayMs(this.failures);
        return this.scheduleRetry();
      }
      if (batch.length === 0) return;
      this.send(batch);
    }
  }

  /** The next rows to send together: from memory, else from the table. */
  private nextBatch(): LogRow[] {
    if (this.queue.length === 0 && this.fromTable) {
      const rows = this.options.outbox.logsAfter(this.cursor, READ_ROWS);
      const last = rows[rows.length - 1];
      if (last === undefined) this.fromTable = false;
      else this.cursor = last.id;
      for (const row of rows) if (!this.inflightIds.has(row.id) && !this.confirmedIds.has(row.id)) this.queue.push(row);
      // Read-back rows are not counted in queuedBytes: they are a bounded page.
    }
    const batch: LogRow[] = [];
    let items = 0;
    let bytes = 0;
    while (this.queue.length > 0) {
      const row = this.queue[0];
      if (row === undefined) break;
      if (batch.length > 0 && (items + row.items > MAX_ITEMS_PER_MESSAGE || bytes + row.dataBytes > this.maxMessageDataBytes)) break;
      this.queue.shift();
      batch.push(row);
      items += row.items;
      bytes += row.dataBytes;
    }
    if (!this.fromTable) {
      this.queuedBytes = Math.max(0, this.queuedBytes - bytes);
      this.queuedItems = Math.max(0, this.queuedItems - items);
      this.queuedSinceMs = this.now(); // what is left waits anew (it joins the next message)
    }
    return batch;
  }

  private send(batch: readonly LogRow[]): void {
    const { bus, exchange, logger } = this.options;
    const ids = batch.map((r) => r.id);
    for (const id of ids) this.inflightIds.add(id);
    this.inflight += 1;
    const items = batch.reduce((n, r) => n + r.items, 0);
    const bytes = batch.reduce((n, r) => n + r.dataBytes, 0);
    const body = Buffer.from(`${this.prefix}${batch.map((r) => r.itemsJson).join(',')}]}`, 'utf8');
    const settle = (): void => {
      for (const id of ids) this.inflightIds.delete(id);
      this.inflight -= 1;
      for (const waiter of this.idleWaiters.splice(0)) waiter();
      if (!this.stopped) this.pump();
    };
    bus.publish(exchange, 'log', body).then(
      () => {
        this.failures = 0;
        this.backlog = Math.max(0, this.backlog - bytes);
        for (const id of ids) this.confirmedIds.add(id);
        if (this.confirmedIds.size >= READ_ROWS * 4 || this.stopped) this.deleteConfirmed();
        else if (this.deleteTimer === undefined) {
          this.deleteTimer = setTimeout(() => this.deleteConfirmed(), this.deleteDelayMs);
          this.deleteTimer.unref();
        }
        this.options.onConfirmed?.(items);
        settle();
      },
      (error: unknown) => {
        this.failures += 1;
        logger.warn({ err: toError(error), items, attempts: this.failures }, 'log outbox: publish failed; will retry');
        this.toTable();
        this.retryAtMs = this.now() + retryDelayMs(this.failures - 1);
        settle();
      },
    );
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = undefined;
        this.pump();
      },
      Math.max(1, this.retryAtMs - this.now()),
    );
    this.retryTimer.unref();
  }
}
