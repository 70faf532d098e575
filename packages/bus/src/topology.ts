/**
 * The RabbitMQ topology of one namespace, as data (CONVENTIONS habit 8). `@ax/bus` asserts it
 * after every (re)connect; nothing else declares exchanges or queues.
 *
 * ```
 * <ns>.dispatch  direct  key <workerId>          → <ns>.worker.<id>          (dispatches, R12)
 *                        key <workerId>.control  → <ns>.worker.<id>.control  (cancels, R12)
 * <ns>.events    fanout                          → <ns>.events.single        (ack/refusal/result/heartbeat; one broker at a time)
 * <ns>.logs      fanout                          → <ns>.logs                 (job output chunks; brokers consume competitively)
 * <ns>.dlx       fanout                          → <ns>.dead                 (dead letters of every queue above)
 * (default exchange)                             → <ns>.dead.parked          (dead letters the dead-letter consumer cannot store)
 * ```
 */

/** Priority levels of a worker queue (`x-max-priority`); task priority 0..9 maps onto it as is. */
export const WORKER_QUEUE_MAX_PRIORITY = 10;

/** Default `x-expires` of a worker's queues: removed this long after their worker stopped consuming. */
export const DEFAULT_WORKER_QUEUE_EXPIRES_MS = 120_000;

/** Names of every exchange and queue of a namespace. */
export interface BusTopology {
  readonly namespace: string;
  /** `<ns>.dispatch` — direct; routing key = worker id (dispatches) or `<id>.control` (cancels). */
  readonly dispatchExchange: string;
  /** `<ns>.events` — fanout; workers (and admin-api for async reports) publish replies here. */
  readonly eventsExchange: string;
  /**
   * `<ns>.events.single` — durable queue bound to the events exchange; every broker consumes it
   * and RabbitMQ delivers to one at a time (`x-single-active-consumer`); DLX `<ns>.dlx`.
   */
  readonly eventsQueue: string;
  /**
   * `<ns>.events` — the events queue of builds before 2026-11-30 (every broker consumed it
   * competitively). Brokers unbind it, drain it and delete it once idle (`legacy-events.ts`).
   */
  readonly legacyEventsQueue: string;
  /** `<ns>.logs` — fanout; workers publish `log` messages (job output chunks, DESIGN §11) here. */
  readonly logsExchange: string;
  /**
   * `<ns>.logs` — durable queue bound to the logs exchange; brokers consume it competitively
   * (appends are idempotent by offset, so order between brokers does not matter); DLX `<ns>.dlx`.
   */
  readonly logsQueue: string;
  /** `<ns>.dlx` — fanout dead-letter exchange of every ax queue. */
  readonly dlx: string;
  /** `<ns>.dead` — durable queue of dead letters (read by the broker into the `dead_letter` table). */
  readonly deadQueue: string;
  /**
   * `<ns>.dead.parked` — durable queue, no consumer, no DLX: a message the consumer of
   * `<ns>.dead` dead-letters is parked here (headers kept) instead of looping through `<ns>.dlx`.
   */
  readonly parkedQueue: string;
  /** `<ns>.worker.<id>` — a worker's dispatch queue (classic priority queue, DLX, x-expires). */
  workerQueue(workerId: string): string;
  /** `<ns>.worker.<id>.control` — a worker's control queue (cancels, R12). */
  controlQueue(workerId: string): string;
  /** Routing key of a worker's dispatch queue on the dispatch exchange: the worker id. */
  workerRoutingKey(workerId: string): string;
  /** Routing key of a worker's control queue on the dispatch exchange: `<id>.control`. */
  controlRoutingKey(workerId: string): string;
}

const NAMESPACE = /^[a-z0-9_.-]{1,64}$/;
const WORKER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

function checkWorkerId(workerId: string): string {
  if (!WORKER_ID.test(workerId)) throw new RangeError(`invalid worker id ${JSON.stringify(workerId)}`);
  return workerId;
}

/** The names of namespace `namespace` (`AX_NAMESPACE`). */
export function busTopology(namespace: string): BusTopology {
  if (!NAMESPACE.test(namespace)) throw new RangeError(`invalid namespace ${JSON.stringify(namespace)}`);
  const ns = namespace;
  return Object.freeze({
    namespace: ns,
    dispatchExchange: `${ns}.dispatch`,
    eventsExchange: `${ns}.events`,
    eventsQueue: `${ns}.events.single`,
    legacyEventsQueue: `${ns}.events`,
    logsExchange: `${ns}.logs`,
    logsQueue: `${ns}.logs`,
    dlx: `${ns}.dlx`,
    deadQueue: `${ns}.dead`,
    parkedQueue: `${ns}.dead.parked`,
    workerQueue: (id: string) => `${ns}.worker.${checkWorkerId(id)}`,
    controlQueue: (id: string) => `${ns}.worker.${checkWorkerId(id)}.control`,
    workerRoutingKey: (id: string) => checkWorkerId(id),
    controlRoutingKey: (id: string) => `${checkWorkerId(id)}.control`,
  });
}

/** Arguments of a worker's dispatch queue (documented in README.md). */
export function workerQueueArguments(topology: BusTopology, expiresMs: number): Record<string, unknown> {
  return {
    'x-max-priority': WORKER_QUEUE_MAX_PRIORITY,
    'x-dead-letter-exchange': topology.dlx,
    'x-expires': expiresMs,
    'x-queue-type': 'classic',
  };
}

/** Arguments of a worker's control queue. */
export function controlQueueArguments(topology: BusTopology, expiresMs: number): Record<string, unknown> {
  return { 'x-dead-letter-exchange': topology.dlx, 'x-expires': expiresMs, 'x-queue-type': 'classic' };
}

/**
 * Arguments of the shared events queue. A single active consumer: the broker that gets the
 * events applies them in batches twice the size they had when two brokers split the stream
 * (with 2 brokers: 308 instead of 549 commits per 15,000 instances; docs/benchmarks.md). When
 * that broker's connection ends, RabbitMQ hands the queue (and its unacked messages) to the next.
 */
export function eventsQueueArguments(topology: BusTopology): Record<string, unknown> {
  return { 'x-dead-letter-exchange': topology.dlx, 'x-single-active-consumer': true };
}

/** Arguments of the shared logs queue. */
export function logsQueueArguments(topology: BusTopology): Record<string, unknown> {
  return { 'x-dead-letter-exchange': topology.dlx };
}

/** Header naming why a message was dead-lettered by an ax consumer. */
export const DEAD_REASON_HEADER = 'x-ax-dead-reason';
/** Header naming the queue an ax consumer dead-lettered a message from. */
export const DEAD_SOURCE_HEADER = 'x-ax-source-queue';
/** Header naming why a dead letter was parked in `<ns>.dead.parked` (its other headers are kept). */
export const PARKED_REASON_HEADER = 'x-ax-parked-reason';
/** Header counting how often an ax consumer asked to requeue a message. */
export const REQUEUE_COUNT_HEADER = 'x-ax-requeues';
