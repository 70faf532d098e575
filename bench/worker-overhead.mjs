// Worker overhead: `pnpm build && node bench/worker-overhead.mjs` (real RabbitMQ and Redis).
//
// 1. Latency of a no-op HTTP job through a real worker process, one job at a time:
//    dispatch published → executor called (the HTTP endpoint is hit) → result received.
// 2. Peak RSS of the worker process (VmHWM) with 500 concurrent `sleep` jobs.
//
// Prints a JSON summary (BENCH_OUT=<file> also writes it there).
import { createServer } from 'node:http';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeMessage } from '../packages/core/dist/index.js';
import { benchDispatchItem, openWorkerDriver } from './lib/lone-worker.mjs';

const LATENCY_JOBS = Number(process.env.BENCH_LATENCY_JOBS ?? 500);
const CONCURRENT_JOBS = Number(process.env.BENCH_CONCURRENT_JOBS ?? 500);

const resultAt = new Map();
const waiters = new Map();
const driver = await openWorkerDriver((message) => {
  if (message.kind !== 'result') return;
  const now = performance.now();
  for (const item of message.items) {
    if (!resultAt.has(item.executionId)) resultAt.set(item.executionId, now);
    waiters.get(item.executionId)?.();
  }
});
const { bus, topology: t } = driver;

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

/** A worker with `slots` slots and a prefetch of 500, ready. */
const startWorker = async (workerId, slots) =>
  (await driver.startWorker(workerId, { AX_WORKER_SLOTS: String(slots), AX_WORKER_PREFETCH: '500' })).child;

let counter = 0;

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
    const it = benchDispatchItem(++counter, { type: 'http', url: endpointUrl, method: 'POST' });
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
  const items = Array.from({ length: CONCURRENT_JOBS }, () => benchDispatchItem(++counter, { type: 'shell', command: ['sleep', '5'], shell: false }));
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
  await driver.close();
}
const text = JSON.stringify(results, null, 2);
process.stdout.write(`${text}\n`);
if (process.env.BENCH_OUT) {
  mkdirSync(path.dirname(path.resolve(process.env.BENCH_OUT)), { recursive: true });
  writeFileSync(process.env.BENCH_OUT, `${text}\n`);
}
