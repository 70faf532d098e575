/**
 * Retires the events queue of builds before 2026-11-30: `<ns>.events`, which every broker
 * consumed competitively. Events now go to `<ns>.events.single` (single active consumer, see
 * `eventsQueueArguments`). Older workers and brokers still declare and bind the old queue
 * whenever they (re)connect, so during a rolling upgrade events may land in both; each round
 * this broker:
 *   - unbinds the old queue from the events exchange (it then receives nothing new);
 *   - while it holds messages, consumes it with the events handler (a reply that also arrived
 *     on the new queue is applied once: replies are idempotent by execution id);
 *   - once it is empty, stops consuming it, and deletes it when nobody consumes it.
 * Once every process runs a newer build the old queue is gone and a round is one passive check.
 */
import type { Bus, Consumer, MessageHandler } from '@ax/bus';
import type { Logger } from '@ax/kit';

/** How often the old queue is looked at. */
export const LEGACY_EVENTS_POLL_MS = 30_000;

/** What a round found. */
export type LegacyEventsState = 'absent' | 'draining' | 'drained' | 'deleted' | 'in-use';

export class LegacyEventsQueue {
  private consumer: Consumer | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly handler: MessageHandler,
    private readonly prefetch: number,
    private readonly logger: Logger,
  ) {}

  /** One round (see the file comment). */
  async retireOnce(): Promise<LegacyEventsState> {
    const { legacyEventsQueue: queue, eventsExchange } = this.bus.topology;
    const depth = await this.bus.unbindQueue(queue, eventsExchange);
    if (depth === null) {
      await this.stopConsuming();
      return 'absent';
    }
    if (depth.messageCount > 0) {
      if (this.consumer === undefined) {
        this.logger.info({ queue, messages: depth.messageCount }, 'draining the events queue of an older build');
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
      this.logger.info({ queue }, 'deleted the empty events queue of an older build');
      return 'deleted';
    }
    return 'in-use';
  }

  /** Stops consuming the old queue (if this broker does). */
  async stopConsuming(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = undefined;
    await consumer?.cancel();
  }
}
