/** The worker's Prometheus metrics (`/metrics`). */
import type { Counter, Gauge, Histogram, Metrics } from '@ax/kit';

/** Every worker metric. */
export interface WorkerMetrics {
  readonly dispatchItems: Counter<'decision'>;
  readonly executions: Counter<'type' | 'outcome'>;
  readonly duration: Histogram<'type'>;
  readonly running: Gauge;
  readonly published: Counter<'kind'>;
  readonly outboxUnconfirmed: Gauge;
  readonly clockOffset: Gauge;
  readonly alerts: Counter<'kind'>;
  readonly deadLettered: Counter;
  readonly logBytes: Counter<'stream'>;
  readonly logTruncated: Counter;
  readonly logOutboxBytes: Gauge;
}

/** Registers the worker metrics. */
export function createWorkerMetrics(metrics: Metrics): WorkerMetrics {
  return {
    dispatchItems: metrics.counter({
      name: 'ax_worker_dispatch_items_total',
      help: 'Dispatch items received, by decision (accepted, duplicate, expired, clock_skew, shutting_down, canceled)',
      labelNames: ['decision'],
    }),
    executions: metrics.counter({ name: 'ax_worker_executions_total', help: 'Executions ended, by exec type and outcome', labelNames: ['type', 'outcome'] }),
    duration: metrics.histogram({ name: 'ax_worker_execution_duration_seconds', help: 'Run time of executions', labelNames: ['type'] }),
    running: metrics.gauge({ name: 'ax_worker_running', help: 'Slots in use' }),
    published: metrics.counter({ name: 'ax_worker_published_items_total', help: 'Outbox items confirmed by RabbitMQ, by kind', labelNames: ['kind'] }),
    outboxUnconfirmed: metrics.gauge({ name: 'ax_worker_outbox_unconfirmed', help: 'Outbox items not yet confirmed' }),
    clockOffset: metrics.gauge({ name: 'ax_worker_clock_offset_ms', help: 'Last measured offset against Redis TIME, ms' }),
    alerts: metrics.counter({ name: 'ax_worker_alerts_total', help: 'Alerts raised by the worker (logged as "ALERT <kind>")', labelNames: ['kind'] }),
    deadLettered: metrics.counter({ name: 'ax_worker_dead_lettered_total', help: 'Invalid messages dead-lettered' }),
    logBytes: metrics.counter({ name: 'ax_worker_log_bytes_total', help: 'Bytes of job output captured (after masking), by stream', labelNames: ['stream'] }),
    logTruncated: metrics.counter({ name: 'ax_worker_log_truncated_total', help: 'Executions whose output was truncated (AX_LOG_MAX_BYTES, or the log outbox backed up)' }),
    logOutboxBytes: metrics.gauge({ name: 'ax_worker_log_outbox_bytes', help: 'Job output in the outbox not yet confirmed by RabbitMQ, bytes' }),
  };
}
