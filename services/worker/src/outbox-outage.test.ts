// The outbox across a RabbitMQ outage: a TCP proxy between the worker and RabbitMQ is cut
// while jobs run, and restored later.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@ax/kit';
import { readRegistration } from '@ax/redis';
import { uniqueNamespace, waitFor } from '@ax/testing';
import { dispatchItem } from './testing/fixtures.js';
import { startAmqpProxy, startDriver, startTestWorker, type CuttableProxy, type Driver } from './testing/harness.js';

const namespace = uniqueNamespace('axwo');
let driver: Driver;
let proxy: CuttableProxy;

beforeAll(async () => {
  driver = await startDriver(namespace);
  proxy = await startAmqpProxy();
});
afterAll(async () => {
  await proxy.close();
  await driver.close();
});

describe('outbox replay', () => {
  it('§5 R14 with RabbitMQ unreachable for the worker, 200 jobs complete and all 200 results arrive after it returns, none sent twice', async () => {
    const w = await startTestWorker({ driver, workerId: 'w-outage', amqpUrl: proxy.url, settings: { slots: 50 } });
    try {
      const items = Array.from({ length: 200 }, () => dispatchItem({ exec: { type: 'shell', command: ['sleep', '1'], shell: false } }));
      const ids = new Set(items.map((i) => i.executionId));
      for (let i = 0; i < items.length; i += 50) await driver.dispatch('w-outage', items.slice(i, i + 50));
      await waitFor(() => driver.collected.acks.filter((a) => ids.has(a.executionId)).length === 200, { description: '200 ACKs', timeoutMs: 10_000 });
      await proxy.cut();
      // Jobs finish while the worker cannot reach RabbitMQ: results wait in the outbox, and the
      // lease keeps listing them (R14) so no broker declares them lost.
      await waitFor(() => w.outbox.dispatchesIn('done').length === 200, { description: '200 jobs done', timeoutMs: 30_000 });
      const waiting = w.outbox.unconfirmedResultIds().filter((id) => ids.has(id));
      expect(waiting.length).toBeGreaterThan(0);
      const entry = await readRegistration(driver.redis.redis, redisKeys(namespace), 'w-outage');
      expect(entry?.runningExecutionIds).toEqual(expect.arrayContaining(waiting));
      const before = new Set(driver.collected.results.filter((r) => ids.has(r.executionId)).map((r) => r.executionId)).size;
      expect(before).toBeLessThan(200);

      await proxy.restore();
      await waitFor(() => new Set(driver.collected.results.filter((r) => ids.has(r.executionId)).map((r) => r.executionId)).size === 200, {
        description: 'all 200 results',
        timeoutMs: 30_000,
      });
      expect(driver.collected.results.filter((r) => ids.has(r.executionId)).every((r) => r.outcome === 'SUCCESS')).toBe(true);
      await waitFor(() => w.outbox.unconfirmedCount() === 0, { description: 'outbox confirmed' });
      // One result row per execution, each confirmed once (ACKs are not outbox items).
      expect(w.outbox.confirmedCounts()).toEqual({ ack: 0, refusal: 0, result: 200 });
    } finally {
      await w.stop();
    }
  });
});
