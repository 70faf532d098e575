/**
 * Issue #23 (second bullet): the dead-letter consumer during a MySQL outage. A private MariaDB
 * (stopped and started by the test, the shared server never is) under a broker engine on the
 * shared RabbitMQ with the test's own namespace. Poison messages reach `<ns>.dead` the way they
 * do in production: bodies the events consumer cannot parse (`x-ax-dead-reason`,
 * `x-ax-source-queue`), and a dispatch RabbitMQ itself dead-letters (`x-death`).
 */
import { createBus, DEAD_REASON_HEADER, DEAD_SOURCE_HEADER, type Bus } from '@ax/bus';
import { parseMessage } from '@ax/core';
import { createLogger, createMetrics } from '@ax/kit';
import type { StorePool } from '@ax/store';
import {
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  startMariaDb,
  uniqueNamespace,
  waitFor,
  type MariaDbServer,
  type TestAmqp,
  type TestDatabase,
  type TestRedis,
} from '@ax/testing';
import type { RowDataPacket } from 'mysql2';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBroker, type Broker } from './broker.js';
import { resolveBrokerConfig } from './config.js';
import { TEST_TIMINGS } from './test-support.js';

/** A pool that counts the statements that write `dead_letter` (the consumer's insert attempts). */
function countingPool(pool: StorePool, counter: { inserts: number }): StorePool {
  return new Proxy(pool, {
    get(target, property) {
      if (property === 'query') {
        return (...args: unknown[]) => {
          const sql = args[0];
          if (typeof sql === 'string' && sql.includes('INSERT INTO dead_letter')) counter.inserts += 1;
          return (target.query as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('dead letters during a MySQL outage (#23)', () => {
  const namespace = uniqueNamespace('axdlq');
  const counter = { inserts: 0 };
  const logLines: Array<Record<string, unknown>> = [];
  let server: MariaDbServer;
  let db: TestDatabase;
  let redis: TestRedis;
  let amqp: TestAmqp;
  let bus: Bus;
  let peerBus: Bus;
  let broker: Broker;

  beforeAll(async () => {
    server = await startMariaDb();
    db = await createTestDatabase({ serverUrl: server.url });
    redis = await createTestRedis(namespace);
    amqp = await createTestAmqp(namespace);
    const logger = createLogger({
      service: 'broker-test',
      level: 'debug',
      destination: { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    bus = createBus({ url: amqp.url, namespace, logger, name: `broker-${namespace}`, reconnectInitialDelayMs: 100 });
    peerBus = createBus({ url: amqp.url, namespace, logger, name: `peer-${namespace}` });
    await peerBus.start();
    const config = resolveBrokerConfig({ namespace, brokerId: 'dlq-broker' }, TEST_TIMINGS);
    broker = createBroker({ config, pool: countingPool(db.pool, counter), redis: redis.redis, bus, logger, metrics: createMetrics({ service: 'broker', defaultMetrics: false }) });
    await broker.start();
  });

  afterAll(async () => {
    await broker?.stop();
    await bus?.close();
    await peerBus?.close();
    await amqp?.cleanup();
    await redis?.cleanup();
    await server?.start().catch(() => undefined); // in case a failed test left it stopped
    await db?.drop();
    await server?.cleanup();
  });

  const rows = async (): Promise<Array<Record<string, unknown>>> => {
    const [r] = await db.pool.query<RowDataPacket[]>('SELECT source_queue, reason, payload, headers FROM dead_letter ORDER BY id');
    return r.map((row) => {
      const headers: unknown = row.headers;
      return { ...row, headers: typeof headers === 'string' ? (JSON.parse(headers) as unknown) : headers };
    });
  };

  it('#23 holds poison messages without a hot loop while MySQL is down, then stores each once with its original reason, source queue and x-death', async () => {
    const t = bus.topology;
    const unparseable = ['not json #1', 'not json #2', '{"v":1,"kind":"no-such-kind"}'];
    const expectedReason = (body: string): string => {
      const parsed = parseMessage(Buffer.from(body));
      if (parsed.ok) throw new Error(`${body} parses`);
      return parsed.reason;
    };
    const rejectedBody = 'a dispatch RabbitMQ dead-letters itself';
    const workerQueue = t.workerQueue('w-poison');
    await peerBus.assertWorkerQueues('w-poison');

    await server.stop();

    for (const body of unparseable) await peerBus.publish(t.eventsExchange, 'reply', Buffer.from(body));
    // A dispatch rejected by its worker (basic.nack, requeue=false): RabbitMQ dead-letters it via
    // the queue's DLX with an `x-death` entry and no ax headers.
    await peerBus.publish(t.dispatchExchange, t.workerRoutingKey('w-poison'), Buffer.from(rejectedBody));
    const got = await waitFor(() => amqp.channel.get(workerQueue, { noAck: false }), { description: 'the dispatch on the worker queue', timeoutMs: 5_000 });
    amqp.channel.nack(got, false, false);

    // Every poison message reached the dead-letter consumer (none is ready in either queue) and
    // the consumer has tried the store at least once.
    await waitFor(
      async () => {
        const events = await bus.queueDepth(t.eventsQueue);
        const dead = await bus.queueDepth(t.deadQueue);
        return events?.messageCount === 0 && dead?.messageCount === 0 && counter.inserts >= 1;
      },
      { description: 'poison messages delivered to the dead-letter consumer', timeoutMs: 10_000 },
    );
    await sleep(500);

    const insertsBefore = counter.inserts;
    const linesBefore = logLines.filter((l) => l.queue === t.deadQueue).length;
    await sleep(5_000);
    const inserts = counter.inserts - insertsBefore;
    const lines = logLines.filter((l) => l.queue === t.deadQueue).length - linesBefore;
    // A hot loop makes thousands of attempts (and error lines) in 5 s; a capped backoff a handful.
    expect.soft(inserts, 'insert attempts in 5 s of outage').toBeLessThanOrEqual(10);
    expect.soft(lines, 'log lines about the dead-letter queue in 5 s of outage').toBeLessThanOrEqual(10);
    // Nothing was dead-lettered again (the parking queue, if any, is empty too).
    expect.soft((await bus.queueDepth(t.deadQueue))?.messageCount).toBe(0);

    await server.start();

    const stored = await waitFor(async () => {
      const r = await rows();
      return r.length >= unparseable.length + 1 ? r : null;
    }, { description: 'every poison message in dead_letter', timeoutMs: 40_000 });
    await sleep(1_000); // a duplicate would show up by now
    const final = await rows();
    expect(final).toHaveLength(unparseable.length + 1);

    for (const body of unparseable) {
      const matching = final.filter((r) => r.payload === body);
      expect(matching, body).toHaveLength(1);
      const row = matching[0]!;
      expect(row.source_queue).toBe(t.eventsQueue);
      expect(row.reason).toBe(expectedReason(body));
      const headers = row.headers as Record<string, unknown>;
      expect(headers[DEAD_SOURCE_HEADER]).toBe(t.eventsQueue);
      expect(headers[DEAD_REASON_HEADER]).toBe(expectedReason(body));
    }
    const rejected = final.filter((r) => r.payload === rejectedBody);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.source_queue).toBe(workerQueue);
    expect(rejected[0]!.reason).toBe('rabbitmq: rejected');
    const rejectedHeaders = rejected[0]!.headers as Record<string, unknown>;
    expect(rejectedHeaders[DEAD_REASON_HEADER]).toBeUndefined();
    expect(rejectedHeaders[DEAD_SOURCE_HEADER]).toBeUndefined();
    const deaths = rejectedHeaders['x-death'] as Array<Record<string, unknown>>;
    expect(deaths).toHaveLength(1);
    expect(deaths[0]).toMatchObject({ queue: workerQueue, reason: 'rejected' });
    expect(stored.length).toBeGreaterThan(0);
  }, 120_000);
});
