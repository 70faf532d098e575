/**
 * Retires the shared queues of earlier builds (`BusTopology.legacyQueues`):
 *   - `<ns>.events` (builds before 2026-11-30, consumed competitively by every broker);
 *   - the classic `<ns>.events.single`, `<ns>.logs`, `<ns>.dead` and `<ns>.dead.parked` of builds
 *     before the quorum queues (#23). A queue's type cannot be changed by re-declaring it
 *     (RabbitMQ answers PRECONDITION_FAILED and closes the channel), so the quorum queues have
 *     names of their own (`<ns>.events.quorum`, …) and the classic ones are emptied and removed.
 *
 * Older workers and brokers still declare and bind the old queues whenever they (re)connect, so
 * during a rolling upgrade messages may land in both; each round this broker, for each old queue:
 *   - unbinds it from its exchange (it then receives nothing new; the parked queue has none);
 *   - while it holds messages, consumes it with the handler of its role: events and logs with
 *     their handlers (a reply or a chunk that also arrived on the new queue is applied once:
 *     replies are idempotent by execution id, chunks by offset), dead letters with the
 *     dead-letter handler, parked dead letters by moving them into the new parked queue
 *     (headers kept) — nothing is dropped;
 *   - once it is empty, stops consuming it, and deletes it when nobody consumes it.
 * Once every process runs a newer build the old queues are gone and a round is one passive
 * check per name.
 */
import type { Bus, BusMessage, Consumer, LegacyQueue, LegacyQueueRole, MessageHandler } from '@ax/bus';
import { toError, type Logger } from '@ax/kit';

/** How often the old queues are looked at. */
export const LEGACY_EVENTS_POLL_MS = 30_000;

/** What a round found for one old queue. */
export type LegacyEventsState = 'absent' | 'draining' | 'drained' | 'deleted' | 'in-use';

/** The consumer of each role's leftovers (the parked queue needs none: it is moved). */
export interface LegacyHandlers {
  readonly events: { readonly handler: MessageHandler; readonly prefetch: number };
  readonly logs?: { readonly handler: MessageHandler; readonly prefetch: number };
  readonly dead?: { readonly handler: MessageHandler; readonly prefetch: number };
}

/** One old queue being retired. */
class RetiredQueue {
  private consumer: Consumer | undefined;

  constructor(
    private readonly bus: Bus,
    readonly legacy: LegacyQueue,
    private readonly handler: MessageHandler,
    private readonly prefetch: number,
    private readonly logger: Logger,
  ) {}

  async retireOnce(): Promise<LegacyEventsState> {
    const { queue, exchange } = this.legacy;
    const depth = exchange === undefined ? await this.bus.queueDepth(queue) : await this.bus.unbindQueue(queue, exchange);
    if (depth === null) {
      await this.stopConsuming();
      return 'absent';
    }
    if (depth.messageCount > 0) {
      if (this.consumer === undefined) {
        this.logger.info({ queue, successor: this.legacy.successor, messages: depth.messageCount }, 'draining a queue of an older build');
        this.consumer = await this.bus.consume(queue, this.handler, { prefetch: this.prefetch });
      }
      return 'draining';
    }
    if (this.consumer !== undefined) {
      // Empty now; messages prefetched but not handled go back to it and are seen next round.
      await this.stopConsuming();
      return 'drained';
    }
    if (depth.consumerCount === 0 && (await this.bus.deleteQueueIfIdle(queue))) {
      this.logger.info({ queue, successor: this.legacy.successor }, 'deleted the empty queue of an older build');
      return 'deleted';
    }
    return 'in-use';
  }

  async stopConsuming(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = undefined;
    await consumer?.cancel();
  }
}

/** Moves a parked dead letter of an older build into this build's parked queue, as it came. */
function moveParked(bus: Bus, successor: string): MessageHandler {
  return async (message: BusMessage) => {
    await bus.publish('', successor, message.body, {
      headers: message.headers,
      ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
    });
    return 'ack';
  };
}

/** Every old shared queue of the namespace (see the file comment). */
export class LegacyQueues {
  private readonly queues: RetiredQueue[];

  constructor(
    bus: Bus,
    handlers: LegacyHandlers,
    private readonly logger: Logger,
  ) {
    const handlerOf = (legacy: LegacyQueue): { handler: MessageHandler; prefetch: number } | undefined => {
      const role: LegacyQueueRole = legacy.role;
      if (role === 'parked') return { handler: moveParked(bus, legacy.successor), prefetch: 10 };
      return handlers[role];
    };
    this.queues = [];
    for (const legacy of bus.topology.legacyQueues) {
      const consumer = handlerOf(legacy);
      if (consumer === undefined) continue;
      this.queues.push(new RetiredQueue(bus, legacy, consumer.handler, consumer.prefetch, logger));
    }
  }

  /** One round over every old queue; a failure with one does not stop the others. */
  async retireOnce(): Promise<ReadonlyMap<string, LegacyEventsState>> {
    const states = new Map<string, LegacyEventsState>();
    for (const queue of this.queues) {
      try {
        states.set(queue.legacy.queue, await queue.retireOnce());
      } catch (error) {
        this.logger.warn({ err: toError(error), queue: queue.legacy.queue }, 'retiring a queue of an older build failed; next round retries');
      }
    }
    return states;
  }

  /** Stops consuming the old queues (those this broker drains). */
  async stopConsuming(): Promise<void> {
    for (const queue of this.queues) await queue.stopConsuming();
  }
}
