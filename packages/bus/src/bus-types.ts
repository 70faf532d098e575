/** The contract of @ax/bus: options, messages and the `Bus` interface (README.md). */
import type { ChannelModel } from 'amqplib';
import type { Logger } from '@ax/kit';
import type { BusTopology } from './topology.js';

/** How amqplib connects; injectable (tests wrap it to reach the socket). */
export type AmqpConnectFn = (url: string, socketOptions: Record<string, unknown>) => Promise<ChannelModel>;

/** Options of `createBus`. */
export interface BusOptions {
  /**
   * `AX_AMQP_URL`: one node, e.g. `amqp://guest:guest@127.0.0.1:5672`, or the nodes of a cluster
   * (as `AX_AMQP_URL` lists them, comma-separated, parsed by `@ax/kit`). The bus connects to the
   * first; when a connection is lost or refused it goes on with the next (round-robin, with the
   * reconnect backoff below), so publishers and consumers move to a surviving node by themselves.
   */
  readonly url: string | readonly string[];
  /** `AX_NAMESPACE`: every exchange and queue is named under it. */
  readonly namespace: string;
  readonly logger: Logger;
  /** Connection name shown by RabbitMQ (`connection_name`), e.g. `ax-broker-<host>-<pid>`. */
  readonly name: string;
  /** First pause before a reconnect, ms. Default 200. Doubles per failure (with ±20 % jitter). */
  readonly reconnectInitialDelayMs?: number;
  /** Longest pause between reconnect attempts, ms. Default 10000. */
  readonly reconnectMaxDelayMs?: number;
  /** How often a consumer may answer `requeue` for one message before it is dead-lettered. Default 5. */
  readonly maxRequeues?: number;
  /** `x-expires` of worker and control queues, ms. Default 120000. */
  readonly workerQueueExpiresMs?: number;
  /**
   * Whether worker and control queues are durable. Default: true with one node, false with
   * several. A durable classic queue whose node is down cannot be declared on another node
   * (RabbitMQ answers NOT_FOUND until that node is back), so in a cluster they are transient:
   * removed with their node, and declared afresh by their worker on the node it reconnects to
   * (a dispatch lost with them is re-routed at its ACK deadline, R8).
   */
  readonly workerQueuesDurable?: boolean;
  /** AMQP heartbeat, seconds. Default 10. */
  readonly heartbeatSeconds?: number;
  /** How often one publish may be nacked by RabbitMQ before it is rejected. Default 5. */
  readonly maxPublishNacks?: number;
  /** How long `close()` waits for unconfirmed publishes and running handlers, ms. Default 5000. */
  readonly closeTimeoutMs?: number;
  /** amqplib's `connect`; default the real one. */
  readonly connect?: AmqpConnectFn;
  /**
   * The RabbitMQ user this bus logs in as (e.g. `amqpUserOf(AX_AMQP_URL)`). When set, every
   * publish carries it as `user_id`, which RabbitMQ validates (R24: a broker knows who sent a
   * message), and a message this bus requeues keeps its sender's validated user in the
   * `x-ax-sender` header, believed only on messages whose own `user_id` is this user. Default:
   * unset (no `user_id`; a requeued message then has no sender).
   */
  readonly userId?: string;
  /**
   * What the login may do. `'service'` (default): everything in the namespace (brokers,
   * schedulers, admin-api, unenrolled workers). `'enrollment'`: a worker enrollment's own
   * RabbitMQ user (R24, `enrollmentBusPermissions`), which may not declare the shared exchanges
   * and queues, bind a queue to any exchange, or publish to the default exchange. Then the bus
   * only checks (passively) that the exchanges exist, declares worker queues without a binding
   * (brokers send dispatches and cancels to them by queue name on the default exchange), and a
   * consumer's `requeue` gives the delivery back to its queue (basic.nack) instead of
   * re-publishing it, counting requeues per message in memory (same `maxRequeues` limit).
   */
  readonly login?: BusLogin;
}

/** What a bus's login may do (`BusOptions.login`). */
export type BusLogin = 'service' | 'enrollment';

/** Options of one publish. */
export interface PublishOptions {
  /** Delivery mode 2 (written to disk by RabbitMQ). Default true. */
  readonly persistent?: boolean;
  /** Message priority 0..10 (worker queues are priority queues). */
  readonly priority?: number;
  /** Return the message (see `onReturned`) when no queue is bound for its routing key. Default false. */
  readonly mandatory?: boolean;
  readonly messageId?: string;
  readonly headers?: Record<string, unknown>;
}

/** A mandatory publish RabbitMQ could not route (R8: re-route it without counting). */
export interface ReturnedMessage {
  readonly exchange: string;
  readonly routingKey: string;
  readonly body: Buffer;
  readonly messageId?: string;
  readonly headers: Record<string, unknown>;
}

/** A delivered message, as a handler sees it. */
export interface BusMessage {
  readonly body: Buffer;
  /** RabbitMQ delivered it before (a consumer or connection died before acking). */
  readonly redelivered: boolean;
  readonly headers: Record<string, unknown>;
  readonly messageId?: string;
  readonly routingKey: string;
  readonly exchange: string;
  /** The queue it was consumed from. */
  readonly queue: string;
  /**
   * The RabbitMQ user that published it (`user_id`, validated by RabbitMQ: a publisher cannot
   * name another user), or undefined when the publisher set none. For a message this bus (or
   * another bus with the same `BusOptions.userId`) requeued, its original sender's.
   */
  readonly userId?: string;
  /**
   * Aborted once this delivery can no longer be settled by this consumer: the consumer is
   * cancelled, its channel closed or the bus is closing. A handler that waits (a backoff while
   * a dependency is down) stops waiting and answers `'release'`.
   */
  readonly signal: AbortSignal;
}

/**
 * What a handler decides. `{action:'dead-letter', reason}` names the reason header.
 * `'release'` hands the delivery back to RabbitMQ untouched (basic.nack with requeue): only for
 * a handler told to stop by `signal`, never as a retry policy (that would requeue forever).
 */
export type ConsumeOutcome = 'ack' | 'dead-letter' | 'requeue' | 'release' | { action: 'dead-letter'; reason: string };

/** A message handler. Throwing = dead-letter with the error message as reason. */
export type MessageHandler = (message: BusMessage) => Promise<ConsumeOutcome>;

/** Options of `consume`. */
export interface ConsumeOptions {
  /** Unacked messages in flight for this consumer (its own channel). Default 10. */
  readonly prefetch?: number;
}

/** A running consumer. */
export interface Consumer {
  /** Stops consuming and waits for the handlers already running. Idempotent. */
  cancel(): Promise<void>;
}

/** The bus. */
export interface Bus {
  readonly topology: BusTopology;
  /**
   * Connects and asserts the base topology; resolves after the first successful connection
   * (retrying with backoff until then), rejects with `BusClosedError` if closed first. After
   * that, a lost connection is re-established in the background.
   */
  start(): Promise<void>;
  /** Stops consumers, gives unconfirmed publishes `closeTimeoutMs`, rejects the rest, disconnects. */
  close(): Promise<void>;
  /** Whether a connection with an asserted topology is up now. */
  readonly connected: boolean;
  on(event: 'connected' | 'disconnected', listener: () => void): void;
  off(event: 'connected' | 'disconnected', listener: () => void): void;
  /** Declares and binds a worker's dispatch and control queues; re-asserted after each reconnect. */
  assertWorkerQueues(workerId: string): Promise<void>;
  /**
   * Publishes `body` (already encoded) and resolves once RabbitMQ confirmed it. While
   * disconnected the publish is held and sent after the reconnect; one sent but not confirmed
   * when the connection drops is sent again (at-least-once: consumers deduplicate). A
   * mandatory publish that is unroutable still resolves (RabbitMQ confirms it after returning
   * it) and is reported to the `onReturned` listeners. Rejects only with `BusClosedError`
   * (closed before the confirm) or `PublishFailedError` (nacked `maxPublishNacks` times, or
   * it cannot be encoded).
   */
  publish(exchange: string, routingKey: string, body: Buffer, options?: PublishOptions): Promise<void>;
  /** Listens for returned (unroutable) mandatory publishes. */
  onReturned(listener: (message: ReturnedMessage) => void): void;
  /**
   * Consumes `queue` on a channel of its own with `prefetch`. Re-attached after a reconnect.
   * The handler's answer is applied: `ack`; `dead-letter` (re-published to `<ns>.dlx` with
   * headers `x-ax-dead-reason` and `x-ax-source-queue`, then acked); `requeue` (re-published
   * to the queue with `x-ax-requeues` + 1, then acked; past `maxRequeues` it is dead-lettered).
   * A handler that throws dead-letters the message with the error as the reason. `release`
   * nacks it back to the queue untouched (for a handler told to stop by `BusMessage.signal`).
   * Dead letters of `<ns>.dead.quorum` itself go to `<ns>.dead.parked.quorum`, headers kept, never to `<ns>.dlx`.
   */
  consume(queue: string, handler: MessageHandler, options?: ConsumeOptions): Promise<Consumer>;
  /** Messages ready and consumers of a queue, or null when it does not exist (or no connection). */
  queueDepth(queue: string): Promise<{ messageCount: number; consumerCount: number } | null>;
  /**
   * Consumers of each queue, on one channel: a number, or null when the queue does not exist
   * or there is no connection (the caller cannot tell "no consumer" from "cannot see").
   */
  consumerCounts(queues: readonly string[]): Promise<Map<string, number | null>>;
  /**
   * Takes up to `max` messages out of `queue` (basic.get, no ack: they are gone from it) and
   * returns their bodies; null when the queue does not exist, the server refused, or there is
   * no connection. For the queue of a worker that has no consumer (worker-presence).
   */
  takeMessages(queue: string, max: number): Promise<Buffer[] | null>;
  /**
   * Unbinds `queue` from the fanout `exchange` so that it receives nothing new, and tells its
   * depth; null when it does not exist (or no connection). For a queue an older build declared.
   */
  unbindQueue(queue: string, exchange: string): Promise<{ messageCount: number; consumerCount: number } | null>;
  /** Deletes `queue` only if it is empty and nobody consumes it; true when it is gone. */
  deleteQueueIfIdle(queue: string): Promise<boolean>;
}
