/**
 * Sends the outbox's unconfirmed items to the brokers (`<ns>.events`, routing key = kind) and
 * marks them confirmed once RabbitMQ confirmed the publish (§5). Items written in the same
 * tick travel in one message per kind (R10: batched ACKs and results).
 *
 * Items the worker just wrote are handed over in memory (`push`: written with a hold, so they
 * are not read back and parsed again); the outbox is read only for what a restart or a failed
 * publish left unconfirmed. ACKs are not outbox items (§5 only asks that results be written
 * first): they wait in memory for `ackLingerMs` and are dropped when the result comes first
 * (R16: a result stands for its ACK). A crash loses none that matters: the restarted worker
 * reports every unfinished execution as `WORKER_RESTART`, which stands for the ACK too.
 *
 * While RabbitMQ is unreachable `@ax/bus` holds the publish and resends it after the
 * reconnect; the items stay unconfirmed in the outbox meanwhile, so a worker restart replays
 * them too (at-least-once; brokers apply them idempotently by execution id). A rejected publish
 * is retried with backoff.
 */
import { encodeTrustedMessage, MAX_ITEMS_PER_MESSAGE, MAX_MESSAGE_BYTES, type AckItem, type Message } from '@ax/core';
import { toError, type Logger } from '@ax/kit';
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
  /** Messages in flight at once; default 2, so that under load the batches grow instead of the message count. */
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

/**
 * How long an item read back from the outbox stays out of `due` while its publish is in
 * flight (a confirm or a failure ends it sooner; a restart releases it). Pushed items are
 * written `HELD_IN_MEMORY` instead.
 */
export const IN_FLIGHT_HOLD_MS = 30_000;

/** Pause after the outbox could not be read (SQLITE_BUSY, I/O error) before it is read again. */
export const OUTBOX_READ_RETRY_MS = 1_000;

/** Backoff after a failed publish of an item already tried `attempts` times: 1 s doubling to 60 s. */
export function retryDelayMs(attempts: number): number {
  return Math.min(60_000, 1_000 * 2 ** Math.min(attempts, 10));
}

/** An ACK waiting in memory. */
interface PendingAck {
  readonly item: AckItem;
  dueMs: number;
  attempts: number;
}

/** Replays the outbox to RabbitMQ. */
export class OutboxPublisher {
  private readonly inflightIds = new Set<number>();
  /** Items handed over by `push`, not yet sent (their outbox rows are held). */
  private queued: OutgoingRow[] = [];
  private readonly queuedIds = new Set<number>();
  /**
   * ACKs by execution id: lingering (in arrival order, so their due times only grow), being
   * published, and backed off after a failed publish (rare, so scanned whole).
   */
  private readonly acks = new Map<string, PendingAck>();
  private readonly acksInFlight = new Map<string, PendingAck>();
  private readonly acksRetrying = new Map<string, PendingAck>();
  /**
   * True once the outbox was read and held nothing to send or retry: it is not read again until
   * a publish fails (pushed items never need it). At thousands of pumps a second those two
   * reads per pump were most of the publisher's cost.
   */
  private outboxIdle = false;
  private inflightBatches = 0;
  private scheduled = false;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryAtMs = 0;
  /** The outbox is not read again before this (after a failed read). */
  private readAgainAtMs = 0;
  /**
   * Ids RabbitMQ confirmed whose confirm the outbox could not record (a full disk): recorded
   * again at `confirmAgainAtMs`. Until then they stay unconfirmed in the outbox — a result among
   * them keeps its execution in the registry lease — and, held in memory, nothing resends them.
   */
  private unrecordedConfirms: number[] = [];
  private confirmAgainAtMs = 0;
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

  /** Sends items just written to the outbox `HELD_IN_MEMORY`; a result or refusal drops its ACK. */
  push(rows: readonly OutgoingRow[]): void {
    for (const row of rows) {
      if (row.kind !== 'ack') this.dropAck(row.executionId);
      this.queued.push(row);
      this.queuedIds.add(row.id);
    }
    this.wake();
  }

  /** Sends an ACK after the linger, unless the execution's result is pushed first. */
  ack(item: AckItem, atMs: number): void {
    if (this.stopped) return;
    const dueMs = atMs + this.ackLingerMs;
    this.acks.set(item.executionId, { item, dueMs, attempts: 0 });
    if (this.ackLingerMs <= 0) this.wake();
    else if (this.retryTimer === undefined || this.retryAtMs > dueMs) this.scheduleRetry();
  }

  /** True while the execution's ACK waits to be sent or confirmed (false once confirmed or dropped for its result). */
  ackPending(executionId: string): boolean {
    return this.acks.has(executionId) || this.acksInFlight.has(executionId) || this.acksRetrying.has(executionId);
  }

  /** Reads the outbox again: for items written to it without `push` (recovery after a restart). */
  replay(): void {
    this.outboxIdle = false;
    this.wake();
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
    this.recordConfirms(ignoreBackoff);
    try {
      this.fill(ignoreBackoff);
    } catch (error) {
      // #23: an outbox that cannot be read must not throw out of a timer (the process would
      // exit): what it holds stays unconfirmed and is read again shortly.
      this.options.logger.warn({ err: toError(error) }, 'outbox: could not read items to send; retrying');
      this.outboxIdle = false;
      this.readAgainAtMs = this.now() + OUTBOX_READ_RETRY_MS;
    }
    this.scheduleRetry();
  }

  /** Records the confirms a failed outbox write left (see `unrecordedConfirms`), when their retry is due. */
  private recordConfirms(ignoreBackoff: boolean): void {
    if (this.unrecordedConfirms.length === 0 || (!ignoreBackoff && this.now() < this.confirmAgainAtMs)) return;
    try {
      this.options.outbox.confirm(this.unrecordedConfirms, this.now());
      this.unrecordedConfirms = [];
    } catch (error) {
      this.confirmAgainAtMs = this.now() + OUTBOX_READ_RETRY_MS;
      this.options.logger.warn({ err: toError(error), items: this.unrecordedConfirms.length }, 'outbox: confirms still not recorded; retrying');
    }
  }

  /** Starts publishes until `maxInflight` or nothing is due. */
  private fill(ignoreBackoff: boolean): void {
    while (this.inflightBatches < this.maxInflight) {
      const acks = this.dueAcks();
      if (acks.length > 0) {
        this.sendAcks(acks);
        continue;
      }
      const rows = this.queued.length > 0 ? this.queued : this.outboxIdle && !ignoreBackoff ? [] : this.fromOutbox(ignoreBackoff);
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
      if (this.queuedIds.size < this.queued.length) this.queued = this.queued.filter((r) => this.queuedIds.has(r.id));
      if (!sent) break;
    }
  }

  /** Unconfirmed items read back from the outbox: left by a restart or a failed publish. */
  private fromOutbox(ignoreBackoff: boolean): OutgoingRow[] {
    const { outbox } = this.options;
    const horizon = ignoreBackoff ? Number.MAX_SAFE_INTEGER : this.now();
    const fetched = outbox
      .due(horizon, this.batchSize * this.maxInflight + this.inflightIds.size)
      .filter((r) => !this.inflightIds.has(r.id) && !this.queuedIds.has(r.id));
    return ignoreBackoff ? fetched : this.foldAcks(fetched);
  }

  /**
   * ACK items an older build wrote to the outbox (R16): one whose execution's result is due in
   * the same read is confirmed without being sent.
   */
  private foldAcks(rows: readonly OutgoingRow[]): OutgoingRow[] {
    const results = new Set(rows.filter((r) => r.kind === 'result').map((r) => r.executionId));
    const implied = rows.filter((r) => r.kind === 'ack' && results.has(r.executionId));
    if (implied.length === 0) return [...rows];
    this.options.outbox.confirm(implied.map((r) => r.id), this.now());
    return rows.filter((r) => r.kind !== 'ack' || !results.has(r.executionId));
  }

  /** The result stands for the ACK (R16): it is not sent, nor retried if in flight. */
  private dropAck(executionId: string): void {
    this.acks.delete(executionId);
    this.acksInFlight.delete(executionId);
    this.acksRetrying.delete(executionId);
  }

  /** ACKs whose linger (or retry backoff) is over, oldest first. */
  private dueAcks(): PendingAck[] {
    const now = this.now();
    const due: PendingAck[] = [];
    for (const ack of this.acksRetrying.values()) if (ack.dueMs <= now && due.length < this.batchSize) due.push(ack);
    for (const ack of this.acks.values()) {
      if (ack.dueMs > now || due.length >= this.batchSize) break;
      due.push(ack);
    }
    return due;
  }

  private nextAckDueMs(): number | null {
    let next: number | null = null;
    for (const ack of this.acksRetrying.values()) if (next === null || ack.dueMs < next) next = ack.dueMs;
    const first = this.acks.values().next();
    if (!first.done && (next === null || first.value.dueMs < next)) next = first.value.dueMs;
    return next;
  }

  private scheduleRetry(): void {
    if (this.stopped) return;
    let fromOutbox: number | null;
    try {
      fromOutbox = this.outboxIdle ? null : this.options.outbox.nextDueMs();
    } catch (error) {
      this.options.logger.warn({ err: toError(error) }, 'outbox: could not read when items are due; retrying');
      this.readAgainAtMs = this.now() + OUTBOX_READ_RETRY_MS;
      fromOutbox = this.readAgainAtMs;
    }
    if (fromOutbox === null) this.outboxIdle = true;
    else fromOutbox = Math.max(fromOutbox, this.readAgainAtMs);
    const fromAcks = this.nextAckDueMs();
    const fromConfirms = this.unrecordedConfirms.length > 0 ? this.confirmAgainAtMs : null;
    const next = [fromOutbox, fromAcks, fromConfirms].reduce<number | null>((min, t) => (t === null ? min : min === null ? t : Math.min(min, t)), null);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (next === null) return;
    const delay = Math.max(fromAcks === next ? 1 : 50, next - this.now());
    this.retryAtMs = this.now() + delay;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.pump();
    }, delay);
    this.retryTimer.unref();
  }

  /** Ends one in-flight batch and pumps again. */
  private settle(): void {
    this.inflightBatches -= 1;
    for (const waiter of this.idleWaiters.splice(0)) waiter();
    if (!this.stopped) this.pump();
  }

  private sendAcks(acks: readonly PendingAck[]): void {
    const { bus, exchange, workerId, logger } = this.options;
    for (const ack of acks) {
      const id = ack.item.executionId;
      this.acks.delete(id);
      this.acksRetrying.delete(id);
      this.acksInFlight.set(id, ack);
    }
    this.inflightBatches += 1;
    const body = encodeTrustedMessage({ v: 1, kind: 'ack', workerId, items: acks.map((a) => a.item) });
    bus.publish(exchange, 'ack', body).then(
      () => {
        for (const ack of acks) if (this.acksInFlight.get(ack.item.executionId) === ack) this.acksInFlight.delete(ack.item.executionId);
        this.options.onConfirmed?.('ack', acks.length);
        this.settle();
      },
      (error: unknown) => {
        // Retried until the result stands for it; the broker re-routes after its ACK timeout
        // if neither arrives.
        const attempts = Math.max(...acks.map((a) => a.attempts));
        logger.warn({ err: error, kind: 'ack', items: acks.length, attempts }, 'publish of ACKs failed; will retry');
        for (const ack of acks) {
          const id = ack.item.executionId;
          if (this.acksInFlight.get(id) !== ack) continue; // its result came meanwhile
          this.acksInFlight.delete(id);
          ack.attempts += 1;
          ack.dueMs = this.now() + retryDelayMs(ack.attempts);
          this.acksRetrying.set(id, ack);
        }
        this.settle();
      },
    );
  }

  private send(kind: OutgoingKind, rows: OutgoingRow[]): void {
    const { outbox, bus, exchange, workerId, logger } = this.options;
    let batch = rows;
    let body: Buffer;
    try {
      // Items were validated when they were built (`result-items.ts`), before the outbox write.
      body = encodeTrustedMessage({ v: 1, kind, workerId, items: batch.map((r) => r.item) } as Message);
      // Brokers refuse a message over MAX_MESSAGE_BYTES: 500 results with 64 KiB output tails
      // (or short output carried in them) would be one. Halved until it fits; the rest is sent
      // next (still queued, or read from the outbox again).
      while (body.length > MAX_MESSAGE_BYTES && batch.length > 1) {
        batch = batch.slice(0, Math.ceil(batch.length / 2));
        body = encodeTrustedMessage({ v: 1, kind, workerId, items: batch.map((r) => r.item) } as Message);
      }
    } catch (error) {
      // An item that cannot be encoded is a bug. Park it for an hour instead of blocking every
      // other item behind it.
      const ids = batch.map((r) => r.id);
      for (const id of ids) this.queuedIds.delete(id);
      logger.error({ err: error, kind, ids }, 'outbox: cannot encode a batch; parked');
      try {
        outbox.retryLater(ids, this.now() + 3_600_000);
      } catch (closed) {
        logger.warn({ err: toError(closed) }, 'outbox: could not park the batch');
      }
      this.outboxIdle = false;
      return;
    }
    const ids = batch.map((r) => r.id);
    const fromMemory = batch.filter((r) => this.queuedIds.delete(r.id)).length;
    for (const id of ids) this.inflightIds.add(id);
    this.inflightBatches += 1;
    // Out of `due` while in flight (pushed items were written HELD_IN_MEMORY). A publish
    // held through an outage outlives the hold: the in-flight set still keeps it from being
    // sent twice.
    try {
      if (fromMemory < ids.length) outbox.hold(ids, this.now() + IN_FLIGHT_HOLD_MS);
    } catch (error) {
      // Only spares re-reads: the in-flight set keeps these from being sent twice anyway.
      logger.warn({ err: toError(error), kind, items: ids.length }, 'outbox: could not hold items in flight');
    }
    const release = (): void => {
      for (const id of ids) this.inflightIds.delete(id);
      this.settle();
    };
    bus.publish(exchange, kind, body).then(
      () => {
        try {
          outbox.confirm(ids, this.now());
        } catch (error) {
          // A full disk: recorded again shortly (the drill of #23 found these held until a
          // restart). Closed under us (shutdown): the items are replayed after a restart.
          logger.warn({ err: error, kind, items: ids.length }, 'outbox: could not record a confirm; retrying');
          this.unrecordedConfirms.push(...ids);
          this.confirmAgainAtMs = this.now() + OUTBOX_READ_RETRY_MS;
        }
        this.options.onConfirmed?.(kind, ids.length);
        release();
      },
      (error: unknown) => {
        const attempts = Math.max(...batch.map((r) => r.attempts));
        logger.warn({ err: error, kind, items: ids.length, attempts }, 'outbox: publish failed; will retry');
        this.outboxIdle = false;
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
