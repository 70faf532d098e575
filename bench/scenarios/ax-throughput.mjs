/**
 * Issue #4: broker throughput PENDING → SUCCESS. N instances of no-op HTTP tasks are already
 * PENDING and due (an offered load above any rate: everything is waiting) when B brokers start
 * next to 2 real workers. Reports the sustained SUCCESS rate (middle 80 % of completions) and
 * the overall rate (N / time from the brokers being ready to the last SUCCESS).
 *
 *   node bench/scenarios/ax-throughput.mjs --instances 20000 --brokers 1 [--profile dir] [--mysql-digest 1G] [--out f.json]
 *
 * `--profile dir` runs the brokers and workers with `--cpu-prof` (one sub-directory per service).
 * `--mysql-digest <buffer pool>` runs the round on a private MariaDB logging every statement and
 * reports the run's statements (brokers ready to all done) grouped by shape: how many statements
 * a job costs, and which (compare digests with digests only: another server).
 */
import { countByState, createAxRound, insertDueInstances, insertTasks, instanceRows, storagePerInstance } from '../lib/ax-stack.mjs';
import { readFileSync } from 'node:fs';
import { args, log, onCleanup, runScenario, sleep } from '../lib/harness.mjs';
import { checkBufferPool, openSlowLogWindow, slowLogArgs, startPrivateMariaDb } from '../lib/private-mariadb.mjs';
import { digestSlowLog } from '../lib/slow-log-digest.mjs';
import { slotKey } from '../lib/keys.mjs';
import { startSink } from '../lib/sink.mjs';
import { cpuSecondsBetween } from '../lib/proc-cpu.mjs';
import { exactlyOnce, summarize, sustainedRate } from '../lib/stats.mjs';

const a = args();
const INSTANCES = Number(a.instances ?? 20_000);
const TASKS = Number(a.tasks ?? 500);
const BROKERS = Number(a.brokers ?? 1);
const WORKERS = Number(a.workers ?? 2);
const WAIT_S = Number(a['wait-s'] ?? 40);
const PROFILE_DIR = a.profile;
const DIGEST_POOL = a['mysql-digest'] === undefined ? null : checkBufferPool(a['mysql-digest'], 'mysql-digest');
const SLOW_LOG = 'tput-slow.log';

await runScenario(async () => {
  const sink = await startSink();
  onCleanup(() => sink.close());
  const server = DIGEST_POOL
    ? await startPrivateMariaDb({ bufferPool: DIGEST_POOL, extraArgs: slowLogArgs(SLOW_LOG) })
    : null;
  const round = await createAxRound('tput', server ? { serverUrl: server.url } : {});
  const pool = round.db.pool;
  const names = await insertTasks(pool, { count: TASKS, prefix: 'tput', schedule: { type: 'none' }, url: sink.url });
  const expected = (await insertDueInstances(pool, INSTANCES)).map((s) => slotKey(s.name, s.atMs, 1));
  log(`${expected.length} PENDING instances of ${names.length} tasks; starting ${WORKERS} workers, then ${BROKERS} broker(s)`);
  await round.start('worker', WORKERS, { profileDir: PROFILE_DIR });
  await sleep(1_000); // the workers' first heartbeat lands in the registry
  // The run's statements are told apart by rotating the slow log around it.
  const slowLog = server ? await openSlowLogWindow(pool, SLOW_LOG) : null;
  await round.start('broker', BROKERS, { profileDir: PROFILE_DIR });
  const startedMs = Date.now();
  const cpuBefore = round.cpuSnapshot();
  let doneMs = null;
  let states = {};
  // The sink sees every call: wait on it first, so that polling the database (a GROUP BY over
  // every row) does not load the MariaDB being measured while the jobs run.
  while (Date.now() < startedMs + WAIT_S * 1_000 && sink.counts.size < expected.length) await sleep(50);
  while (Date.now() < startedMs + WAIT_S * 1_000) {
    states = await countByState(pool);
    const final = (states.SUCCESS ?? 0) + (states.FAILED ?? 0) + (states.CANCELED ?? 0);
    if (final >= expected.length) {
      doneMs = Date.now() - startedMs;
      break;
    }
    await sleep(50);
  }
  const cpuSeconds = cpuSecondsBetween(cpuBefore, round.cpuSnapshot());
  const cpuWindowS = (Date.now() - startedMs) / 1000;
  const slowLogPath = slowLog === null ? null : await slowLog.end();
  await sleep(500);
  await round.stop(undefined, 15_000);
  const mysqlDigest = slowLogPath === null ? undefined : { bufferPool: DIGEST_POOL, ...digestSlowLog(readFileSync(slowLogPath, 'utf8'), 40) };
  const rows = await instanceRows(pool);
  const ended = rows.filter((r) => r.state === 'SUCCESS' && r.endedMs !== null).map((r) => r.endedMs);
  const lastEnd = ended.length > 0 ? Math.max(...ended) : null;
  let duplicateCalls = 0;
  for (const n of sink.counts.values()) if (n > 1) duplicateCalls += n - 1;
  const successKeys = rows.filter((r) => r.state === 'SUCCESS').map((r) => slotKey(r.taskName, r.expectedMs, r.runNo));
  const executions = exactlyOnce(successKeys, new Map(successKeys.map((k) => [k, sink.counts.get(k) ?? 0])));
  const storage = await storagePerInstance(pool, expected.length);
  log(`MySQL: ${storage.bytesPerInstance} bytes per instance (${Object.entries(storage.byTable).map(([t, b]) => `${t} ${b}`).join(', ')})`);
  return {
    status: doneMs === null ? 'timeout' : 'ok',
    system: 'ax',
    instances: expected.length,
    topology: { brokers: BROKERS, workers: WORKERS },
    succeeded: ended.length,
    finalStates: states,
    allDoneMs: doneMs,
    sustainedPerS: sustainedRate(ended),
    overallPerS: lastEnd === null ? null : Math.round((ended.length / Math.max(1, lastEnd - startedMs)) * 1000),
    cpu: { windowS: Math.round(cpuWindowS * 10) / 10, seconds: cpuSeconds },
    completedAfterStartMs: summarize(rows.filter((r) => r.endLag !== null).map((r) => r.endedMs - startedMs)),
    executions: { ...executions, duplicates: duplicateCalls },
    storage,
    ...(mysqlDigest === undefined ? {} : { mysqlDigest }),
  };
});
