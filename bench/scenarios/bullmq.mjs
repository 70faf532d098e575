/**
 * The peer: BullMQ 6 job schedulers (`upsertJobScheduler`, 6-field cron patterns) and 2 BullMQ
 * worker processes (concurrency 256 each, like ax's 2 workers × 256 slots) making the same
 * no-op HTTP call, on the same Redis, under a unique prefix deleted afterwards.
 *
 *   burst:  N schedulers due at the same second → all completed, pickup/start/end lag
 *   steady: N schedulers every second for D s → completions per second, backlog (wait+active)
 *
 * `--job noop --workers 1 --concurrency 50` is the in-process peer (#24): the job a function in
 * the worker that returns at once, the way a Node team runs BullMQ; executions are then counted
 * from the worker's own records instead of the sink's calls.
 *
 *   node bench/scenarios/bullmq.mjs --mode burst --tasks 2000 [--job http|noop] [--workers 2] [--concurrency 256] [--out f.json]
 *   node bench/scenarios/bullmq.mjs --mode steady --tasks 4000 --seconds 60 [--drain-s 15]
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { createTestRedis, deleteNamespaceKeys, startProcess, uniqueNamespace } from '../../packages/testing/dist/index.js';
import { cronAt } from '../lib/ax-stack.mjs';
import { args, log, onCleanup, removeDir, runScenario, sleep, track, untrack } from '../lib/harness.mjs';
import { slotKey } from '../lib/keys.mjs';
import { startSink } from '../lib/sink.mjs';
import { cpuSecondsBetween, cpuSnapshot, serverPids } from '../lib/proc-cpu.mjs';
import { exactlyOnce, perSecond, slopePerSecond, summarize } from '../lib/stats.mjs';

const a = args();
const MODE = a.mode ?? 'burst';
const TASKS = Number(a.tasks ?? 2_000);
const SECONDS = Number(a.seconds ?? 60);
const DRAIN_S = Number(a['drain-s'] ?? 15);
const WORKERS = Number(a.workers ?? 2);
const CONCURRENCY = Number(a.concurrency ?? 256);
const WAIT_S = Number(a['wait-s'] ?? 60);
const JOB = a.job ?? 'http';
const workerScript = fileURLToPath(new URL('../peer/bullmq-worker.mjs', import.meta.url));

await runScenario(async () => {
  const sink = await startSink();
  onCleanup(() => sink.close());
  const prefix = uniqueNamespace('axbenchbull');
  track('bullPrefixes', prefix);
  const redis = await createTestRedis(prefix);
  onCleanup(async () => {
    await deleteNamespaceKeys(redis.redis, prefix);
    await redis.cleanup();
    untrack('bullPrefixes', prefix);
  });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-bench-bull-'));
  track('dirs', dir);
  onCleanup(async () => {
    removeDir(dir);
    untrack('dirs', dir);
  });
  const queueName = 'bench';
  const queue = new Queue(queueName, { connection: { host: '127.0.0.1', port: 6379 }, prefix });
  onCleanup(() => queue.close());
  const workers = [];
  onCleanup(async () => {
    for (const w of workers) {
      await w.stop({ graceMs: 10_000 });
      untrack('pgids', w.pgid);
    }
  });

  const names = Array.from({ length: TASKS }, (_, i) => `${MODE}-${i}`);
  const dueMs = Math.ceil((Date.now() + 8_000 + TASKS) / 1000) * 1000;
  const pattern = MODE === 'burst' ? cronAt(dueMs) : '* * * * * *';
  const upsertStarted = Date.now();
  for (let i = 0; i < names.length; i += 500) {
    await Promise.all(
      names.slice(i, i + 500).map((id) => queue.upsertJobScheduler(id, { pattern, tz: 'UTC' }, { name: 'noop', data: { n: id } })),
    );
  }
  log(`${TASKS} job schedulers (${pattern}) upserted in ${Date.now() - upsertStarted} ms`);
  for (let i = 0; i < WORKERS; i++) {
    const proc = await startProcess({
      name: `bullmq-worker-${i + 1}`,
      command: process.execPath,
      args: [workerScript, '--queue', queueName, '--prefix', prefix, '--concurrency', String(CONCURRENCY), '--job', JOB,
        '--url', sink.url, '--out', path.join(dir, `w${i + 1}.json`)],
      readyLine: 'ready',
      readyTimeoutMs: 20_000,
    });
    track('pgids', proc.pgid);
    workers.push(proc);
  }
  const backlog = async (t) => {
    const c = await queue.getJobCounts('wait', 'active', 'prioritized', 'delayed');
    return { t, backlog: (c.wait ?? 0) + (c.active ?? 0) + (c.prioritized ?? 0), delayed: c.delayed ?? 0 };
  };
  /** Jobs done so far: the sink's calls, or what the in-process workers last printed. */
  const completedSoFar = () => {
    if (JOB === 'http') return sink.firstAt.size;
    let n = 0;
    for (const w of workers) {
      const said = w.lines().findLast((l) => l.stream === 'stdout' && l.text.startsWith('completed '));
      n += said ? Number(said.text.slice('completed '.length)) : 0;
    }
    return n;
  };
  const samples = [];
  const cpuNow = () => cpuSnapshot({ worker: workers.map((w) => w.pid), bench: [process.pid], ...serverPids() });
  let cpuBefore;
  let cpuSeconds;
  let cpuWindowS;
  let t0;
  let windowEnd;
  if (MODE === 'burst') {
    const readyBeforeDueMs = dueMs - Date.now();
    log(`due at ${new Date(dueMs).toISOString()}, ready ${readyBeforeDueMs} ms before`);
    if (readyBeforeDueMs < 1_000) throw new Error(`BullMQ became ready only ${readyBeforeDueMs} ms before the fire time`);
    t0 = dueMs;
    windowEnd = dueMs + 1_000;
    await sleep(dueMs - Date.now());
    cpuBefore = cpuNow();
    while (Date.now() < dueMs + WAIT_S * 1_000) {
      const s = await backlog(Date.now() - dueMs);
      samples.push(s);
      if (completedSoFar() >= TASKS && s.backlog === 0) break;
      await sleep(100);
    }
    cpuSeconds = cpuSecondsBetween(cpuBefore, cpuNow());
    cpuWindowS = (Date.now() - dueMs) / 1000;
  } else {
    t0 = Math.ceil(Date.now() / 1000) * 1000 + 2_000;
    windowEnd = t0 + SECONDS * 1_000;
    log(`window ${new Date(t0).toISOString()} + ${SECONDS} s`);
    await sleep(t0 - Date.now());
    cpuBefore = cpuNow();
    while (Date.now() < windowEnd) {
      const next = Date.now() + 1_000;
      samples.push(await backlog(Date.now() - t0));
      await sleep(Math.max(0, next - Date.now()));
    }
    cpuSeconds = cpuSecondsBetween(cpuBefore, cpuNow());
    cpuWindowS = (Date.now() - t0) / 1000;
    // End of the window: remove the schedulers (their pending next jobs go too), then drain.
    for (let i = 0; i < names.length; i += 500) {
      await Promise.all(names.slice(i, i + 500).map((id) => queue.removeJobScheduler(id)));
    }
    const stopMs = Date.now();
    while (Date.now() < stopMs + DRAIN_S * 1_000) {
      const s = await backlog(Date.now() - t0);
      samples.push(s);
      if (s.backlog === 0) break;
      await sleep(500);
    }
  }
  await sleep(500);
  for (const w of workers.splice(0)) {
    await w.stop({ graceMs: 15_000 });
    untrack('pgids', w.pgid);
  }
  const records = [];
  let failed = 0;
  for (let i = 0; i < WORKERS; i++) {
    const r = JSON.parse(readFileSync(path.join(dir, `w${i + 1}.json`), 'utf8'));
    records.push(...r.records);
    failed += r.failed;
  }
  // Over HTTP the sink saw every call; in process only the workers' records know the jobs.
  const inProcessCounts = new Map();
  for (const [name, e] of records) {
    const key = slotKey(name, e, 1);
    inProcessCounts.set(key, (inProcessCounts.get(key) ?? 0) + 1);
  }
  const calls = JOB === 'http' ? sink.counts : inProcessCounts;
  const startLags = JOB === 'http' ? sink.startLags(t0, windowEnd) : records.filter(([, e]) => e >= t0 && e < windowEnd).map(([, e, p]) => p - e);
  const inWindow = records.filter(([, e]) => e >= t0 && e < windowEnd);
  let duplicateCalls = 0;
  for (const n of calls.values()) if (n > 1) duplicateCalls += n - 1;
  const expected = [];
  const checkEnd = MODE === 'burst' ? windowEnd : windowEnd - 2_000;
  for (let t = t0; t < checkEnd; t += 1_000) for (const n of names) expected.push(slotKey(n, t, 1));
  const observed = new Map();
  for (const [key, n] of calls) {
    const e = Date.parse(key.split(':').slice(1, -1).join(':'));
    if (e >= t0 && e < checkEnd) observed.set(key, n);
  }
  const executions = exactlyOnce(expected, observed);
  const base = {
    status: 'ok',
    system: 'bullmq',
    mode: MODE,
    tasks: TASKS,
    job: JOB,
    topology: { workers: WORKERS, concurrency: CONCURRENCY },
    failedJobs: failed,
    pickupLagMs: summarize(inWindow.map(([, e, p]) => p - e)),
    startLagMs: summarize(startLags),
    earlyStarts: startLags.filter((lag) => lag < 0).length,
    endLagMs: summarize(inWindow.map(([, e, , f]) => f - e)),
    executions: { ...executions, duplicates: duplicateCalls },
    cpu: { windowS: Math.round(cpuWindowS * 10) / 10, seconds: cpuSeconds },
    samples,
  };
  if (MODE === 'burst') {
    const done = inWindow.length >= TASKS;
    return {
      ...base,
      status: done ? 'ok' : 'timeout',
      dueAt: new Date(dueMs).toISOString(),
      allSuccessMs: done ? Math.max(...inWindow.map(([, e, , f]) => f - e)) : null,
    };
  }
  const warm = t0 + 5_000;
  const finished = inWindow.map(([, , , f]) => f);
  const windowSamples = samples.filter((s) => s.t <= SECONDS * 1_000);
  // A job scheduler creates its next job only once the current one is taken, so a slot not
  // reached in time is never created: skipped, not lost. Reported apart from correctness.
  return {
    ...base,
    executions: { ...base.executions, missing: 0 },
    skippedSlots: executions.missing,
    seconds: SECONDS,
    offeredPerS: TASKS,
    sustainedSuccessPerS: Math.round(finished.filter((f) => f >= warm && f < windowEnd).length / ((windowEnd - warm) / 1000)),
    successPerSecond: perSecond(finished, t0).map((x) => x.n),
    slotsRun: inWindow.length,
    slotsExpected: TASKS * SECONDS,
    backlogGrowthPerS: slopePerSecond(windowSamples.map((s) => ({ tMs: s.t, value: s.backlog }))),
    backlogAtStop: windowSamples.at(-1)?.backlog ?? null,
  };
});
