/**
 * Prometheus metrics. Each process builds its own `Registry` (never prom-client's global one),
 * so tests can build several side by side. Every series carries a `service` label. Metric
 * names start with `ax_` and carry their unit (`ax_fire_lag_seconds`, `ax_dispatches_total`).
 */
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
} from 'prom-client';

import { reportDelayBeyondSampling } from './event-loop-delay.js';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Options of `createMetrics`. */
export interface MetricsOptions {
  /** Value of the `service` label on every series. */
  readonly service: string;
  /** Collect Node's default metrics (CPU, memory, event loop lag, GC); default true. */
  readonly defaultMetrics?: boolean;
  /** Further labels on every series (e.g. `worker_id`). */
  readonly labels?: Readonly<Record<string, string>>;
}

type Named<C> = Omit<C, 'registers'>;

/** A registry and helpers that create metrics on it. */
export interface Metrics {
  /** The process's registry; `/metrics` serves it. */
  readonly registry: Registry;
  /** A counter registered on `registry`. */
  counter<L extends string = string>(config: Named<CounterConfiguration<L>>): Counter<L>;
  /** A gauge registered on `registry`. */
  gauge<L extends string = string>(config: Named<GaugeConfiguration<L>>): Gauge<L>;
  /** A histogram registered on `registry` (default buckets: `DEFAULT_SECONDS_BUCKETS`). */
  histogram<L extends string = string>(config: Named<HistogramConfiguration<L>>): Histogram<L>;
}

/** Buckets for latencies in seconds, 5 ms to 5 min. */
export const DEFAULT_SECONDS_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
];

/** Sampling period of the event loop delay (`nodejs_eventloop_lag_*`), in ms. */
const EVENT_LOOP_MONITORING_MS = 100;

/** Creates a fresh registry with the `service` default label (and default metrics). */
export function createMetrics(options: MetricsOptions): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ ...options.labels, service: options.service });
  // prom-client samples the event loop delay every 10 ms by default: 100 wake-ups a second,
  // about 0.6 % of a core in an idle service (#24). Every 100 ms still shows any stall that matters.
  if (options.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_MS });
    // Its histogram counts the sampling period in every delay: taken off (event-loop-delay.ts).
    reportDelayBeyondSampling(registry, EVENT_LOOP_MONITORING_MS);
  }
  return {
    registry,
    counter: (config) => new Counter({ ...config, registers: [registry] }),
    gauge: (config) => new Gauge({ ...config, registers: [registry] }),
    histogram: (config) =>
      new Histogram({ buckets: [...DEFAULT_SECONDS_BUCKETS], ...config, registers: [registry] }),
  };
}
