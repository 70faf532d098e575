/**
 * The consumers of a bus (README.md): each on a channel of its own with its prefetch, attached
 * again after a reconnect (or a channel closed under it); a handler's answer applied — ack,
 * dead letter (parked for the dead-letter queue itself), bounded requeue, release; the sender
 * of a message told from its validated user (R24). The connection is the bus's (`ConsumerLink`).
 */
import { createHash } from 'node:crypto';
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { toError, type Logger } from '@ax/kit';
import type { BusMessage, BusOptions, ConsumeOptions, ConsumeOutcome, Consumer, MessageHandler, PublishOptions } from './bus-types.js';
import { BusClosedError } from './errors.js';
import { headersOf } from './publisher.js';
import { DEAD_REASON_HEADER, DEAD_SOURCE_HEADER, PARKED_REASON_HEADER, REQUEUE_COUNT_HEADER, SENDER_HEADER, type BusTopology } from './topology.js';

/** What the consumers need of the bus. */
export interface ConsumerLink {
  /** The connection while it is up with an asserted topology; undefined otherwise. */
  model(): ChannelModel | undefined;
  /** True once the bus is closing. */
  closing(): boolean;
  /** The bus's confirmed publish (requeues and dead letters). */
  publish(exchange: string, routingKey: string, body: Buffer, options?: PublishOptions): Promise<void>;
}

interface ConsumerEntry {
  readonly id: number;
  readonly queue: string;
  readonly handler: MessageHandler;
  readonly prefetch: number;
  channel: Channel | undefined;
  consumerTag: string | undefined;
  /** Aborts the `signal` of the deliveries of the current channel. */
  deliveries: AbortController | undefined;
  cancelled: boolean;
  readonly running: Set<Promise<void>>;
  reattachTimer: NodeJS.Timeout | undefined;
  reattachFailures: number;
}

/** Messages whose in-memory requeue count is kept at most (an enrollment login); cleared when full. */
const MAX_REQUEUES_REMEMBERED = 10_000;

export class Consumers {
  private readonly consumers = new Map<number, ConsumerEntry>();
  private nextConsumerId = 1;
  /** Requeues per delivered message, for an enrollment login (it cannot re-publish with a header). */
  private readonly requeues = new Map<string, number>();

  constructor(
    private readonly link: ConsumerLink,
    private readonly topology: BusTopology,
    private readonly logger: Logger,
    private readonly options: Pick<BusOptions, 'userId' | 'login' | 'maxRequeues' | 'closeTimeoutMs'>,
  ) {}

  /** How many consumers there are (attached or not). */
  get size(): number {
    return this.consumers.size;
  }

  /** A new connection: every consumer attaches to it. */
  attachAll(): void {
    for (const entry of this.consumers.values()) this.scheduleAttach(entry, 0);
  }

  /** The connection is gone: its channels with it; handlers waiting on them are told to stop. */
  detachAll(): void {
    for (const entry of this.consumers.values()) {
      entry.channel = undefined;
      entry.consumerTag = undefined;
      entry.deliveries?.abort();
      entry.deliveries = undefined;
      if (entry.reattachTimer !== undefined) clearTimeout(entry.reattachTimer);
      entry.reattachTimer = undefined;
    }
  }

  /** On close: every consumer stops. */
  async cancelAll(): Promise<void> {
    for (const entry of [...this.consumers.values()]) await this.cancelConsumer(entry);
  }

  async consume(queue: string, handler: MessageHandler, options: ConsumeOptions = {}): Promise<Consumer> {
    if (this.link.closing()) throw new BusClosedError();
    const entry: ConsumerEntry = {
      id: this.nextConsumerId++,
      queue,
      handler,
      prefetch: options.prefetch ?? 10,
      channel: undefined,
      consumerTag: undefined,
      deliveries: undefined,
      cancelled: false,
      running: new Set(),
      reattachTimer: undefined,
      reattachFailures: 0,
    };
    this.consumers.set(entry.id, entry);
    const model = this.link.model();
    if (model !== undefined) {
      try {
        await this.attach(entry, model);
      } catch (error) {
        this.consumers.delete(entry.id);
        throw error;
      }
    }
    return { cancel: () => this.cancelConsumer(entry) };
  }

  private scheduleAttach(entry: ConsumerEntry, delayMs: number): void {
    if (entry.cancelled || this.link.closing() || entry.reattachTimer !== undefined) return;
    entry.reattachTimer = setTimeout(() => {
      entry.reattachTimer = undefined;
      const model = this.link.model();
      if (entry.cancelled || this.link.closing() || entry.channel !== undefined || model === undefined) return;
      this.attach(entry, model).then(
        () => {
          entry.reattachFailures = 0;
        },
        (error: unknown) => {
          entry.reattachFailures += 1;
          const retry = Math.min(10_000, 250 * 2 ** Math.min(entry.reattachFailures, 6));
          this.logger.warn({ err: toError(error), queue: entry.queue, retryInMs: retry }, 'consumer attach failed');
          this.scheduleAttach(entry, retry);
        },
      );
    }, delayMs);
  }

  private async attach(entry: ConsumerEntry, model: ChannelModel): Promise<void> {
    const channel = await model.createChannel();
    const deliveries = new AbortController();
    channel.on('error', (error: Error) => this.logger.warn({ err: error, queue: entry.queue }, 'AMQP consumer channel error'));
    channel.on('close', () => {
      // Its unacked deliveries are back in the queue: their handlers stop waiting.
      deliveries.abort();
      if (entry.channel !== channel) return;
      entry.channel = undefined;
      entry.consumerTag = undefined;
      // Connection still up (a channel error or a server-side cancel): attach again.
      if (this.link.model() === model) this.scheduleAttach(entry, 500);
    });
    try {
      await channel.prefetch(entry.prefetch);
      const { consumerTag } = await channel.consume(entry.queue, (message) => {
        if (message === null) {
          // Cancelled by the server (queue deleted): the close handler attaches again.
          this.logger.warn({ queue: entry.queue }, 'consumer cancelled by the server');
          channel.close().catch(() => undefined);
          return;
        }
        const job = this.deliver(entry, channel, message, deliveries.signal).finally(() => entry.running.delete(job));
        entry.running.add(job);
      });
      if (entry.cancelled) {
        await channel.close().catch(() => undefined);
        return;
      }
      entry.channel = channel;
      entry.consumerTag = consumerTag;
      entry.deliveries = deliveries;
    } catch (error) {
      await channel.close().catch(() => undefined);
      throw error;
    }
  }

  private async deliver(entry: ConsumerEntry, channel: Channel, message: ConsumeMessage, signal: AbortSignal): Promise<void> {
    const headers = headersOf(message.properties.headers);
    const userId = this.senderOf(message, headers);
    const busMessage: BusMessage = {
      body: message.content,
      redelivered: message.fields.redelivered,
      headers,
      routingKey: message.fields.routingKey,
      exchange: message.fields.exchange,
      queue: entry.queue,
      signal,
      ...(typeof message.properties.messageId === 'string' ? { messageId: message.properties.messageId } : {}),
      ...(userId !== undefined ? { userId } : {}),
    };
    let outcome: ConsumeOutcome;
    try {
      outcome = await entry.handler(busMessage);
    } catch (thrown) {
      const error = toError(thrown);
      const parks = this.isDeadQueue(entry.queue);
      this.logger.error({ err: error, queue: entry.queue }, parks ? 'message handler threw; parking the dead letter' : 'message handler threw; dead-lettering the message');
      outcome = { action: 'dead-letter', reason: `handler threw: ${error.message}` };
    }
    try {
      if (outcome === 'ack') {
        channel.ack(message);
        return;
      }
      if (outcome === 'release') {
        // A closed channel already gave the delivery back to RabbitMQ.
        if (entry.channel === channel) channel.nack(message, false, true);
        return;
      }
      if (outcome === 'requeue') {
        const inMemory = this.options.login === 'enrollment' ? this.requeueKey(entry.queue, message) : undefined;
        const count = inMemory === undefined ? Number(headers[REQUEUE_COUNT_HEADER] ?? 0) || 0 : (this.requeues.get(inMemory) ?? 0);
        const max = this.options.maxRequeues ?? 5;
        if (count >= max) {
          if (inMemory !== undefined) this.requeues.delete(inMemory);
          await this.deadLetter(channel, message, this.withSender(headers, userId), entry.queue, `requeued ${count} times (limit ${max})`);
          return;
        }
        if (inMemory !== undefined) {
          // No write on the default exchange: the delivery goes back to the head of its queue.
          if (this.requeues.size >= MAX_REQUEUES_REMEMBERED) this.requeues.clear();
          this.requeues.set(inMemory, count + 1);
          if (entry.channel === channel) channel.nack(message, false, true);
          return;
        }
        // Re-published under this bus's user: the sender's validated user travels in a header
        // that only this user's messages are believed for (never one the sender wrote itself).
        await this.link.publish('', entry.queue, message.content, {
          ...this.copyProperties(message),
          headers: { ...this.withSender(headers, userId), [REQUEUE_COUNT_HEADER]: count + 1 },
        });
        channel.ack(message);
        return;
      }
      const reason = outcome === 'dead-letter' ? 'rejected by the consumer' : outcome.reason;
      await this.deadLetter(channel, message, this.withSender(headers, userId), entry.queue, reason);
    } catch (thrown) {
      // The channel (or the bus) went away: RabbitMQ redelivers the message.
      if (!this.link.closing()) this.logger.warn({ err: toError(thrown), queue: entry.queue }, 'could not settle a delivery');
    }
  }

  /** Identifies a delivered message across its redeliveries: queue and message id, or its body's digest. */
  private requeueKey(queue: string, message: ConsumeMessage): string {
    const id = typeof message.properties.messageId === 'string' ? message.properties.messageId : createHash('sha256').update(message.content).digest('base64');
    return `${queue}\n${id}`;
  }

  /**
   * Who sent `message`: its validated `user_id`; for one this bus's user re-published (a
   * requeue), the sender named in `x-ax-sender`. A header on anyone else's message is ignored.
   */
  private senderOf(message: ConsumeMessage, headers: Record<string, unknown>): string | undefined {
    const stamped = typeof message.properties.userId === 'string' && message.properties.userId !== '' ? message.properties.userId : undefined;
    const relayed = headers[SENDER_HEADER];
    if (stamped !== undefined && stamped === this.options.userId && typeof relayed === 'string' && relayed !== '') return relayed;
    return stamped;
  }

  /**
   * The headers of a message this bus re-publishes (requeue, dead letter) under its own user:
   * `x-ax-sender` names the validated sender (`senderOf`), never what the sender wrote there,
   * and is left out when the bus has no `userId` (it would not be believed).
   */
  private withSender(headers: Record<string, unknown>, sender: string | undefined): Record<string, unknown> {
    const { [SENDER_HEADER]: _claimed, ...kept } = headers;
    return sender !== undefined && this.options.userId !== undefined ? { ...kept, [SENDER_HEADER]: sender } : kept;
  }

  /** `<ns>.dead.quorum`, or a dead-letter queue of an earlier build being drained. */
  private isDeadQueue(queue: string): boolean {
    return queue === this.topology.deadQueue || this.topology.legacyQueues.some((q) => q.role === 'dead' && q.queue === queue);
  }

  private copyProperties(message: ConsumeMessage): PublishOptions {
    const p = message.properties;
    return {
      persistent: p.deliveryMode === 2,
      ...(typeof p.priority === 'number' ? { priority: p.priority } : {}),
      ...(typeof p.messageId === 'string' ? { messageId: p.messageId } : {}),
    };
  }

  private async deadLetter(
    channel: Channel,
    message: ConsumeMessage,
    headers: Record<string, unknown>,
    queue: string,
    reason: string,
  ): Promise<void> {
    if (this.isDeadQueue(queue)) {
      // `<ns>.dlx` routes to `<ns>.dead.quorum`: dead-lettering a dead letter would loop and overwrite the
      // headers of its first death. It is parked instead, headers as they came.
      await this.link.publish('', this.topology.parkedQueue, message.content, {
        ...this.copyProperties(message),
        headers: { ...headers, [PARKED_REASON_HEADER]: reason.slice(0, 1_000) },
      });
      channel.ack(message);
      this.logger.error({ queue, parkedQueue: this.topology.parkedQueue, reason, ...this.copyProperties(message) }, 'dead letter parked');
      return;
    }
    await this.link.publish(this.topology.dlx, message.fields.routingKey, message.content, {
      ...this.copyProperties(message),
      headers: { ...headers, [DEAD_REASON_HEADER]: reason.slice(0, 1_000), [DEAD_SOURCE_HEADER]: queue },
    });
    channel.ack(message);
  }

  /** Stops one consumer and waits (up to `closeTimeoutMs`) for its running handlers. */
  async cancelConsumer(entry: ConsumerEntry): Promise<void> {
    if (entry.cancelled) return;
    entry.cancelled = true;
    this.consumers.delete(entry.id);
    if (entry.reattachTimer !== undefined) clearTimeout(entry.reattachTimer);
    const channel = entry.channel;
    if (channel !== undefined && entry.consumerTag !== undefined) {
      await channel.cancel(entry.consumerTag).catch(() => undefined);
    }
    // Handlers that wait give their deliveries back ('release') while the channel is still open.
    entry.deliveries?.abort();
    await this.waitAll(entry.running);
    entry.channel = undefined;
    if (channel !== undefined) await channel.close().catch(() => undefined);
  }

  private async waitAll(promises: Set<Promise<void>>): Promise<void> {
    if (promises.size === 0) return;
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, this.options.closeTimeoutMs ?? 5_000).unref());
    await Promise.race([Promise.allSettled([...promises]).then(() => undefined), timeout]);
  }
}
