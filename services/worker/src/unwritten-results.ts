/**
 * Results the outbox refused (issue #23: disk full, `SQLITE_BUSY`). The outbox is the durable
 * path of a result, not its only one: a result whose write failed is kept here in memory,
 * published at once, and its outbox write is retried with backoff — so a job that succeeded is
 * neither lost nor run again. Until RabbitMQ confirmed its publish the execution stays in the
 * worker's lease (`leaseIds`, R14), so no broker declares it `LOST_WORKER`.
 *
 * Never sent twice by this worker:
 * - the write succeeds before the memory copy was sent → the row goes to the outbox publisher
 *   (`handOver`), which owns it from then on, and the memory copy is dropped;
 * - it succeeds while the memory copy is in flight → the row is written held and confirmed when
 *   that publish is (or handed over if that publish fails);
 * - it succeeds after the memory copy was confirmed → the row is written confirmed.
 * A crash before the write leaves the dispatch `running` in the outbox: the next start reports
 * it `WORKER_RESTART`, which a broker that already applied the result ignores (results are
 * idempotent by execution id, §4).
 */
import { encodeTrustedMessage, MAX_ITEMS_PER_MESSAGE, type Message } from '@ax/core';
import { toError, type Logger } from '@ax/kit';
import { HELD_IN_MEMORY, type Outbox, type OutgoingRow } from './outbox.js';
import { retryDelayMs, type EventPublisher } from './publisher.js';

/** A result the outbox could not take: what `finishRow` was given. */
export interface UnwrittenResult {
  readonly executionId: string;
  /** The `ResultItem` as it goes into the message. */
  readonly item: Record<string, unknown>;
  /** When the job ended (the row's time). */
  readonly atMs: number;
}

/** Options of `UnwrittenResults`. */
export interface UnwrittenResultsOptions {
  readonly outbox: Outbox;
  readonly bus: EventPublisher;
  /** `<ns>.events`. */
  readonly exchange: string;
  readonly workerId: string;
  readonly logger: Logger;
  /** Gives a row written by a retry to the outbox publisher (`OutboxPublisher.push`). */
  readonly handOver: (rows: readonly OutgoingRow[]) => void;
  /** Called after every confirmed publish (metrics). */
  readonly onConfirmed?: (count: number) => void;
  /** Pause before the second write attempt, doubled after each up to `maxWriteRetryMs`; default 250 ms. */
  readonly writeRetryMs?: number;
  /** Longest pause between write attempts; default 10000 ms. */
  readonly maxWriteRetryMs?: number;
  readonly nowMs?: () => number;
}

interface Kept extends UnwrittenResult {
  /** The memory copy: not sent (or sent and failed), in flight, or confirmed by RabbitMQ. */
  sent: 'no' | 'in-flight' | 'confirmed';
  /** True once the outbox holds a result row of this execution. */
  written: boolean;
  /** The row a retry wrote while the memory copy was in flight (confirmed with it). */
  row: OutgoingRow | null;
  publishAttempts: number;
  nextPublishMs: number;
  writeAttempts: number;
  nextWriteMs: number;
}

/** The results of one worker that are not (yet) in its outbox. */
export class UnwrittenResults {
  private readonly kept = new Map<string, Kept>();
  private readonly waiters: Array<() => void> = [];
  private readonly now: () => number;
  private readonly writeRetryMs: number;
  private readonly maxWriteRetryMs: number;
  private scheduled = false;
  /** Kept since the last log line, and why: one line per failed batch, not one per result. */
  private unlogged: { ids: string[]; error: unknown } | null = null;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: UnwrittenResultsOptions) {
    this.now = options.nowMs ?? Date.now;
    this.writeRetryMs = options.writeRetryMs ?? 250;
    this.maxWriteRetryMs = options.maxWriteRetryMs ?? 10_000;
  }

  /** Takes results whose outbox write failed with `error`; publishes them and retries the write. */
  keep(results: readonly UnwrittenResult[], error: unknown): void {
    const now = this.now();
    for (const r of results) {
      if (this.kept.has(r.executionId)) continue;
      this.kept.set(r.executionId, { ...r, sent: 'no', written: false, row: null, publishAttempts: 0, nextPublishMs: now, writeAttempts: 1, nextWriteMs: now + this.writeRetryMs });
    }
    this.unlogged ??= { ids: [], error };
    this.unlogged.ids.push(...results.map((r) => r.executionId));
    this.wake();
  }

  /** Executions whose result RabbitMQ has not confirmed yet: part of the lease (R14). */
  leaseIds(): string[] {
    const ids: string[] = [];
    for (const k of this.kept.values()) if (k.sent !== 'confirmed') ids.push(k.executionId);
    return ids;
  }

  /** Results held here (published or not). */
  get size(): number {
    return this.kept.size;
  }

  /**
   * Tries everything now, backoff aside, until every result is confirmed by RabbitMQ; false after
   * `timeoutMs`. A result confirmed but not yet written is fine to leave: the next start reports
   * its execution `WORKER_RESTART`, which the broker ignores after the result.
   */
  async flush(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    this.pump(true);
    while (this.leaseIds().length > 0 && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(200, Math.max(1, deadline - Date.now())));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      this.pump(true);
    }
    return this.leaseIds().length === 0;
  }

  /** Stops retrying (publishes in flight keep their promises). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private wake(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    // Coalesced: the results of one failed batch travel in one message (R10).
    setImmediate(() => {
      this.scheduled = false;
      this.logKept();
      this.pump(false);
    });
  }

  private logKept(): void {
    if (this.unlogged === null) return;
    const { ids, error } = this.unlogged;
    this.unlogged = null;
    this.options.logger.error({ err: toError(error), executionIds: ids }, 'could not write results to the outbox: publishing them from memory, retrying the write');
  }

  /** One round of writes and publishes; never throws. */
  private pump(force: boolean): void {
    if (this.stopped && !force) return;
    this.logKept();
    try {
      const now = this.now();
      for (const k of [...this.kept.values()]) if (force || k.nextWriteMs <= now) this.settleInOutbox(k);
      const due = [...this.kept.values()].filter((k) => k.sent === 'no' && (force || k.nextPublishMs <= now));
      for (let i = 0; i < due.length; i += MAX_ITEMS_PER_MESSAGE) this.publish(due.slice(i, i + MAX_ITEMS_PER_MESSAGE));
    } catch (error) {
      this.options.logger.error({ err: toError(error) }, 'unwritten results: retry round failed; trying again later');
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    let next: number | null = null;
    for (const k of this.kept.values()) {
      if (!k.written || (k.sent === 'confirmed' && k.row !== null)) next = Math.min(next ?? k.nextWriteMs, k.nextWriteMs);
      if (k.sent === 'no') next = Math.min(next ?? k.nextPublishMs, k.nextPublishMs);
    }
    if (next === null) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump(false);
    }, Math.max(10, next - this.now()));
    this.timer.unref();
  }

  /** Writes the result (or the confirm of a row written earlier); drops what is settled. */
  private settleInOutbox(k: Kept): void {
    const { outbox, logger } = this.options;
    const now = this.now();
    if (k.written) {
      if (k.sent !== 'confirmed') return; // waiting for the publish in flight
      if (k.row === null) return this.drop(k);
    }
    try {
      if (k.row !== null) {
        // Published and written, but the confirm was not recorded yet.
        outbox.confirm([k.row.id], now);
        return this.drop(k);
      }
      const sent = k.sent;
      const row = outbox.transaction(() => {
        const written = outbox.finishRow(k.executionId, 'done', 'result', k.item, k.atMs, HELD_IN_MEMORY);
        if (written !== null && sent === 'confirmed') outbox.confirm([written.id], now);
        return written;
      });
      k.written = true;
      logger.info({ executionId: k.executionId, attempts: k.writeAttempts, published: sent }, 'result written to the outbox after a failed write');
      if (row === null || sent === 'confirmed') {
        // Null: a result row of this execution already exists (an earlier write got through
        // after all); it is replayed after a restart at worst, which the broker ignores.
        if (sent === 'confirmed') this.drop(k);
        return;
      }
      if (sent === 'no') {
        this.drop(k);
        this.options.handOver([row]);
        return;
      }
      k.row = row; // in flight: confirmed with that publish
    } catch (error) {
      k.writeAttempts += 1;
      k.nextWriteMs = now + Math.min(this.maxWriteRetryMs, this.writeRetryMs * 2 ** Math.min(k.writeAttempts - 1, 16));
      logger.warn({ err: toError(error), executionId: k.executionId, attempts: k.writeAttempts }, 'outbox write of a result failed again; retrying');
    }
  }

  private publish(batch: readonly Kept[]): void {
    const { bus, exchange, workerId, logger } = this.options;
    for (const k of batch) k.sent = 'in-flight';
    let body: Buffer;
    try {
      // Items were validated when they were built (`result-items.ts`).
      body = encodeTrustedMessage({ v: 1, kind: 'result', workerId, items: batch.map((k) => k.item) } as Message);
    } catch (error) {
      this.failed(batch, error);
      return;
    }
    bus.publish(exchange, 'result', body).then(
      () => {
        for (const k of batch) k.sent = 'confirmed';
        this.options.onConfirmed?.(batch.length);
        logger.info({ executionIds: batch.map((k) => k.executionId) }, 'results published from memory (outbox write had failed)');
        for (const k of batch) this.settleInOutbox(k);
        this.settled();
      },
      (error: unknown) => {
        this.failed(batch, error);
        this.settled();
      },
    );
  }

  private failed(batch: readonly Kept[], error: unknown): void {
    const now = this.now();
    const handOver: OutgoingRow[] = [];
    for (const k of batch) {
      if (k.row !== null) {
        // Written meanwhile: the outbox publisher owns it now (nothing was confirmed, so it is
        // not a second copy).
        handOver.push(k.row);
        this.drop(k);
        continue;
      }
      k.sent = 'no';
      k.publishAttempts += 1;
      k.nextPublishMs = now + retryDelayMs(k.publishAttempts - 1);
    }
    this.options.logger.warn({ err: toError(error), items: batch.length }, 'publish of results held in memory failed; will retry');
    if (handOver.length > 0) this.options.handOver(handOver);
  }

  private drop(k: Kept): void {
    this.kept.delete(k.executionId);
  }

  private settled(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
    if (!this.stopped) this.schedule();
  }
}
