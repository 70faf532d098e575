/**
 * The BullMQ peer's worker process: a BullMQ Worker that makes the same no-op HTTP call as an ax
 * worker (POST JSON with `Idempotency-Key: <scheduler id>:<expected time>:1`) and records, per
 * job, its expected time (the job scheduler's slot), when it was picked up and when it
 * finished. On SIGTERM it closes the worker (finishing active jobs) and writes the records.
 *
 * `--job noop` is the in-process peer (#24): the job is an async function that returns at once,
 * the way a Node team runs BullMQ; no HTTP call, so nothing outside sees the jobs: the process
 * prints `completed <n>` whenever its count changed (at most every 100 ms) for the scenario
 * to tell when the burst is done.
 *
 *   node bench/peer/bullmq-worker.mjs --queue q --prefix p --concurrency 256 [--job http|noop] --url U --out f.json
 */
import { writeFileSync } from 'node:fs';
import { Worker } from 'bullmq';

const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const url = opt('url');
const out = opt('out');
const jobKind = opt('job') ?? 'http';
if (jobKind !== 'http' && jobKind !== 'noop') throw new Error(`--job ${jobKind}: http or noop`);
const records = [];

const noop = async () => ({ success: true });
const worker = new Worker(
  opt('queue'),
  jobKind === 'noop' ? noop : async (job) => {
    const expectedMs = Number(job.opts.prevMillis ?? String(job.id).split(':').at(-1));
    const body = JSON.stringify({ jobId: job.id, taskName: job.repeatJobKey, expectedTime: expectedMs, data: job.data });
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': `${job.repeatJobKey}:${new Date(expectedMs).toISOString()}:1`,
      },
      body,
    });
    const result = await res.json();
    if (!res.ok || result.success !== true) throw new Error(`endpoint answered ${res.status}`);
    return result;
  },
  {
    connection: { host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null },
    prefix: opt('prefix'),
    concurrency: Number(opt('concurrency') ?? 256),
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
  },
);
worker.on('completed', (job) => {
  const expectedMs = Number(job.opts.prevMillis ?? String(job.id).split(':').at(-1));
  records.push([job.repeatJobKey, expectedMs, job.processedOn, job.finishedOn ?? Date.now()]);
});
let failed = 0;
worker.on('failed', () => {
  failed += 1;
});
worker.on('error', (error) => process.stderr.write(`bullmq worker error: ${error.message}\n`));
await worker.waitUntilReady();
process.stdout.write('ready\n');
if (jobKind === 'noop') {
  let said = 0;
  setInterval(() => {
    if (records.length === said) return;
    said = records.length;
    process.stdout.write(`completed ${said}\n`);
  }, 100).unref();
}

let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  void worker
    .close()
    .catch((error) => process.stderr.write(`close failed: ${error instanceof Error ? error.message : String(error)}\n`))
    .finally(() => {
      if (out) writeFileSync(out, JSON.stringify({ failed, records }));
      process.exit(0);
    });
});
