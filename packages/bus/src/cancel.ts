/**
 * Cancels (R12): a `cancel` message on the worker's control queue (`<ns>.worker.<id>.control`),
 * published on the default exchange with the queue's name as routing key, so the worker needs no
 * binding (R24: an enrolled worker cannot bind to `<ns>.dispatch`). Used by the broker (block `cover`, ACKs of
 * superseded executions, adopted late results) and by admin-api (a user's cancel).
 */
import { MESSAGE_VERSION, encodeMessage, type CancelMessage } from '@ax/core';
import type { Bus } from './bus.js';

/** What to cancel. */
export interface CancelRequest {
  /** The worker running (or holding) the executions. */
  readonly workerId: string;
  readonly executionIds: readonly string[];
  /** Reason label, e.g. `CANCELED_BY_USER`, `COVERED`, `SUPERSEDED`. */
  readonly reason: string;
}

/**
 * Publishes one `cancel` message (persistent, confirmed) to the worker's control queue.
 * Resolves when RabbitMQ confirmed it; a worker whose control queue is gone simply never
 * gets it (its registry entry is gone too, and lease expiry takes over, R14).
 */
export async function requestCancel(bus: Bus, request: CancelRequest): Promise<void> {
  if (request.executionIds.length === 0) return;
  const message: CancelMessage = {
    v: MESSAGE_VERSION,
    kind: 'cancel',
    workerId: request.workerId,
    executionIds: [...request.executionIds],
    reason: request.reason,
  };
  await bus.publish('', bus.topology.controlQueue(request.workerId), encodeMessage(message), {
    messageId: `cancel:${request.executionIds[0] ?? ''}`,
  });
}
