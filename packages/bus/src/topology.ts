/**
 * The RabbitMQ topology of one namespace, as data (CONVENTIONS habit 8). `@ax/bus` asserts it
 * after every (re)connect; nothing else declares exchanges or queues.
 *
 * ```
 * (default exchange)     key <ns>.worker.<id>          → <ns>.worker.<id>          (dispatches, R12, R24)
 *                        key <ns>.worker.<id>.control  → <ns>.worker.<id>.control  (cancels, R12, R24)
 * <ns>.dispatch  direct  key <workerId>          → <ns>.worker.<id>          (older brokers and admin-api; unenrolled workers only)
 *                        key <workerId>.control  → <ns>.worker.<id>.control
 * <ns>.events    fanout                          → <ns>.events.quorum        (ack/refusal/result/heartbeat; one broker at a time)
 * <ns>.logs      fanout                          → <ns>.logs.quorum          (job output chunks; brokers consume competitively)
 * <ns>.dlx       fanout                          → <ns>.dead.quorum          (dead letters of every queue above)
 * (default exchange)                             → <ns>.dead.parked.quorum   (dead letters the dead-letter consumer cannot store)
 * ```
 *
 * The four shared queues are quorum queues (replicated over a RabbitMQ cluster, DESIGN §11); a
 * queue's type cannot change once declared (RabbitMQ answers PRECONDITION_FAILED), so they have
 * names of their own and the classic queues of earlier builds are retired (`legacyQueues`).
 * Worker queues stay classic (priorities), declared by their worker on the node it is connected to.
 *
 * Brokers publish dispatches and cancels on the default exchange with the queue's name as routing
 * key (R24): no binding is needed, so an enrolled worker, whose RabbitMQ user cannot bind to
 * `<ns>.dispatch`, gets them; unenrolled workers still bind (messages of older brokers reach them).
 */

/** Priority levels of a worker queue (`x-max-priority`); task priority 0..9 maps onto it as is. */
export const WORKER_QUEUE_MAX_PRIORITY = 10;

/** Default `x-expires` of a worker's queues: removed this long after their worker stopped consuming. */
export const DEFAULT_WORKER_QUEUE_EXPIRES_MS = 120_000;

/** What a retired queue carried, so its leftovers are drained by the right consumer. */
export type LegacyQueueRole = 'events' | 'logs' | 'dead' | 'parked';

/** A shared queue of an earlier build (classic), retired in favour of its quorum successor. */
export interface LegacyQueue {
  /** Its name, e.g. `<ns>.events.single`. */
  readonly queue: string;
  /** What it carried. */
  readonly role: LegacyQueueRole;
  /** The exchange older builds bind it to (unbound by brokers); undefined for the parked queue. */
  readonly exchange: string | undefined;
  /** The queue of this build that replaces it. */
  readonly successor: string;
}

/** `x-queue-type` of the shared queues: replicated over the nodes of a cluster (Raft). */
export const SHARED_QUEUE_TYPE = 'quorum';

/** Names of every exchange and queue of a namespace. */
export interface BusTopology {
  readonly namespace: string;
  /**
   * `<ns>.dispatch` — direct; routing key = worker id (dispatches) or `<id>.control` (cancels).
   * Brokers no longer publish here (they use the default exchange, {@link workerQueue} as key);
   * unenrolled workers still bind to it for older brokers.
   */
  readonly dispatchExchange: string;
  /** `<ns>.events` — fanout; workers (and admin-api for async reports) publish replies here. */
  readonly eventsExchange: string;
  /**
   * `<ns>.events.quorum` — quorum queue bound to the events exchange; every broker consumes it
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
   * `<ns>.logs.quorum` — quorum queue bound to the logs exchange; brokers consume it competitively
   * (appends are idempotent by offset, so order between brokers does not matter); DLX `<ns>.dlx`.
   */
  readonly logsQueue: string;
  /** `<ns>.dlx` — fanout dead-letter exchange of every ax queue. */
  readonly dlx: string;
  /** `<ns>.dead.quorum` — quorum queue of dead letters (read by the broker into the `dead_letter` table). */
  readonly deadQueue: string;
  /**
   * `<ns>.dead.parked.quorum` — quorum queue, no consumer, no DLX: a message the consumer of
   * the dead-letter queue dead-letters is parked here (headers kept) instead of looping through `<ns>.dlx`.
   */
  readonly parkedQueue: string;
  /**
   * The classic shared queues of earlier builds, which brokers retire (unbind, drain, delete
   * once idle: `legacy-queues.ts` of the broker; README "Upgrading to quorum queues").
   */
  readonly legacyQueues: readonly LegacyQueue[];
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
  const names = {
    eventsExchange: `${ns}.events`,
    eventsQueue: `${ns}.events.quorum`,
    logsExchange: `${ns}.logs`,
    logsQueue: `${ns}.logs.quorum`,
    dlx: `${ns}.dlx`,
    deadQueue: `${ns}.dead.quorum`,
    parkedQueue: `${ns}.dead.parked.quorum`,
  };
  const legacy = (queue: string, role: LegacyQueueRole, exchange: string | undefined, successor: string): LegacyQueue =>
    Object.freeze({ queue, role, exchange, successor });
  return Object.freeze({
    namespace: ns,
    dispatchExchange: `${ns}.dispatch`,
    ...names,
    legacyEventsQueue: `${ns}.events`,
    legacyQueues: Object.freeze([
      // Builds before 2026-11-30: every broker consumed it competitively.
      legacy(`${ns}.events`, 'events', names.eventsExchange, names.eventsQueue),
      // Builds before the quorum queues (#23): classic queues of the same roles.
      legacy(`${ns}.events.single`, 'events', names.eventsExchange, names.eventsQueue),
      legacy(`${ns}.logs`, 'logs', names.logsExchange, names.logsQueue),
      legacy(`${ns}.dead`, 'dead', names.dlx, names.deadQueue),
      legacy(`${ns}.dead.parked`, 'parked', undefined, names.parkedQueue),
    ]),
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
  return { 'x-queue-type': SHARED_QUEUE_TYPE, 'x-dead-letter-exchange': topology.dlx, 'x-single-active-consumer': true };
}

/** Arguments of the shared logs queue. */
export function logsQueueArguments(topology: BusTopology): Record<string, unknown> {
  return { 'x-queue-type': SHARED_QUEUE_TYPE, 'x-dead-letter-exchange': topology.dlx };
}

/** Arguments of the dead-letter queue and of the parked queue (no DLX: nothing loops). */
export function deadQueueArguments(): Record<string, unknown> {
  return { 'x-queue-type': SHARED_QUEUE_TYPE };
}

/** Header naming why a message was dead-lettered by an ax consumer. */
export const DEAD_REASON_HEADER = 'x-ax-dead-reason';
/** Header naming the queue an ax consumer dead-lettered a message from. */
export const DEAD_SOURCE_HEADER = 'x-ax-source-queue';
/** Header naming why a dead letter was parked in `<ns>.dead.parked` (its other headers are kept). */
export const PARKED_REASON_HEADER = 'x-ax-parked-reason';
/**
 * Header naming the original sender (its validated `user_id`) of a message an ax consumer
 * requeued under its own user; believed only on messages whose `user_id` is that consumer's.
 */
export const SENDER_HEADER = 'x-ax-sender';
/** Header counting how often an ax consumer asked to requeue a message. */
export const REQUEUE_COUNT_HEADER = 'x-ax-requeues';
