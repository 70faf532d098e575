// Worker overhead: `pnpm build && node bench/worker-overhead.mjs` (real RabbitMQ and Redis).
//
// 1. Latency of a no-op HTTP job through a real worker process, one job at a time:
//    dispatch published → executor called (the HTTP endpoint is hit) → result received.
// 2. Peak RSS of the worker process (VmHWM) with 500 concurrent `sleep` jobs.
//
// Prints a JSON summary (BENCH_OUT=<file> also writes it there).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBus } from '../packages/bus/dist/index.js';
import { encodeMessage, parseMessage } from '../packages/core/dist/index.js';
import { silentLogger } from '../packages/kit/dist/index.js';
import { createTestAmqp, createTestRedis, freePort, uniqueNamespace } from '../packages/testing/dist/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const LATENCY_JOBS = Number(process.env.BENCH_LATENCY_JOBS ?? 500);
const CONCURRENT_JOBS = Number(process.env.BENCH_CONCURRENT_JOBS ?? 500);
const SECRET = 'bench-secret-0123456789';

const namespace = uniqueNamespace('axbench');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'ax-bench-worker-'));
const logger = silentLogger();
const bus = createBus({ url: 'amqp://guest:guest@127.0.0.1:5672', namespace, logger, name: 'bench-driver' });
await bus.start();
const amqp = await createTestAmqp(namespace);
const redis = await createTestRedis(namespace);
const t = bus.topology;
const eventsQueue = `${namespace}.bench-events`;
await amqp.channel.assertQueue(eventsQueue, { durable: false });
await amqp.channel.bindQueue(eventsQueue, t.eventsExchange, '');
const resultAt = new Map();
const waiters = new Map();
await amqp.channel.consume(eventsQueue, (msg) => {
  if (msg === null) return;
  const now = performance.now();
  const parsed = parseMessage(msg.content);
  if (parsed.ok && parsed.message.kind === 'result') {
    for (const item of parsed.message.items) {
      if (!resultAt.has(item.executionId)) resultAt.set(item.executionId, now);
      waiters.get(item.executionId)?.();
    }
  }
  amqp.channel.ack(msg);
});

const hitAt = new Map();
const endpoint = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    hitAt.set(JSON.parse(Buffer.concat(chunks).toString('utf8')).executionId, performance.now());
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
  });
});
await new Promise((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
const endpointUrl = `http://127.0.0.1:${endpoint.address().port}/noop`;

async function startWorker(workerId, slots) {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(root, 'services/worker/dist/main.js')], {
    env: {
      ...process.env,
      AX_NAMESPACE: namespace,
      AX_WORKER_ID: workerId,
      AX_WORKER_SLOTS: String(slots),
      AX_WORKER_DATA_DIR: path.join(tmp, 'data'),
      AX_HTTP_PORT: String(port),
      AX_EXECUTOR_SECRET: SECRET,
      AX_LOG_LEVEL: 'warn',
      AX_PLUGIN_DIR: path.join(tmp, 'plugins'),
      AX_WORKER_PREFETCH: '500',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 200; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (res.ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('worker did not become ready');
}

let counter = 0;
function item(exec, timeoutSeconds = 60) {
  counter += 1;
  return {
    executionId: `bench-${counter}-${Date.now()}`,
    instanceId: String(counter),
    taskName: 'bench',
    taskId: '1',
    expectedTime: '2026-12-01T02:00:00.000Z',
    bizDate: '2026-12-01',
    attempt: 1,
    maxAttempts: 1,
    runNo: 1,
    priority: 5,
    params: {},
    exec,
    timeoutSeconds,
    ackDeadline: new Date(Date.now() + 60_000).toISOString(),
    traceId: `t${counter}`,
    idempotencyKey: `bench:2026-12-01T02:00:00.000Z:${counter}`,
  };
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const summary = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: +pct(sorted, 50).toFixed(2), p99: +pct(sorted, 99).toFixed(2), max: +sorted[sorted.length - 1].toFixed(2) };
};
const vm = (pid, key) => Number(/(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(key)) ?? '0 kB')?.[1] ?? 0);

const results = { machine: { cores: os.availableParallelism(), node: process.version } };
try {
  // 1. latency, one job at a time
  const w1 = await startWorker('bench-latency', 16);
  const toCall = [];
  const callToResult = [];
  const total = [];
  for (let i = 0; i < LATENCY_JOBS + 20; i++) {
    const it = item({ type: 'http', url: endpointUrl, method: 'POST' });
    const done = new Promise((resolve) => waiters.set(it.executionId, resolve));
    const sent = performance.now();
    await bus.publish(t.dispatchExchange, 'bench-latency', encodeMessage({ v: 1, kind: 'dispatch', workerId: 'bench-latency', items: [it] }));
    await done;
    if (i < 20) continue; // warm-up
    const hit = hitAt.get(it.executionId);
    const got = resultAt.get(it.executionId);
    toCall.push(hit - sent);
    callToResult.push(got - hit);
    total.push(got - sent);
  }
  results.noopHttpLatencyMs = {
    jobs: LATENCY_JOBS,
    dispatchPublishedToExecutorCalled: summary(toCall),
    executorCalledToResultReceived: summary(callToResult),
    dispatchPublishedToResultReceived: summary(total),
  };
  results.latencyWorkerRssMb = { peak: +(vm(w1.pid, 'VmHWM:') / 1024).toFixed(1) };
  w1.kill('SIGTERM');
  await new Promise((resolve) => w1.once('exit', resolve));

  // 2. peak RSS with 500 concurrent sleep jobs
  const w2 = await startWorker('bench-rss', CONCURRENT_JOBS);
  const idleRss = vm(w2.pid, 'VmRSS:');
  const items = Array.from({ length: CONCURRENT_JOBS }, () => item({ type: 'shell', command: ['sleep', '5'], shell: false }));
  const all = Promise.all(items.map((it) => new Promise((resolve) => waiters.set(it.executionId, resolve))));
  const started = performance.now();
  for (let i = 0; i < items.length; i += 100) {
    await bus.publish(t.dispatchExchange, 'bench-rss', encodeMessage({ v: 1, kind: 'dispatch', workerId: 'bench-rss', items: items.slice(i, i + 100) }));
  }
  await all;
  results.concurrentSleepJobs = {
    jobs: CONCURRENT_JOBS,
    sleepSeconds: 5,
    wallSeconds: +((performance.now() - started) / 1000).toFixed(2),
    workerIdleRssMb: +(idleRss / 1024).toFixed(1),
    workerPeakRssMb: +(vm(w2.pid, 'VmHWM:') / 1024).toFixed(1),
  };
  w2.kill('SIGTERM');
  await new Promise((resolve) => w2.once('exit', resolve));
} finally {
  await new Promise((resolve) => endpoint.close(resolve));
  await bus.close();
  await amqp.cleanup();
  await redis.cleanup();
  rmSync(tmp, { recursive: true, force: true });
}
const text = JSON.stringify(results, null, 2);
process.stdout.write(`${text}\n`);
if (process.env.BENCH_OUT) {
  mkdirSync(path.dirname(path.resolve(process.env.BENCH_OUT)), { recursive: true });
  writeFileSync(process.env.BENCH_OUT, `${text}\n`);
}
