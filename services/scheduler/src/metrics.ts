/** The scheduler's Prometheus metrics (DESIGN §7, §9). */
import { createMetrics, type Counter, type Gauge, type Histogram, type Metrics } from '@ax/kit';

/** Every metric the engine updates. */
export interface SchedulerMetrics {
  readonly metrics: Metrics;
  /** Seconds from a slot's expected time to the commit of its instance. */
  readonly fireLag: Histogram;
  /** Instances created, by trigger (`schedule`, `misfire`, `rescan`, `dependency`). */
  readonly fires: Counter<'trigger'>;
  /** Fire locks already held by another scheduler. */
  readonly lockContention: Counter;
  /** Redis errors on the fire lock (counted as won, R2). */
  readonly lockErrors: Counter;
  /** Slots coalesced (fire_once, serial), by cause. */
  readonly coalesced: Counter<'cause'>;
  /** Slots skipped by the misfire policy. */
  readonly skipped: Counter;
  /** Fires not created because the task's calendar listed their date (counted once over all schedulers). */
  readonly calendarSkipped: Counter;
  /** Slots refused by the R3 guard (stale or disabled definition). */
  readonly refused: Counter;
  /** Fires on the time wheel. */
  readonly wheelSize: Gauge;
  /** Tasks in the definition cache. */
  readonly tasks: Gauge;
  /** Offset of this scheduler's clock from MySQL `NOW(3)`, seconds (positive: MySQL ahead). */
  readonly clockSkew: Gauge;
  /** 1 while firing is stopped by clock skew. */
  readonly firingPaused: Gauge;
  /** DAG transitions, by kind (`deps_met`, `upstream_failed`, `upstream_missing`, `created`). */
  readonly dag: Counter<'kind'>;
  /** Instances purged by retention. */
  readonly purged: Counter;
}

/** Creates the metrics on `metrics` (default: a fresh registry without default metrics). */
export function createSchedulerMetrics(metrics: Metrics = createMetrics({ service: 'scheduler', defaultMetrics: false })): SchedulerMetrics {
  return {
    metrics,
    fireLag: metrics.histogram({ name: 'ax_scheduler_fire_lag_seconds', help: 'Slot expected time to instance commit, seconds' }),
    fires: metrics.counter({ name: 'ax_scheduler_fires_total', help: 'Instances created by the scheduler', labelNames: ['trigger'] }),
    lockContention: metrics.counter({ name: 'ax_scheduler_fire_lock_contention_total', help: 'Fire locks held by another scheduler' }),
    lockErrors: metrics.counter({ name: 'ax_scheduler_fire_lock_errors_total', help: 'Redis errors on the fire lock (counted as won)' }),
    coalesced: metrics.counter({ name: 'ax_scheduler_coalesced_total', help: 'Slots coalesced', labelNames: ['cause'] }),
    calendarSkipped: metrics.counter({ name: 'ax_scheduler_calendar_skipped_total', help: "Fires skipped by their task's calendar" }),
    skipped: metrics.counter({ name: 'ax_scheduler_skipped_total', help: 'Missed slots skipped by the misfire policy' }),
    refused: metrics.counter({ name: 'ax_scheduler_refused_total', help: 'Slots refused by the definition version guard (R3)' }),
    wheelSize: metrics.gauge({ name: 'ax_scheduler_wheel_size', help: 'Fires held by the time wheel' }),
    tasks: metrics.gauge({ name: 'ax_scheduler_tasks', help: 'Task definitions in the cache' }),
    clockSkew: metrics.gauge({ name: 'ax_scheduler_clock_skew_seconds', help: 'MySQL NOW(3) minus local clock, seconds' }),
    firingPaused: metrics.gauge({ name: 'ax_scheduler_firing_paused', help: '1 while firing is stopped by clock skew' }),
    dag: metrics.counter({ name: 'ax_scheduler_dag_transitions_total', help: 'DAG transitions', labelNames: ['kind'] }),
    purged: metrics.counter({ name: 'ax_scheduler_purged_instances_total', help: 'Final instances purged by retention' }),
  };
}
