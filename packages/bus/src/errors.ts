/** Errors of `@ax/bus` (CONVENTIONS habit 7). */

/** The bus was closed: a held or unconfirmed publish is given up, a consume cannot start. */
export class BusClosedError extends Error {
  override readonly name = 'BusClosedError';
  readonly code = 'BUS_CLOSED';
  constructor(message = 'the bus is closed') {
    super(message);
  }
}

/** A publish was refused for good: nacked by RabbitMQ too often, or it cannot be encoded. */
export class PublishFailedError extends Error {
  override readonly name = 'PublishFailedError';
  readonly code = 'PUBLISH_FAILED';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

