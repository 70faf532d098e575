/**
 * Sends the outbox's unconfirmed items to the brokers (`<ns>.events`, routing key = kind) and
 * marks them confirmed once RabbitMQ confirmed the publish (§5). Items written in the same
 * tick travel in one message per kind (R10: batched ACKs and results).
 *
 * While RabbitMQ is unreachable `@ax/bus` holds the publish and resends it after the
 * reconnect; the items stay unconfirmed in the outbox meanwhile, so a worker restart replays
 * them too (at-least-once; brokers apply them idempotently by execution id). A rejected publish
 * is retried with backoff.
 */
import { encodeMessage, MAX_ITEMS_PER_MESSAGE, type Message } from '@ax/core';
import type { Logger } from '@ax/kit';
import type { Outbox, OutgoingKind, OutgoingRow } from './outbox.js';

/** What the publisher needs of `@ax/bus`. */
export interface EventPublisher {
  publish(exchange: string, routingKey: string, body: Buffer): Promise<void>;
}

/** Options of `OutboxPublisher`. */
export interface OutboxPublisherOptions {
  readonly outbox: Outbox;
  readonly bus: EventPublisher;
  /** `<ns>.events`. */
  readonly exchange: string;
  readonly workerId: string;
  readonly logger: Logger;
  /** Items per message; default 500 (at most `MAX_ITEMS_PER_MESSAGE`). */
  readonly batchSize?: number;
  /** Messages in flight at once; default 8. */
  readonly maxInflight?: number;
  /**
   * An ACK younger than this waits for the next pump: when the job's result is written
   * meanwhile, the ACK is not sent at all (R16: a result stands for its ACK), which saves the
   * brokers a DISPATCHED→RUNNING transition per short job. Default 100 ms (the ACK timeout is
   * seconds). 0 sends ACKs at once.
   */
  readonly ackLingerMs?: number;
  /** Called after every confirmed batch (metrics). */
  readonly onConfirmed?: (kind: OutgoingKind, count: number) => void;
  readonly nowMs?: () => number;
}

/** How long an item being published stays out of `due` (confirm or failure ends it sooner). */
const IN_FLIGHT_HOLD_MS = 30_000;

/** Backoff after a failed publish of an item already tried `attempts` times: 1 s doubling to 60 s. */
export function retryDelayMs(attempts: number): number {
  return Math.min(60_000, 1_000 * 2 ** Math.min(attempts, 10));
}

/** Replays the outbox to RabbitMQ. */
export class OutboxPublisher {
  private readonly inflightIds = new Set<number>();
  private inflightBatches = 0;
  private scheduled = false;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly idleWaiters: Array<() => void> = [];
  private readonly batchSize: number;
  private readonly maxInflight: number;
  private readonly now: () => number;
  private readonly ackLingerMs: number;

  constructor(private readonly options: OutboxPublisherOptions) {
    this.batchSize = Math.min(options.batchSize ?? 500, MAX_ITEMS_PER_MESSAGE);
    this.maxInflight = options.maxInflight ?? 2;
    this.now = options.nowMs ?? Date.now;
    this.ackLingerMs = options.ackLingerMs ?? 100;
    // Holds of a previous process are void: replay everything unconfirmed at once.
    options.outbox.releaseHolds();
  }

  /** Sends what is due soon (coalesced: everything written in this tick goes together). */
  wake(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  /** Items not yet confirmed (in flight included). */
  get unconfirmed(): number {
    return this.options.outbox.unconfirmedCount();
  }

  /**
   * Resolves once nothing is unconfirmed, or false after `timeoutMs`. Items whose retry is
   * backed off are tried again at once.
   */
  async flush(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.options.outbox.unconfirmedCount() === 0) return true;
      this.pump(true);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(200, Math.max(1, deadline - Date.now())));
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.options.outbox.unconfirmedCount() === 0;
  }

  /** Stops scheduling; publishes in flight keep their promises. */
  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  private pump(ignoreBackoff = false): void {
    if (this.stopped && !ignoreBackoff) return;
    const { outbox } = this.options;
    while (this.inflightBatches < this.maxInflight) {
      const horizon = ignoreBackoff ? Number.MAX_SAFE_INTEGER : this.now();
      const fetched = outbox.due(horizon, this.batchSize * this.maxInflight + this.inflightIds.size).filter((r) => !this.inflightIds.has(r.id));
      const rows = ignoreBackoff ? fetched : this.foldAcks(fetched);
      if (rows.length === 0) break;
      const byKind = new Map<OutgoingKind, OutgoingRow[]>();
      for (const row of rows) {
        const list = byKind.get(row.kind) ?? [];
        if (list.length < this.batchSize) list.push(row);
        byKind.set(row.kind, list);
      }
      let sent = false;
      for (const [kind, batch] of byKind) {
        if (this.inflightBatches >= this.maxInflight) break;
        this.send(kind, batch);
        sent = true;
      }
      if (!sent) break;
    }
    this.scheduleRetry();
  }

  /**
   * R16: an ACK whose execution's result is due in the same pump is confirmed without being
   * sent (the result stands for it); an ACK younger than the linger waits for the next pump.
   */
  private foldAcks(rows: readonly OutgoingRow[]): OutgoingRow[] {
    const results = new Set(rows.filter((r) => r.kind === 'result').map((r) => r.executionId));
    const implied = rows.filter((r) => r.kind === 'ack' && results.has(r.executionId));
    if (implied.length > 0) this.options.outbox.confirm(implied.map((r) => r.id), this.now());
    const youngerThan = this.now() - this.ackLingerMs;
    return rows.filter((r) => r.kind !== 'ack' || (!results.has(r.executionId) && r.createdAtMs <= youngerThan));
  }

  private scheduleRetry(): void {
    if (this.stopped) return;
    const next = this.options.outbox.nextDueMs();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (next === null) return;
    const delay = Math.max(50, next - this.now());
    this.retryTimer = setTimeout(() => this.pump(), delay);
    this.retryTimer.unref();
  }

  private send(kind: OutgoingKind, batch: OutgoingRow[]): void {
    const { outbox, bus, exchange, workerId, logger } = this.options;
    for (const row of batch) this.inflightIds.add(row.id);
    this.inflightBatches += 1;
    const ids = batch.map((r) => r.id);
    // Out of `due` while in flight (a publish held through an outage outlives the hold: the
    // in-flight set still keeps it from being sent twice).
    outbox.hold(ids, this.now() + IN_FLIGHT_HOLD_MS);
    const release = (): void => {
      for (const id of ids) this.inflightIds.delete(id);
      this.inflightBatches -= 1;
      for (const waiter of this.idleWaiters.splice(0)) waiter();
      if (!this.stopped) this.pump();
    };
    let body: Buffer;
    try {
      body = encodeMessage({ v: 1, kind, workerId, items: batch.map((r) => r.item) } as Message);
    } catch (error) {
      // Items are validated when queued; an invalid one here is a bug. Park it for an hour
      // instead of blocking every other item behind it.
      logger.error({ err: error, kind, ids }, 'outbox: cannot encode a batch; parked');
      outbox.retryLater(ids, this.now() + 3_600_000);
      release();
      return;
    }
    bus.publish(exchange, kind, body).then(
      () => {
        try {
          outbox.confirm(ids, this.now());
          this.options.onConfirmed?.(kind, ids.length);
        } catch (error) {
          // The outbox was closed under us (shutdown): the items are replayed after a restart.
          logger.warn({ err: error, kind, items: ids.length }, 'outbox: could not record a confirm');
        }
        release();
      },
      (error: unknown) => {
        const attempts = Math.max(...batch.map((r) => r.attempts));
        logger.warn({ err: error, kind, items: ids.length, attempts }, 'outbox: publish failed; will retry');
        try {
          outbox.retryLater(ids, this.now() + retryDelayMs(attempts));
        } catch (closed) {
          logger.warn({ err: closed }, 'outbox: could not record a failed publish');
        }
        release();
      },
    );
  }
}
