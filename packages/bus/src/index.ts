// The public API of @ax/bus: the RabbitMQ topology of a namespace, and a connection that
// survives restarts with a confirm-channel publisher and dead-lettering consumers (README.md).
export {
  DEAD_REASON_HEADER,
  DEAD_SOURCE_HEADER,
  DEFAULT_WORKER_QUEUE_EXPIRES_MS,
  PARKED_REASON_HEADER,
  REQUEUE_COUNT_HEADER,
  SENDER_HEADER,
  WORKER_QUEUE_MAX_PRIORITY,
  busTopology,
  SHARED_QUEUE_TYPE,
  controlQueueArguments,
  deadQueueArguments,
  eventsQueueArguments,
  logsQueueArguments,
  workerQueueArguments,
} from './topology.js';
export type { BusTopology, LegacyQueue, LegacyQueueRole } from './topology.js';
export { amqpUserOf, createBus, defaultAmqpConnect } from './bus.js';
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
} from './bus.js';
export { BusClosedError, PublishFailedError } from './errors.js';
export { requestCancel } from './cancel.js';
export {
  BusAdminError,
  busAdminReachable,
  closeConnectionsOf,
  defaultManagementUrl,
  deleteEnrollmentBusUser,
  listBusUserNames,
  putEnrollmentBusUser,
  vhostOfAmqpUrl,
} from './bus-users.js';
export type { BusAdminOptions } from './bus-users.js';
export type { CancelRequest } from './cancel.js';
