/**
 * A worker process with no broker: the bench driver plays the broker. Shared by
 * `bench/worker-overhead.mjs` and `bench/worker-throughput.mjs` (real RabbitMQ and Redis).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBus } from '../../packages/bus/dist/index.js';
import { parseMessage } from '../../packages/core/dist/index.js';
import { silentLogger } from '../../packages/kit/dist/index.js';
import { createTestAmqp, createTestRedis, freePort, uniqueNamespace } from '../../packages/testing/dist/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
export const EXECUTOR_SECRET = 'bench-secret-0123456789';

/**
 * Opens a private namespace, a driver bus and a queue bound to the events exchange;
 * `onMessage(parsed)` gets every message the workers publish there.
 */
export async function openWorkerDriver(onMessage) {
  const namespace = uniqueNamespace('axbench');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'ax-bench-worker-'));
  const bus = createBus({ url: 'amqp://guest:guest@127.0.0.1:5672', namespace, logger: silentLogger(), name: 'bench-driver' });
  await bus.start();
  const amqp = await createTestAmqp(namespace);
  const redis = await createTestRedis(namespace);
  const topology = bus.topology;
  const eventsQueue = `${namespace}.bench-events`;
  await amqp.channel.assertQueue(eventsQueue, { durable: false });
  await amqp.channel.bindQueue(eventsQueue, topology.eventsExchange, '');
  await amqp.channel.consume(eventsQueue, (msg) => {
    if (msg === null) return;
    const parsed = parseMessage(msg.content);
    if (parsed.ok) onMessage(parsed.message);
    amqp.channel.ack(msg);
  });
  const children = new Set();
  return {
    namespace,
    bus,
    topology,
    /**
     * Starts a worker (`env` adds to the defaults) and resolves once it is ready. `main`: the
     * worker's entry point, default this checkout's `services/worker/dist/main.js` (another
     * build, to compare).
     */
    async startWorker(workerId, env = {}, nodeArgs = [], main = path.join(root, 'services/worker/dist/main.js')) {
      const port = await freePort();
      const child = spawn(process.execPath, [...nodeArgs, main], {
        env: {
          ...process.env,
          AX_NAMESPACE: namespace,
          AX_WORKER_ID: workerId,
          AX_WORKER_DATA_DIR: path.join(tmp, 'data'),
          AX_HTTP_PORT: String(port),
          AX_EXECUTOR_SECRET: EXECUTOR_SECRET,
          AX_LOG_LEVEL: 'warn',
          AX_PLUGIN_DIR: path.join(tmp, 'plugins'),
          // Throughput of one worker, jobs as the worker (R25's uids are measured nowhere here).
          AX_JOB_ISOLATION: 'off',
          ...env,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      children.add({ child, exited });
      for (let i = 0; i < 300; i++) {
        try {
          if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return { child, stop: () => (child.kill('SIGTERM'), exited) };
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`worker ${workerId} did not become ready in 30 s`);
    },
    /** Stops every worker started and removes the namespace and the data. */
    async close() {
      for (const { child, exited } of children) {
        child.kill('SIGTERM');
        await exited;
      }
      await bus.close();
      await amqp.cleanup();
      await redis.cleanup();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

const runTag = Date.now().toString(36);

/** Dispatch item number `n` of this run (500 task names, one slot). */
export function benchDispatchItem(n, exec, timeoutSeconds = 60) {
  return {
    executionId: `bench-${runTag}-${String(n).padStart(8, '0')}`,
    instanceId: String(n),
    taskName: `bench-${n % 500}`,
    taskId: String(n % 500),
    expectedTime: '2026-12-01T02:00:00.000Z',
    bizDate: '2026-12-01',
    attempt: 1,
    maxAttempts: 1,
    runNo: 1,
    priority: 5,
    params: {},
    exec,
    timeoutSeconds,
    ackDeadline: new Date(Date.now() + 600_000).toISOString(),
    traceId: `t${n}`,
    idempotencyKey: `bench-${n % 500}:2026-12-01T02:00:00.000Z:${n}`,
  };
}
