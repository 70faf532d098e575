// Worker CPU per job: `pnpm build && node bench/worker-throughput.mjs [--jobs N] [--batch K]
// [--window W] [--profile dir]` (real RabbitMQ and Redis; one worker process, no broker).
//
// The driver plays the broker: it publishes no-op HTTP jobs to one worker in dispatch messages
// of K items (default 64, about what a broker sends under load), keeps W items (default 256,
// the bench stack's slots) in flight, and counts the worker's results. It reports the worker's
// own CPU (utime + stime from /proc), its read/write system calls per job and the wall rate.
// The driver, the endpoint and the servers are not counted, so the figure is the worker's alone:
// the number to cut when the dispatch bench (#4) shows the worker as the largest share.
//
// `--profile dir` runs the worker with `--cpu-prof` into dir (the worker is alone on its core
// most of the time, so the profile's self times are close to CPU time). `--worker file` runs
// another build's `main.js` (e.g. a copy of the previous `dist/` inside services/worker, so
// that its imports resolve), to compare builds on the same machine.
//
// HTTP jobs print (the request line, the status line, the body: DESIGN §11), so their output
// is shipped to `<ns>.logs` too; the figure includes that. `logMessages` and `logBytesPerJob` count
// what the worker published there (a queue the driver drains).
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { encodeMessage } from '../packages/core/dist/index.js';
import { benchDispatchItem, openWorkerDriver } from './lib/lone-worker.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const JOBS = Number(arg('jobs', 20_000));
const BATCH = Number(arg('batch', 64));
const WINDOW = Number(arg('window', 256));
const PROFILE_DIR = arg('profile', undefined);
const WORKER_MAIN = arg('worker', undefined);
const WORKER_ID = 'bench-tput';
const TIME_LIMIT_MS = 120_000;

let done = 0;
let outcomesOk = 0;
let onProgress = () => {};
const driver = await openWorkerDriver((message) => {
  if (message.kind !== 'result') return;
  for (const item of message.items) {
    done += 1;
    if (item.outcome === 'SUCCESS') outcomesOk += 1;
  }
  onProgress();
});

// Job output: drained (as the brokers would) and counted, not parsed: the driver shares the
// machine (and its process with the endpoint), and validating every chunk would slow the
// endpoint, hence the worker's batches, and so inflate the worker's figure.
let logMessages = 0;
let logBytes = 0;
const logsConsumer = await driver.bus.consume(
  driver.topology.logsQueue,
  (message) => {
    logMessages += 1;
    logBytes += message.body.length;
    return Promise.resolve('ack');
  },
  { prefetch: 200 },
);

const endpoint = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': 16 }).end('{"success":true}'));
});
endpoint.keepAliveTimeout = 30_000;
await new Promise((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
const endpointUrl = `http://127.0.0.1:${endpoint.address().port}/noop`;

const cpuTicks = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime
};
const TICK_MS = 10; // USER_HZ = 100 on Linux
/** Read and write system calls so far (`/proc/<pid>/io`: syscr, syscw): sockets, SQLite, everything. */
const syscalls = (pid) => {
  const io = Object.fromEntries(readFileSync(`/proc/${pid}/io`, 'utf8').trim().split('\n').map((l) => l.split(': ')));
  return { reads: Number(io.syscr), writes: Number(io.syscw) };
};

let counter = 0;

let result;
try {
  const { child } = await driver.startWorker(
    WORKER_ID,
    { AX_WORKER_SLOTS: String(WINDOW), AX_WORKER_PREFETCH: '64', AX_HTTP_EXECUTOR_ALLOW: '127.0.0.1' },
    PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR] : [],
    ...(WORKER_MAIN ? [WORKER_MAIN] : []),
  );
  const publishBatch = () => {
    const n = Math.min(BATCH, JOBS - counter);
    const items = Array.from({ length: n }, () => benchDispatchItem(++counter, { type: 'http', url: endpointUrl, method: 'POST' }));
    return driver.bus.publish(driver.topology.dispatchExchange, driver.topology.workerRoutingKey(WORKER_ID), encodeMessage({ v: 1, kind: 'dispatch', workerId: WORKER_ID, items }));
  };
  const cpuBefore = cpuTicks(child.pid);
  const ioBefore = syscalls(child.pid);
  const startedMs = performance.now();
  await new Promise((resolve, reject) => {
    const limit = setTimeout(() => reject(new Error(`only ${done} of ${JOBS} results within ${TIME_LIMIT_MS} ms`)), TIME_LIMIT_MS);
    let publishing = false;
    const topUp = async () => {
      if (publishing) return;
      publishing = true;
      try {
        while (counter < JOBS && counter - done + BATCH <= WINDOW) await publishBatch();
      } catch (error) {
        reject(error);
      } finally {
        publishing = false;
      }
      if (done >= JOBS) {
        clearTimeout(limit);
        resolve();
      }
    };
    onProgress = () => void topUp();
    void topUp();
  });
  const wallMs = performance.now() - startedMs;
  const cpuMs = (cpuTicks(child.pid) - cpuBefore) * TICK_MS;
  const ioAfter = syscalls(child.pid);
  result = {
    jobs: JOBS,
    itemsPerMessage: BATCH,
    window: WINDOW,
    succeeded: outcomesOk,
    wallS: +(wallMs / 1000).toFixed(2),
    jobsPerS: Math.round(JOBS / (wallMs / 1000)),
    workerCpuS: +(cpuMs / 1000).toFixed(2),
    workerCpuMsPerJob: +(cpuMs / JOBS).toFixed(3),
    readCallsPerJob: +((ioAfter.reads - ioBefore.reads) / JOBS).toFixed(2),
    writeCallsPerJob: +((ioAfter.writes - ioBefore.writes) / JOBS).toFixed(2),
    logMessages,
    logBytesPerJob: Math.round(logBytes / JOBS),
  };
} finally {
  await logsConsumer.cancel();
  await driver.close();
  await new Promise((resolve) => endpoint.close(resolve));
}
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
