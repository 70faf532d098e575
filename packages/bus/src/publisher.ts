/**
 * The publisher of a bus (README.md): publishes are held while disconnected and sent on the
 * confirm channel of the connection once it is up; one the connection lost before its confirm
 * is sent again on the next (at-least-once); a nack sends it again, up to `maxPublishNacks`,
 * and that many nacks in a row make the bus leave the node. The connection is the bus's
 * (`PublisherLink`).
 */
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { toError, type Logger } from '@ax/kit';
import type { BusOptions, PublishOptions, ReturnedMessage } from './bus-types.js';
import { BusClosedError, PublishFailedError } from './errors.js';

/** What the publisher needs of the bus's connection. */
export interface PublisherLink {
  /** The publish channel while connected with an asserted topology; undefined otherwise. */
  channel(): ConfirmChannel | undefined;
  /** True once the bus is closing. */
  closing(): boolean;
  /** True when there is a connection to leave. */
  canLeaveNode(): boolean;
  /** Closes the connection (publishes nacked in a row): the bus reconnects to the next node. */
  leaveNode(): void;
}

/** Headers of a delivered or returned message, copied (none: empty). */
export function headersOf(headers: unknown): Record<string, unknown> {
  return typeof headers === 'object' && headers !== null ? { ...(headers as Record<string, unknown>) } : {};
}

interface PendingPublish {
  readonly exchange: string;
  readonly routingKey: string;
  readonly body: Buffer;
  readonly options: PublishOptions;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
  nacks: number;
  settled: boolean;
}

export class Publisher {
  private readonly pending: PendingPublish[] = [];
  private readonly inflight = new Set<PendingPublish>();
  private readonly returnedListeners: Array<(message: ReturnedMessage) => void> = [];
  private flushBlocked = false;
  /** Nacks in a row on the current publish channel (an ack resets it). */
  private nacksInRow = 0;

  constructor(
    private readonly link: PublisherLink,
    private readonly logger: Logger,
    private readonly options: Pick<BusOptions, 'userId' | 'maxPublishNacks'>,
  ) {}

  /** Publishes held (not sent yet). */
  get held(): number {
    return this.pending.length;
  }

  /** Publishes sent and not confirmed yet. */
  get unconfirmed(): number {
    return this.inflight.size;
  }

  publish(exchange: string, routingKey: string, body: Buffer, options: PublishOptions = {}): Promise<void> {
    if (this.link.closing()) return Promise.reject(new BusClosedError());
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ exchange, routingKey, body, options, resolve, reject, nacks: 0, settled: false });
      this.flush();
    });
  }

  onReturned(listener: (message: ReturnedMessage) => void): void {
    this.returnedListeners.push(listener);
  }

  /** A new publish channel: nothing blocks it, no nack counted on it yet. */
  connected(): void {
    this.flushBlocked = false;
    this.nacksInRow = 0;
  }

  /** The channel's 'drain': it takes more. */
  drained(): void {
    this.flushBlocked = false;
    this.flush();
  }

  /** On close: what was never sent is rejected. */
  rejectHeld(): void {
    for (const entry of this.pending.splice(0)) this.settle(entry, new BusClosedError('the bus was closed before the publish was sent'));
  }

  /** On close: gives the unconfirmed publishes up to `timeoutMs` for their confirms. */
  async waitForConfirms(channel: ConfirmChannel | undefined, timeoutMs: number): Promise<void> {
    if (this.inflight.size > 0 && channel !== undefined) {
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
      await Promise.race([channel.waitForConfirms().catch(() => undefined), timeout]);
    }
  }

  /** On close, once disconnected: what is still unconfirmed is rejected. */
  rejectUnconfirmed(): void {
    for (const entry of [...this.inflight]) this.settle(entry, new BusClosedError('the bus was closed before the publish was confirmed'));
    this.inflight.clear();
  }

  /** Sends what is held, while connected and the channel takes more. */
  flush(): void {
    for (let channel = this.link.channel(); channel !== undefined && !this.flushBlocked && this.pending.length > 0; channel = this.link.channel()) {
      const entry = this.pending.shift() as PendingPublish;
      if (!this.send(channel, entry)) this.flushBlocked = true;
    }
  }

  /** Sends one publish; false when the channel asks us to wait for 'drain'. */
  private send(channel: ConfirmChannel, entry: PendingPublish): boolean {
    const o = entry.options;
    this.inflight.add(entry);
    try {
      return channel.publish(
        entry.exchange,
        entry.routingKey,
        entry.body,
        {
          persistent: o.persistent ?? true,
          mandatory: o.mandatory ?? false,
          contentType: 'application/json',
          ...(o.priority !== undefined ? { priority: o.priority } : {}),
          ...(o.messageId !== undefined ? { messageId: o.messageId } : {}),
          ...(o.headers !== undefined ? { headers: o.headers } : {}),
          ...(this.options.userId !== undefined ? { userId: this.options.userId } : {}),
        },
        (error: unknown) => this.confirmed(entry, error),
      );
    } catch (thrown) {
      this.inflight.delete(entry);
      const error = toError(thrown);
      if (error instanceof RangeError || error instanceof TypeError) {
        this.settle(entry, new PublishFailedError(`publish to ${entry.exchange}/${entry.routingKey} cannot be sent: ${error.message}`, { cause: error }));
      } else {
        // The channel broke under us: keep it for the next connection.
        this.pending.unshift(entry);
      }
      return false;
    }
  }

  private confirmed(entry: PendingPublish, error: unknown): void {
    this.inflight.delete(entry);
    if (entry.settled) return;
    if (error == null) {
      this.nacksInRow = 0;
      this.settle(entry);
      return;
    }
    if (this.link.closing()) {
      this.settle(entry, new BusClosedError('the bus was closed before the publish was confirmed'));
      return;
    }
    const message = toError(error).message;
    if (message === 'message nacked') {
      entry.nacks += 1;
      this.nackedInRow();
      if (entry.nacks >= (this.options.maxPublishNacks ?? 5)) {
        this.settle(entry, new PublishFailedError(`publish to ${entry.exchange}/${entry.routingKey} was nacked ${entry.nacks} times`));
        return;
      }
    }
    // Unconfirmed because the channel closed (or a nack): send it again on the next channel.
    this.pending.push(entry);
    queueMicrotask(() => this.flush());
  }

  /**
   * A node that nacks every publish (seen on RabbitMQ 3.10 after a quorum queue's leader died
   * with its node, under load: the channel's publishes to that queue were nacked for minutes) is
   * left: after `maxPublishNacks` nacks in a row, the connection is closed and the bus
   * reconnects to the next node, on a fresh channel. The nacked publishes are sent again there.
   */
  private nackedInRow(): void {
    this.nacksInRow += 1;
    if (this.nacksInRow < (this.options.maxPublishNacks ?? 5) || !this.link.canLeaveNode()) return;
    this.nacksInRow = 0;
    this.link.leaveNode();
  }

  private settle(entry: PendingPublish, error?: Error): void {
    if (entry.settled) return;
    entry.settled = true;
    if (error === undefined) entry.resolve();
    else entry.reject(error);
  }

  /** A mandatory publish came back unroutable: logged and told to the `onReturned` listeners. */
  returned(message: ConsumeMessage): void {
    const returned: ReturnedMessage = {
      exchange: message.fields.exchange,
      routingKey: message.fields.routingKey,
      body: message.content,
      headers: headersOf(message.properties.headers),
      ...(typeof message.properties.messageId === 'string' ? { messageId: message.properties.messageId } : {}),
    };
    this.logger.warn({ exchange: returned.exchange, routingKey: returned.routingKey, messageId: returned.messageId }, 'publish returned unroutable');
    for (const listener of this.returnedListeners) {
      try {
        listener(returned);
      } catch (error) {
        this.logger.error({ err: toError(error) }, 'onReturned listener threw');
      }
    }
  }
}
