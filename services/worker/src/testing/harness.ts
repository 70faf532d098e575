/**
 * Drives a worker from a test, standing in for the broker: publishes dispatch and cancel
 * messages (core catalog) to the worker's queues, and collects what the worker sends on
 * `<ns>.events` through a test queue bound to that exchange.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBus, type Bus } from '@ax/bus';
import { encodeMessage, parseMessage, type AckItem, type DispatchItem, type Exec, type LogItem, type RefusalItem, type ResultItem } from '@ax/core';
import { redisKeys, silentLogger, type Logger } from '@ax/kit';
import { createTestAmqp, createTestRedis, startTcpProxy, testAmqpUrl, throughProxy, type CuttableProxy as TcpProxy, type TestAmqp, type TestRedis } from '@ax/testing';
import { hostAllowList } from '../executors/host-allow.js';
import { createHttpExecutor, type HttpExecutor } from '../executors/http.js';
import { createPythonExecutor } from '../executors/python.js';
import { createShellExecutor } from '../executors/shell.js';
import { createSqlExecutor } from '../executors/sql.js';
import type { Executor } from '../executors/types.js';
import { Outbox } from '../outbox.js';
import { Worker, type WorkerSettings } from '../worker.js';

/** What a worker sent, by kind, in arrival order (duplicates kept). */
export interface Collected {
  readonly acks: AckItem[];
  readonly refusals: RefusalItem[];
  readonly results: ResultItem[];
  /** Items of `log` messages consumed from `<ns>.logs`, in arrival order (duplicates kept). */
  readonly logs: LogItem[];
}

/** The stand-in broker of one namespace. */
export interface Driver {
  readonly namespace: string;
  readonly bus: Bus;
  readonly amqp: TestAmqp;
  readonly redis: TestRedis;
  readonly collected: Collected;
  dispatch(workerId: string, items: DispatchItem[]): Promise<void>;
  publishRaw(workerId: string, body: Buffer): Promise<void>;
  /** A cancel on the worker's control queue; `reason` default `CANCELED_BY_USER` (`RECALL`: R9's recall). */
  cancel(workerId: string, executionIds: string[], reason?: string): Promise<void>;
  resultOf(executionId: string): ResultItem | undefined;
  close(): Promise<void>;
}

/** Starts the driver: its own bus, a test queue bound to `<ns>.events`, Redis for the registry. */
export async function startDriver(namespace: string, logger: Logger = silentLogger()): Promise<Driver> {
  const bus = createBus({ url: testAmqpUrl(), namespace, logger, name: `test-driver-${namespace}` });
  await bus.start();
  const amqp = await createTestAmqp(namespace);
  const redis = await createTestRedis(namespace);
  const queue = `${namespace}.test-events`;
  await amqp.channel.assertQueue(queue, { durable: false, autoDelete: false });
  await amqp.channel.bindQueue(queue, bus.topology.eventsExchange, '');
  const collected: Collected = { acks: [], refusals: [], results: [], logs: [] };
  await amqp.channel.consume(queue, (msg) => {
    if (msg === null) return;
    const parsed = parseMessage(msg.content);
    if (parsed.ok) {
      const m = parsed.message;
      if (m.kind === 'ack') collected.acks.push(...m.items);
      else if (m.kind === 'refusal') collected.refusals.push(...m.items);
      else if (m.kind === 'result') collected.results.push(...m.items);
    }
    amqp.channel.ack(msg);
  });
  // Job output, as the brokers' consumer sees it (a message that does not parse is kept out).
  await amqp.channel.consume(bus.topology.logsQueue, (msg) => {
    if (msg === null) return;
    const parsed = parseMessage(msg.content);
    if (parsed.ok && parsed.message.kind === 'log') collected.logs.push(...parsed.message.items);
    amqp.channel.ack(msg);
  });
  const t = bus.topology;
  return {
    namespace,
    bus,
    amqp,
    redis,
    collected,
    dispatch: (workerId, items) => bus.publish(t.dispatchExchange, t.workerRoutingKey(workerId), encodeMessage({ v: 1, kind: 'dispatch', workerId, items })),
    publishRaw: (workerId, body) => bus.publish(t.dispatchExchange, t.workerRoutingKey(workerId), body),
    cancel: (workerId, executionIds, reason = 'CANCELED_BY_USER') =>
      bus.publish(t.dispatchExchange, t.controlRoutingKey(workerId), encodeMessage({ v: 1, kind: 'cancel', workerId, executionIds, reason })),
    resultOf: (executionId) => collected.results.find((r) => r.executionId === executionId),
    close: async () => {
      await bus.close();
      await amqp.cleanup();
      await redis.cleanup();
    },
  };
}

/** An in-process worker with its own outbox directory. */
export interface TestWorker {
  readonly worker: Worker;
  readonly bus: Bus;
  readonly outbox: Outbox;
  readonly dataDir: string;
  readonly settings: WorkerSettings;
  /** `worker.stop()`, then closes its bus, Redis client and outbox and removes the data dir. */
  stop(): Promise<void>;
}

/** Options of `startTestWorker`. */
export interface TestWorkerOptions {
  readonly driver: Driver;
  readonly workerId: string;
  readonly settings?: Partial<WorkerSettings>;
  readonly amqpUrl?: string;
  readonly executors?: Partial<Record<Exec['type'], Executor>>;
  readonly secret?: string;
  readonly logger?: Logger;
  /** Opens the outbox at `file` (a test injects one whose writes fail); default `new Outbox({ file })`. */
  readonly openOutbox?: (file: string) => Outbox;
}

/** Starts a worker in this process against the driver's namespace. */
export async function startTestWorker(options: TestWorkerOptions): Promise<TestWorker> {
  const { driver, workerId } = options;
  const logger = options.logger ?? silentLogger();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'ax-worker-test-'));
  const outboxPath = path.join(dataDir, 'outbox.db');
  const outbox = options.openOutbox?.(outboxPath) ?? new Outbox({ file: outboxPath });
  const bus = createBus({ url: options.amqpUrl ?? testAmqpUrl(), namespace: driver.namespace, logger, name: `test-worker-${workerId}`, reconnectMaxDelayMs: 500 });
  await bus.start();
  const settings: WorkerSettings = {
    workerId,
    tags: ['test'],
    slots: 8,
    heartbeatIntervalMs: 500,
    leaseTtlMs: 1_500,
    skewLimitMs: 2_000,
    clockCheckIntervalMs: 30_000,
    shutdownGraceMs: 2_000,
    prefetch: 50,
    version: 'test',
    ...options.settings,
  };
  let http: HttpExecutor | undefined;
  const executors = {
    shell: options.executors?.shell ?? createShellExecutor({ outputTailBytes: 4096, killGraceMs: 500 }),
    http: options.executors?.http ?? (http = createHttpExecutor({ workerId, secret: options.secret, allow: hostAllowList(['*']), outputTailBytes: 4096 })),
    plugin: options.executors?.plugin ?? { run: () => Promise.resolve({ outcome: 'FAILED' as const, error: 'no plugins in this test' }) },
    python: options.executors?.python ?? createPythonExecutor({ outputTailBytes: 4096, killGraceMs: 500 }),
    sql: options.executors?.sql ?? createSqlExecutor({ outputTailBytes: 4096, killGraceMs: 500 }),
  };
  const worker = new Worker({ settings, bus, redis: driver.redis.redis, keys: redisKeys(driver.namespace), outbox, executors, logger });
  await worker.start();
  let stopped: Promise<void> | undefined;
  return {
    worker,
    bus,
    outbox,
    dataDir,
    settings,
    stop: () =>
      (stopped ??= (async () => {
        await worker.stop();
        await bus.close();
        await http?.close();
        outbox.close();
        rmSync(dataDir, { recursive: true, force: true });
      })()),
  };
}

/** A TCP proxy in front of RabbitMQ that a test can cut and restore (an outage for one client). */
export interface CuttableProxy extends TcpProxy {
  /** The test RabbitMQ's URL through the proxy. */
  readonly url: string;
}

/** Starts a proxy to the test RabbitMQ (`@ax/testing`'s TCP proxy, with its AMQP URL). */
export async function startAmqpProxy(): Promise<CuttableProxy> {
  const target = new URL(testAmqpUrl());
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5672) });
  return { ...proxy, url: throughProxy(testAmqpUrl(), proxy) };
}
