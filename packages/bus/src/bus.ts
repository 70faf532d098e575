/**
 * An AMQP connection that survives restarts (CONVENTIONS habit 8; the shape of
 * node-amqp-connection-manager's ChannelWrapper): topology asserted after every connect, a
 * confirm-channel publisher that holds publishes while disconnected and re-sends unconfirmed
 * ones after a reconnect, and consumers with an explicit ack / dead-letter / bounded-requeue
 * policy that are re-attached after a reconnect. See README.md for the contract.
 *
 * This file keeps the connection (connect, reconnect, node rotation) and the consumers; the
 * publisher is publisher.ts, queue administration queue-admin.ts, the contract types bus-types.ts.
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { connect as amqpConnect, type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage } from 'amqplib';
import { maskUrlPassword, toError, type Logger } from '@ax/kit';
import type { AmqpConnectFn, Bus, BusMessage, BusOptions, ConsumeOptions, ConsumeOutcome, Consumer, MessageHandler, PublishOptions, ReturnedMessage } from './bus-types.js';
import { BusClosedError } from './errors.js';
import * as admin from './queue-admin.js';
import { Publisher, headersOf } from './publisher.js';
import {
  DEAD_REASON_HEADER,
  DEAD_SOURCE_HEADER,
  DEFAULT_WORKER_QUEUE_EXPIRES_MS,
  PARKED_REASON_HEADER,
  REQUEUE_COUNT_HEADER,
  SENDER_HEADER,
  busTopology,
  type BusTopology,
} from './topology.js';

export type {
  AmqpConnectFn,
  Bus,
  BusLogin,
  BusMessage,
  BusOptions,
  ConsumeOptions,
  ConsumeOutcome,
  Consumer,
  MessageHandler,
  PublishOptions,
  ReturnedMessage,
} from './bus-types.js';

/** amqplib's own `connect`, the default of `BusOptions.connect` (wrap it to observe connections). */
export const defaultAmqpConnect: AmqpConnectFn = amqpConnect;

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

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

/**
 * The RabbitMQ user an `amqp://` URL logs in as (amqplib's default `guest` when it names none),
 * or undefined when `urls` name different users: the value for `BusOptions.userId`.
 */
export function amqpUserOf(urls: string | readonly string[]): string | undefined {
  const users = new Set((typeof urls === 'string' ? [urls] : urls).map((url) => decodeURIComponent(new URL(url).username) || 'guest'));
  return users.size === 1 ? [...users][0] : undefined;
}

/** Creates a bus; nothing connects until `start()`. */
export function createBus(options: BusOptions): Bus {
  return new AmqpBus(options);
}

class AmqpBus implements Bus {
  readonly topology: BusTopology;
  private readonly logger: Logger;
  private readonly connectFn: AmqpConnectFn;
  private readonly events = new EventEmitter();
  private readonly closeController = new AbortController();
  private readonly consumers = new Map<number, ConsumerEntry>();
  private readonly workerIds = new Set<string>();
  private readonly urls: readonly string[];
  /** Index in `urls` of the node the next connect attempt goes to. */
  private nextUrl = 0;
  /** Index in `urls` of the node connected to (last connected, while reconnecting). */
  private connectedIndex: number | undefined;
  private model: ChannelModel | undefined;
  private channel: ConfirmChannel | undefined;
  private isConnected = false;
  private closing = false;
  private started: Promise<void> | undefined;
  private reconnecting: Promise<void> | undefined;
  private nextConsumerId = 1;
  /** Requeues per delivered message, for an enrollment login (it cannot re-publish with a header). */
  private readonly requeues = new Map<string, number>();
  /** Publishes: held, sent on the confirm channel, re-sent after a reconnect (publisher.ts). */
  private readonly publisher: Publisher;

  constructor(private readonly options: BusOptions) {
    this.topology = busTopology(options.namespace);
    this.logger = options.logger.child({ component: 'bus', bus: options.name });
    this.connectFn = options.connect ?? defaultAmqpConnect;
    this.urls = typeof options.url === 'string' ? [options.url] : [...options.url];
    this.publisher = new Publisher(
      {
        channel: () => (this.isConnected ? this.channel : undefined),
        closing: () => this.closing,
        canLeaveNode: () => this.model !== undefined,
        leaveNode: () => {
          this.logger.warn({ node: maskUrlPassword(this.urls[this.connectedIndex ?? 0] as string) }, 'publishes nacked in a row; reconnecting (to the next node)');
          this.model?.close().catch(() => undefined);
        },
      },
      this.logger,
      options,
    );
    if (this.urls.length === 0) throw new RangeError('createBus: no AMQP URL given');
    // 'error' events are logged where they happen; an emitter without listeners would throw.
    this.events.on('error', () => undefined);
  }

  get connected(): boolean {
    return this.isConnected;
  }

  on(event: 'connected' | 'disconnected', listener: () => void): void {
    this.events.on(event, listener);
  }

  off(event: 'connected' | 'disconnected', listener: () => void): void {
    this.events.off(event, listener);
  }

  onReturned(listener: (message: ReturnedMessage) => void): void {
    this.publisher.onReturned(listener);
  }

  start(): Promise<void> {
    this.started ??= this.connectLoop();
    return this.started;
  }

  private async connectLoop(): Promise<void> {
    const initial = this.options.reconnectInitialDelayMs ?? 200;
    const max = this.options.reconnectMaxDelayMs ?? 10_000;
    for (let attempt = 0; ; attempt++) {
      if (this.closing) throw new BusClosedError('the bus was closed before it connected');
      const index = this.nextUrl;
      const node = maskUrlPassword(this.urls[index] as string);
      try {
        await this.establish(index);
        return;
      } catch (thrown) {
        const error = toError(thrown);
        // The next attempt goes to the next node; the backoff grows per attempt, whichever node.
        this.nextUrl = (index + 1) % this.urls.length;
        const base = Math.min(max, initial * 2 ** Math.min(attempt, 20));
        const delay = Math.round(base * (0.8 + Math.random() * 0.4));
        if (!this.closing) this.logger.warn({ err: error, node, attempt: attempt + 1, retryInMs: delay }, 'AMQP connect failed');
        await sleep(delay, this.closeController.signal);
      }
    }
  }

  private async establish(index: number): Promise<void> {
    const model = await this.connectFn(this.urls[index] as string, {
      clientProperties: { connection_name: this.options.name },
      heartbeat: this.options.heartbeatSeconds ?? 10,
      // Without TCP_NODELAY a publish that follows a consumer's basic.ack on the same socket
      // waits ~40 ms for Nagle + delayed ACK (measured by the worker: result p50 43 ms → 0.4 ms).
      noDelay: true,
    });
    let channel: ConfirmChannel | undefined;
    try {
      model.on('error', (error: Error) => this.logger.warn({ err: error }, 'AMQP connection error'));
      model.on('close', () => this.connectionLost(model));
      if (this.closing) throw new BusClosedError();
      channel = await model.createConfirmChannel();
      channel.on('error', (error: Error) => this.logger.warn({ err: error }, 'AMQP publish channel error'));
      const ch = channel;
      channel.on('close', () => {
        // A channel-level failure with the connection still up: start over on a fresh connection.
        if (this.channel === ch && this.model === model && !this.closing) {
          this.logger.warn('AMQP publish channel closed; reconnecting');
          model.close().catch(() => undefined);
        }
      });
      channel.on('return', (message: ConsumeMessage) => this.publisher.returned(message));
      channel.on('drain', () => this.publisher.drained());
      await admin.assertBase(channel, this.topology, this.options.login);
      for (const workerId of this.workerIds) await admin.assertWorker(model, workerId, this.workerQueueSettings());
      if (this.closing) throw new BusClosedError();
    } catch (error) {
      await model.close().catch(() => undefined);
      throw error;
    }
    this.model = model;
    this.channel = channel;
    this.isConnected = true;
    this.publisher.connected();
    this.connectedIndex = index;
    this.logger.info(
      { node: maskUrlPassword(this.urls[index] as string), nodes: this.urls.length, workerQueues: this.workerIds.size, consumers: this.consumers.size },
      'AMQP connected',
    );
    this.events.emit('connected');
    for (const entry of this.consumers.values()) this.scheduleAttach(entry, 0);
    this.publisher.flush();
  }

  /** How this bus declares worker queues (queue-admin.ts). */
  private workerQueueSettings(): admin.WorkerQueueSettings {
    return {
      topology: this.topology,
      expiresMs: this.options.workerQueueExpiresMs ?? DEFAULT_WORKER_QUEUE_EXPIRES_MS,
      durable: this.options.workerQueuesDurable ?? this.urls.length === 1,
      login: this.options.login,
      logger: this.logger,
    };
  }

  private connectionLost(model: ChannelModel): void {
    if (this.model !== model) return;
    this.model = undefined;
    this.channel = undefined;
    const wasConnected = this.isConnected;
    this.isConnected = false;
    for (const entry of this.consumers.values()) {
      entry.channel = undefined;
      entry.consumerTag = undefined;
      entry.deliveries?.abort();
      entry.deliveries = undefined;
      if (entry.reattachTimer !== undefined) clearTimeout(entry.reattachTimer);
      entry.reattachTimer = undefined;
    }
    if (wasConnected) {
      // Its node may be gone: the first reconnect attempt goes to the next one.
      this.nextUrl = ((this.connectedIndex ?? 0) + 1) % this.urls.length;
      this.logger.warn(
        { node: maskUrlPassword(this.urls[this.connectedIndex ?? 0] as string), held: this.publisher.held, unconfirmed: this.publisher.unconfirmed },
        'AMQP disconnected',
      );
      this.events.emit('disconnected');
    }
    if (this.closing) return;
    this.reconnecting ??= this.connectLoop()
      .catch((error: unknown) => {
        if (!(error instanceof BusClosedError)) this.logger.error({ err: toError(error) }, 'AMQP reconnect loop ended');
      })
      .finally(() => {
        this.reconnecting = undefined;
      });
  }

  async assertWorkerQueues(workerId: string): Promise<void> {
    this.topology.workerQueue(workerId); // validates the id
    this.workerIds.add(workerId);
    const channel = this.channel;
    const model = this.model;
    if (channel !== undefined && model !== undefined && this.isConnected) await admin.assertWorker(model, workerId, this.workerQueueSettings());
  }

  publish(exchange: string, routingKey: string, body: Buffer, options: PublishOptions = {}): Promise<void> {
    return this.publisher.publish(exchange, routingKey, body, options);
  }


  async consume(queue: string, handler: MessageHandler, options: ConsumeOptions = {}): Promise<Consumer> {
    if (this.closing) throw new BusClosedError();
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
    if (this.isConnected && this.model !== undefined) {
      try {
        await this.attach(entry, this.model);
      } catch (error) {
        this.consumers.delete(entry.id);
        throw error;
      }
    }
    return { cancel: () => this.cancelConsumer(entry) };
  }

  private scheduleAttach(entry: ConsumerEntry, delayMs: number): void {
    if (entry.cancelled || this.closing || entry.reattachTimer !== undefined) return;
    entry.reattachTimer = setTimeout(() => {
      entry.reattachTimer = undefined;
      const model = this.model;
      if (entry.cancelled || this.closing || entry.channel !== undefined || model === undefined || !this.isConnected) return;
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
      if (this.model === model && this.isConnected) this.scheduleAttach(entry, 500);
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
        await this.publish('', entry.queue, message.content, {
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
      if (!this.closing) this.logger.warn({ err: toError(thrown), queue: entry.queue }, 'could not settle a delivery');
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
      await this.publish('', this.topology.parkedQueue, message.content, {
        ...this.copyProperties(message),
        headers: { ...headers, [PARKED_REASON_HEADER]: reason.slice(0, 1_000) },
      });
      channel.ack(message);
      this.logger.error({ queue, parkedQueue: this.topology.parkedQueue, reason, ...this.copyProperties(message) }, 'dead letter parked');
      return;
    }
    await this.publish(this.topology.dlx, message.fields.routingKey, message.content, {
      ...this.copyProperties(message),
      headers: { ...headers, [DEAD_REASON_HEADER]: reason.slice(0, 1_000), [DEAD_SOURCE_HEADER]: queue },
    });
    channel.ack(message);
  }

  private async cancelConsumer(entry: ConsumerEntry): Promise<void> {
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

  queueDepth(queue: string): Promise<{ messageCount: number; consumerCount: number } | null> {
    return admin.queueDepth(this.scratch, queue);
  }

  consumerCounts(queues: readonly string[]): Promise<Map<string, number | null>> {
    return admin.consumerCounts(this.scratch, () => this.isConnected, queues);
  }

  takeMessages(queue: string, max: number): Promise<Buffer[] | null> {
    return admin.takeMessages(this.scratch, queue, max);
  }

  unbindQueue(queue: string, exchange: string): Promise<{ messageCount: number; consumerCount: number } | null> {
    return admin.unbindQueue(this.scratch, queue, exchange);
  }

  deleteQueueIfIdle(queue: string): Promise<boolean> {
    return admin.deleteQueueIfIdle(this.scratch, queue);
  }

  /** A channel of its own on the current connection, closed after; null without one (queue-admin.ts). */
  private readonly scratch: admin.ScratchChannel = (fn) => admin.onScratchChannel(this.isConnected ? this.model : undefined, fn);

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    for (const entry of [...this.consumers.values()]) await this.cancelConsumer(entry);
    this.publisher.rejectHeld();
    await this.publisher.waitForConfirms(this.channel, this.options.closeTimeoutMs ?? 5_000);
    this.closeController.abort();
    const model = this.model;
    this.model = undefined;
    this.channel = undefined;
    const wasConnected = this.isConnected;
    this.isConnected = false;
    if (model !== undefined) await model.close().catch(() => undefined);
    this.publisher.rejectUnconfirmed();
    await this.reconnecting;
    if (wasConnected) this.events.emit('disconnected');
    this.events.removeAllListeners();
  }
}
