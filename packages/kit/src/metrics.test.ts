import { describe, expect, it } from 'vitest';
import { createMetrics } from './metrics.js';

describe('createMetrics', () => {
  it('builds independent registries with a service label and default metrics', async () => {
    const a = createMetrics({ service: 'scheduler' });
    const b = createMetrics({ service: 'broker', defaultMetrics: false, labels: { worker_id: 'w1' } });
    // The same metric name on two registries: no global registry, so no clash.
    const ca = a.counter({ name: 'ax_fires_total', help: 'fires', labelNames: ['outcome'] });
    const cb = b.counter({ name: 'ax_fires_total', help: 'fires', labelNames: ['outcome'] });
    ca.inc({ outcome: 'created' }, 2);
    cb.inc({ outcome: 'created' });
    const textA = await a.registry.metrics();
    const textB = await b.registry.metrics();
    expect(textA).toContain('ax_fires_total{outcome="created",service="scheduler"} 2');
    expect(textB).toContain('ax_fires_total{outcome="created",worker_id="w1",service="broker"} 1');
    expect(textA).toContain('nodejs_eventloop_lag_seconds');
    expect(textB).not.toContain('nodejs_eventloop_lag_seconds');
  });

  it('creates gauges and histograms on its registry with second buckets by default', async () => {
    const m = createMetrics({ service: 'worker', defaultMetrics: false });
    m.gauge({ name: 'ax_running_jobs', help: 'running' }).set(3);
    m.histogram({ name: 'ax_ack_latency_seconds', help: 'ack' }).observe(0.2);
    const text = await m.registry.metrics();
    expect(text).toContain('ax_running_jobs{service="worker"} 3');
    expect(text).toContain('ax_ack_latency_seconds_bucket{le="0.25",service="worker"} 1');
    expect(text).toContain('ax_ack_latency_seconds_bucket{le="0.1",service="worker"} 0');
  });
});
