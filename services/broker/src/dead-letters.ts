/**
 * The dead-letter queue `<ns>.dead` → `dead_letter` table (admin-api lists it). Every message
 * an ax consumer dead-lettered arrives here with `x-ax-dead-reason` and `x-ax-source-queue`;
 * RabbitMQ's own dead letters (expired, rejected) carry `x-death`.
 */
import { DEAD_REASON_HEADER, DEAD_SOURCE_HEADER, type BusMessage, type ConsumeOutcome } from '@ax/bus';
import { insertDeadLetter } from '@ax/store';
import type { BrokerContext } from './context.js';

function jsonSafe(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : Buffer.isBuffer(v) ? v.toString('base64') : v))) as unknown;
}

/** The handler of `<ns>.dead`. */
export function createDeadLetterHandler(ctx: BrokerContext): (message: BusMessage) => Promise<ConsumeOutcome> {
  return async (message) => {
    const headers = jsonSafe(message.headers) as Record<string, unknown>;
    const source = typeof headers[DEAD_SOURCE_HEADER] === 'string' ? headers[DEAD_SOURCE_HEADER] : deathQueue(headers) ?? 'unknown';
    const reason = typeof headers[DEAD_REASON_HEADER] === 'string' ? headers[DEAD_REASON_HEADER] : deathReason(headers) ?? 'dead-lettered';
    await insertDeadLetter(ctx.pool, { sourceQueue: source, reason, payload: message.body.toString('utf8'), headers });
    ctx.metrics.deadLetters.inc({ source });
    return 'ack';
  };
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
