/**
 * The dead-letter queue `<ns>.dead` → `dead_letter` table (admin-api lists it). Every message
 * an ax consumer dead-lettered arrives here with `x-ax-dead-reason` and `x-ax-source-queue`;
 * RabbitMQ's own dead letters (expired, rejected) carry `x-death`.
 *
 * Issue #23: this consumer never dead-letters a message itself (`<ns>.dlx` routes back here: a
 * loop that overwrote the headers of the first death).
 * - A retryable store error (MySQL away, deadlock, read-only failover: `@ax/store`'s table) holds
 *   the delivery unacked — RabbitMQ keeps it, headers untouched — and retries the insert on a
 *   {@link StoreOutageGate}: one attempt at a time, capped exponential backoff. Prefetch bounds
 *   what is held, so consumption pauses. On stop (or a lost channel) the delivery is released
 *   back to the queue unchanged; nothing is lost.
 * - A non-retryable error (a bug, a row the table refuses) is logged once with context; the
 *   letter is stored once more without its body and headers (reason, source and the error kept),
 *   so that admin-api still shows it. If even that fails for good, it is parked in
 *   `<ns>.dead.parked` by the bus (headers kept) rather than dropped.
 */
import { DEAD_REASON_HEADER, DEAD_SOURCE_HEADER, type BusMessage, type ConsumeOutcome } from '@ax/bus';
import { isRetryableError, toError } from '@ax/kit';
import { insertDeadLetter, isRetryableMysqlError } from '@ax/store';
import type { BrokerContext } from './context.js';
import { StoreOutageGate, type StoreOutageGateOptions } from './store-outage-gate.js';

/** Options of {@link createDeadLetterHandler}: the backoff while the store fails. */
export type DeadLetterHandlerOptions = StoreOutageGateOptions;

/** A dead letter the `dead_letter` table refused even without its body and headers. */
export class DeadLetterNotStorableError extends Error {
  override readonly name = 'DeadLetterNotStorableError';
}

/** Header of a letter stored without its body: why the table refused it. */
const NOT_STORED_HEADER = 'x-ax-not-stored';

interface Letter {
  readonly sourceQueue: string;
  readonly reason: string;
  readonly payload: string | null;
  readonly headers: Record<string, unknown>;
}

function jsonSafe(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : Buffer.isBuffer(v) ? v.toString('base64') : v))) as unknown;
}

/**
 * Whether a store error is worth waiting for: `@ax/store`'s classification of MySQL errors
 * (habit 7), also when wrapped in a `cause` or an `AggregateError` (`@ax/kit`).
 */
export function isRetryableStoreError(error: unknown): boolean {
  return isRetryableMysqlError(error) || isRetryableError(error);
}

/** The handler of `<ns>.dead`. */
export function createDeadLetterHandler(ctx: BrokerContext, options: DeadLetterHandlerOptions = {}): (message: BusMessage) => Promise<ConsumeOutcome> {
  const gate = new StoreOutageGate({ random: ctx.random, ...options });
  const logger = ctx.logger.child({ component: 'dead-letters', queue: ctx.bus.topology.deadQueue });

  /** Inserts the letter; on a refusal, once more without body and headers. */
  const store = async (letter: Letter, bytes: number): Promise<void> => {
    try {
      await insertDeadLetter(ctx.pool, letter);
      return;
    } catch (thrown) {
      const error = toError(thrown);
      if (isRetryableStoreError(error)) throw error;
      logger.error({ err: error, source: letter.sourceQueue, reason: letter.reason, bytes }, 'dead letter refused by the table; storing it without body and headers');
      try {
        await insertDeadLetter(ctx.pool, {
          sourceQueue: letter.sourceQueue,
          reason: letter.reason,
          payload: null,
          headers: { [DEAD_REASON_HEADER]: letter.reason, [DEAD_SOURCE_HEADER]: letter.sourceQueue, [NOT_STORED_HEADER]: error.message.slice(0, 1_000), 'x-ax-body-bytes': bytes },
        });
      } catch (fallbackThrown) {
        const fallback = toError(fallbackThrown);
        if (isRetryableStoreError(fallback)) throw fallback;
        throw new DeadLetterNotStorableError(`dead letter not storable: ${error.message}; without its body: ${fallback.message}`, { cause: fallback });
      }
    }
  };

  return async (message) => {
    let letter: Letter;
    try {
      letter = letterOf(message);
    } catch (thrown) {
      // Headers that cannot even be read: keep the message as it is for a person to look at.
      const error = toError(thrown);
      logger.error({ err: error, messageId: message.messageId }, 'dead letter unreadable; parking it');
      return { action: 'dead-letter', reason: `unreadable dead letter: ${error.message}` };
    }
    for (;;) {
      const turn = await gate.enter(message.signal);
      if (turn === null) return 'release'; // stopping: RabbitMQ keeps it for the next consumer
      try {
        await store(letter, message.body.length);
        const outageMs = gate.succeeded();
        if (outageMs !== undefined) logger.info({ outageMs }, 'dead letters stored again after a store outage');
        ctx.metrics.deadLetters.inc({ source: letter.sourceQueue });
        return 'ack';
      } catch (thrown) {
        const error = toError(thrown);
        if (!isRetryableStoreError(error)) {
          logger.error({ err: error, source: letter.sourceQueue, reason: letter.reason, messageId: message.messageId }, 'dead letter cannot be stored; parking it');
          return { action: 'dead-letter', reason: error.message };
        }
        const retryInMs = gate.failed(turn);
        if (message.signal.aborted) return 'release';
        logger.warn(
          { err: error, source: letter.sourceQueue, failures: gate.consecutiveFailures, retryInMs },
          'dead letter not stored (store unavailable); holding it unacked and retrying',
        );
      } finally {
        turn.release();
      }
    }
  };
}

function letterOf(message: BusMessage): Letter {
  const headers = jsonSafe(message.headers) as Record<string, unknown>;
  const source = typeof headers[DEAD_SOURCE_HEADER] === 'string' ? headers[DEAD_SOURCE_HEADER] : deathQueue(headers) ?? 'unknown';
  const reason = typeof headers[DEAD_REASON_HEADER] === 'string' ? headers[DEAD_REASON_HEADER] : deathReason(headers) ?? 'dead-lettered';
  return { sourceQueue: source, reason, payload: message.body.toString('utf8'), headers };
}

function firstDeath(headers: Record<string, unknown>): Record<string, unknown> | undefined {
  const deaths = headers['x-death'];
  return Array.isArray(deaths) && typeof deaths[0] === 'object' && deaths[0] !== null ? (deaths[0] as Record<string, unknown>) : undefined;
}

function deathQueue(headers: Record<string, unknown>): string | undefined {
  const q = firstDeath(headers)?.queue;
  return typeof q === 'string' ? q : undefined;
}

function deathReason(headers: Record<string, unknown>): string | undefined {
  const r = firstDeath(headers)?.reason;
  return typeof r === 'string' ? `rabbitmq: ${r}` : undefined;
}
