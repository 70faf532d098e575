/** The broker's Prometheus series (DESIGN §7, §9). */
import type { Counter, Gauge, Histogram, Metrics } from '@ax/kit';

/** Every series the broker writes. */
export interface BrokerMetrics {
  readonly dispatches: Counter<'worker'>;
  readonly dispatchMessages: Counter;
  readonly ackLatency: Histogram;
  readonly ackTimeouts: Counter<'outcome'>;
  readonly returned: Counter;
  readonly refusals: Counter<'reason'>;
  readonly results: Counter<'outcome'>;
  readonly retries: Counter<'cause'>;
  readonly lostWorkers: Counter;
  readonly noWorker: Counter;
  readonly fenced: Counter<'kind'>;
  readonly deadLetters: Counter<'source'>;
  readonly invalidMessages: Counter<'kind'>;
  /**
   * Items refused alone inside a message whose other items were applied (#45), by message kind
   * and cause (`proto_key` | `too_deep` | `schema`).
   */
  readonly refusedItems: Counter<'kind' | 'reason'>;
  /**
   * Items dropped because their sender (validated RabbitMQ `user_id`) may not speak for the worker
   * of their execution (R24, attribution.ts), by kind (`ack` | `refusal` | `result` | `report` |
   * `log` | `heartbeat`).
   */
  readonly unattributedItems: Counter<'kind'>;
  readonly queueDepth: Gauge<'worker'>;
  readonly alertsDelivered: Counter<'outcome'>;
  /** SLA_MISSED alerts raised by this broker, by the limit missed (`START` | `FINISH`). */
  readonly slaMissed: Counter<'miss'>;
  readonly timersSuspended: Gauge;
  /** Backlog deferral (#22): 1 while a worker pool's backlog holds. */
  readonly backlogHold: Gauge<'pool'>;
  /** Backlog deferral: instances held PENDING now, per pool. */
  readonly deferredInstances: Gauge<'pool'>;
  /** Backlog deferral: DEFERRED events written (one per instance per hold), per pool. */
  readonly deferred: Counter<'pool'>;
}

/** Registers the broker's series on `metrics`. */
export function createBrokerMetrics(metrics: Metrics): BrokerMetrics {
  return {
    dispatches: metrics.counter({ name: 'ax_dispatches_total', help: 'Instances dispatched to workers', labelNames: ['worker'] }),
    dispatchMessages: metrics.counter({ name: 'ax_dispatch_messages_total', help: 'Dispatch messages published (several instances each, R10)' }),
    ackLatency: metrics.histogram({ name: 'ax_dispatch_ack_latency_seconds', help: 'From dispatch (database clock) to the worker ACK being applied' }),
    ackTimeouts: metrics.counter({ name: 'ax_ack_timeouts_total', help: 'Dispatches without an ACK by the deadline', labelNames: ['outcome'] }),
    returned: metrics.counter({ name: 'ax_dispatch_returned_total', help: 'Unroutable dispatches re-routed without counting (R8)' }),
    refusals: metrics.counter({ name: 'ax_refusals_total', help: 'Dispatches refused by workers', labelNames: ['reason'] }),
    results: metrics.counter({ name: 'ax_results_total', help: 'Execution results applied', labelNames: ['outcome'] }),
    retries: metrics.counter({ name: 'ax_retries_total', help: 'Retries scheduled', labelNames: ['cause'] }),
    lostWorkers: metrics.counter({ name: 'ax_lost_worker_executions_total', help: 'Executions declared LOST_WORKER (R14)' }),
    noWorker: metrics.counter({ name: 'ax_no_worker_total', help: 'Instances that found no eligible worker (first time, R11)' }),
    fenced: metrics.counter({ name: 'ax_fenced_total', help: 'ACKs and results of superseded executions (R16, R17)', labelNames: ['kind'] }),
    deadLetters: metrics.counter({ name: 'ax_dead_letters_total', help: 'Messages stored from the dead-letter queue', labelNames: ['source'] }),
    invalidMessages: metrics.counter({ name: 'ax_invalid_messages_total', help: 'Event messages that failed validation', labelNames: ['kind'] }),
    refusedItems: metrics.counter({
      name: 'ax_refused_items_total',
      help: 'Items refused alone (the rest of their message applied), by message kind and cause',
      labelNames: ['kind', 'reason'],
    }),
    unattributedItems: metrics.counter({
      name: 'ax_unattributed_items_total',
      help: "Items dropped alone because their sender's RabbitMQ user may not speak for their execution's worker (R24), by kind",
      labelNames: ['kind'],
    }),
    queueDepth: metrics.gauge({ name: 'ax_worker_queue_depth', help: 'Ready messages in a worker queue', labelNames: ['worker'] }),
    alertsDelivered: metrics.counter({ name: 'ax_alert_deliveries_total', help: 'Alert webhook deliveries', labelNames: ['outcome'] }),
    slaMissed: metrics.counter({ name: 'ax_sla_missed_total', help: "Instances past their task's sla (SLA_MISSED alerts raised)", labelNames: ['miss'] }),
    timersSuspended: metrics.gauge({ name: 'ax_broker_expiry_suspended', help: '1 while ACK and lease expiry are suspended (R14)' }),
    backlogHold: metrics.gauge({ name: 'ax_backlog_hold', help: "1 while a worker pool's backlog holds and its low-priority instances are deferred", labelNames: ['pool'] }),
    deferredInstances: metrics.gauge({ name: 'ax_dispatch_deferred_instances', help: 'Instances held PENDING below AX_BACKLOG_DEFER_BELOW_PRIORITY while their pool is backlogged', labelNames: ['pool'] }),
    deferred: metrics.counter({ name: 'ax_dispatch_deferred_total', help: 'Instances deferred by a backlog hold (DEFERRED events, one per instance per hold)', labelNames: ['pool'] }),
  };
}
