/**
 * Node's event-loop delay histogram (`monitorEventLoopDelay`, which prom-client's
 * `nodejs_eventloop_lag_{min,max,mean,p50,p90,p99}_seconds` report) records the time between
 * two runs of its sampling timer: the sampling period plus the delay. At prom-client's default
 * period (10 ms) that floor hardly shows; at ours (100 ms, for idle CPU, #24) an idle service
 * would report 100 ms of lag. This takes the period off those gauges, so they say what they
 * are named for: how late the loop ran (never below 0). `stddev` is a spread, left as it is.
 */
import type { Registry } from 'prom-client';

/** The gauges holding a delay as recorded (period + delay), in seconds. */
export const EVENT_LOOP_DELAY_GAUGES = ['min', 'max', 'mean', 'p50', 'p90', 'p99'].map((s) => `nodejs_eventloop_lag_${s}_seconds`);

/** Takes `periodMs` off the delay gauges of prom-client's default metrics in `registry`. */
export function reportDelayBeyondSampling(registry: Registry, periodMs: number): void {
  const periodS = periodMs / 1_000;
  for (const name of EVENT_LOOP_DELAY_GAUGES) {
    const metric = registry.getSingleMetric(name);
    if (metric === undefined) continue; // a runtime without monitorEventLoopDelay
    const read = metric.get.bind(metric);
    metric.get = async () => {
      const snapshot = await read();
      return { ...snapshot, values: snapshot.values.map((v) => ({ ...v, value: Math.max(0, v.value - periodS) })) };
    };
  }
}
