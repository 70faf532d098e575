import { describe, expect, it } from 'vitest';
import { createMetrics } from './metrics.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The value of gauge `name` in the registry's text (the first series). */
async function gauge(metrics: ReturnType<typeof createMetrics>, name: string): Promise<number> {
  const text = await metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`));
  if (line === undefined) throw new Error(`${name} not in the scrape`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('event-loop delay gauges', () => {
  it('say how late the loop ran, without the 100 ms sampling period in them', async () => {
    const metrics = createMetrics({ service: 'eld-test' });
    await gauge(metrics, 'nodejs_eventloop_lag_p50_seconds'); // resets the histogram
    await sleep(1_200); // idle: a dozen samples, each about one period apart
    // Idle, the recorded delays are the period (~0.1 s) plus almost nothing: reported as almost nothing.
    expect(await gauge(metrics, 'nodejs_eventloop_lag_p50_seconds')).toBeLessThan(0.05);
    expect(await gauge(metrics, 'nodejs_eventloop_lag_min_seconds')).toBeGreaterThanOrEqual(0);

    await sleep(150); // the first sample after a reset records nothing: the stall must come later
    const until = Date.now() + 300;
    while (Date.now() < until) {
      // a 300 ms stall of the loop
    }
    await sleep(250);
    // A timer due during the stall ran up to 300 ms late (at least 300 − 100: the period's phase).
    const max = await gauge(metrics, 'nodejs_eventloop_lag_max_seconds');
    expect(max).toBeGreaterThan(0.19);
    expect(max).toBeLessThan(0.6); // not the stall plus a period and more (loose: a busy machine runs timers late too)
  });
});
