/**
 * Job output (#19): what capturing and storing every attempt's stdout/stderr costs. N shell
 * instances are PENDING and due when 1 broker starts next to 2 workers (as ax-throughput.mjs);
 * each job prints `--print-bytes` bytes to stdout (0: it prints nothing). Reports the sustained
 * SUCCESS rate, the CPU of every process per instance, and the log stored (bytes in
 * `job_log_chunk` per second of the run) — the goals: jobs that print nothing keep their
 * throughput within 5 % of the code before job output (`pnpm bench --baseline <commit>` runs
 * the same script against it), and 10 KB jobs report instances/s, MB/s and CPU.
 *
 *   node bench/scenarios/ax-output.mjs --instances 3000 --print-bytes 10240 [--out f.json]
 */
import { countByState, createAxRound, insertDueInstances, insertTasks, instanceRows } from '../lib/ax-stack.mjs';
import { args, log, runScenario, sleep } from '../lib/harness.mjs';
import { cpuSecondsBetween } from '../lib/proc-cpu.mjs';
import { sustainedRate } from '../lib/stats.mjs';

const a = args();
const INSTANCES = Number(a.instances ?? 3_000);
const TASKS = Number(a.tasks ?? 100);
const PRINT_BYTES = Number(a['print-bytes'] ?? 0);
const WAIT_S = Number(a['wait-s'] ?? 60);
/** Shell jobs: a few slots per core keep both cores busy without a fork storm. */
const WORKER_ENV = { AX_WORKER_SLOTS: '16', AX_WORKER_PREFETCH: '16' };

/** The job: one `sh` either way, so the two variants differ only by what they print. */
function command(bytes) {
  return bytes > 0 ? ['sh', '-c', `printf '%${bytes - 1}s\\n' x`] : ['sh', '-c', ':'];
}

/** Bytes of output stored, or null where the schema has no job output (a baseline from before #19). */
async function storedLogBytes(pool) {
  try {
    const [rows] = await pool.query('SELECT COALESCE(SUM(byte_len), 0) AS n, COUNT(*) AS chunks FROM job_log_chunk');
    return { bytes: Number(rows[0].n), chunks: Number(rows[0].chunks) };
  } catch {
    return null;
  }
}

await runScenario(async () => {
  const round = await createAxRound('output');
  const pool = round.db.pool;
  const names = await insertTasks(pool, { count: TASKS, prefix: 'out', schedule: { type: 'none' }, exec: { type: 'shell', command: command(PRINT_BYTES) } });
  const inserted = (await insertDueInstances(pool, INSTANCES)).length;
  log(`${inserted} PENDING shell instances of ${names.length} tasks printing ${PRINT_BYTES} bytes each; starting 2 workers, then 1 broker`);
  await round.start('worker', 2, { extraEnv: WORKER_ENV });
  await sleep(1_000);
  await round.start('broker', 1);
  const startedMs = Date.now();
  const cpuBefore = round.cpuSnapshot();
  let doneMs = null;
  let states = {};
  while (Date.now() < startedMs + WAIT_S * 1_000) {
    states = await countByState(pool);
    if ((states.SUCCESS ?? 0) + (states.FAILED ?? 0) + (states.CANCELED ?? 0) >= inserted) {
      doneMs = Date.now() - startedMs;
      break;
    }
    await sleep(250);
  }
  // The last chunks reach the store after the results (their own queue): wait for them.
  let stored = await storedLogBytes(pool);
  for (let i = 0; stored !== null && PRINT_BYTES > 0 && stored.bytes < inserted * PRINT_BYTES && i < 40; i++) {
    await sleep(250);
    stored = await storedLogBytes(pool);
  }
  const windowMs = Date.now() - startedMs;
  const cpuSeconds = cpuSecondsBetween(cpuBefore, round.cpuSnapshot());
  await round.stop(undefined, 15_000);
  const rows = await instanceRows(pool);
  const ended = rows.filter((r) => r.state === 'SUCCESS' && r.endedMs !== null).map((r) => r.endedMs);
  const logMbPerS = stored === null ? null : Math.round((stored.bytes / 1e6 / (windowMs / 1000)) * 100) / 100;
  log(`${ended.length} SUCCESS in ${doneMs ?? '—'} ms; sustained ${sustainedRate(ended) ?? '—'}/s; log stored ${stored === null ? 'n/a (no job output in this schema)' : `${stored.bytes} bytes in ${stored.chunks} chunks, ${logMbPerS} MB/s`}`);
  return {
    status: doneMs === null ? 'timeout' : 'ok',
    system: 'ax',
    printBytes: PRINT_BYTES,
    instances: inserted,
    succeeded: ended.length,
    finalStates: states,
    allDoneMs: doneMs,
    sustainedPerS: sustainedRate(ended),
    logStored: stored,
    logMbPerS,
    cpu: { windowS: Math.round((windowMs / 1000) * 10) / 10, seconds: cpuSeconds },
  };
});
