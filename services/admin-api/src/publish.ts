/**
 * Publishing to RabbitMQ from a request: `@ax/bus` holds a publish while disconnected and
 * resolves only on the broker's confirm, so a request waits at most `PUBLISH_TIMEOUT_MS`. A
 * publish that timed out may still be delivered after a reconnect (at-least-once; consumers
 * deduplicate by execution id).
 */
import type { PublishOptions } from '@ax/bus';
import type { AppDeps } from './deps.js';

/** Longest a request waits for a publish confirm. */
export const PUBLISH_TIMEOUT_MS = 5_000;

/** Thrown when no confirm came within the timeout. */
export class PublishTimeoutError extends Error {
  constructor() {
    super(`RabbitMQ did not confirm the publish within ${PUBLISH_TIMEOUT_MS} ms`);
    this.name = 'PublishTimeoutError';
  }
}

/** Publishes and waits for the confirm, at most {@link PUBLISH_TIMEOUT_MS}. */
export async function publishConfirmed(deps: AppDeps, exchange: string, routingKey: string, body: Buffer, options?: PublishOptions): Promise<void> {
  if (deps.bus === null) throw new Error('no RabbitMQ publisher is configured');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new PublishTimeoutError()), PUBLISH_TIMEOUT_MS);
  });
  const publish = deps.bus.publish(exchange, routingKey, body, options);
  publish.catch(() => undefined); // a rejection after the timeout is already reported
  try {
    await Promise.race([publish, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
