/**
 * ax burst: N tasks with the same 6-field cron due at the same second, no-op HTTP executor.
 * 1 scheduler, 1 broker, 2 workers (real processes). Measures the time from the fire time until
 * all N instances are SUCCESS, fire lag (expected → instance row created, database clock),
 * start lag (expected → the sink received the call), duplicates and missing.
 *
 * `--settings defaults --slots 100` runs every service with its own defaults (none of AX_BENCH_ENV's
 * tuned settings) except the worker slots: what a user gets out of the box (#24).
 *
 * `--tracing on` turns OpenTelemetry on in every service (#48: the standard OTEL_EXPORTER_OTLP_*
 * variables, pointed at a collector the scenario starts, bench/lib/otlp-sink.mjs) and reports
 * the spans it received: beside the same run without it, the cost of tracing on.
 *
 *   node bench/scenarios/ax-burst.mjs --tasks 2000 [--brokers 1] [--settings bench|defaults] [--slots 100] [--tracing on|off] [--profile <dir>] [--out f.json]
 */
import { rmSync } from 'node:fs';
import { countByState, createAxRound, cronAt, insertTasks, instanceRows, missingDetail } from '../lib/ax-stack.mjs';
import { args, log, onCleanup, runScenario, sleep } from '../lib/harness.mjs';
import { slotKey } from '../lib/keys.mjs';
import { profileClockUs } from '../lib/cpuprofile.mjs';
import { summarizeProfiles } from '../lib/profiles.mjs';
import { startOtlpSink } from '../lib/otlp-sink.mjs';
import { startSink } from '../lib/sink.mjs';
import { cpuSecondsBetween } from '../lib/proc-cpu.mjs';
import { exactlyOnce, summarize } from '../lib/stats.mjs';

const a = args();
const TASKS = Number(a.tasks ?? 2_000);
const BROKERS = Number(a.brokers ?? 1);
const WORKERS = Number(a.workers ?? 2);
const WAIT_S = Number(a['wait-s'] ?? 60);
const PROFILE = a.profile;
const SETTINGS = a.settings ?? 'bench';
if (SETTINGS !== 'bench' && SETTINGS !== 'defaults') throw new Error(`--settings ${SETTINGS}: bench or defaults`);
const DEFAULTS = SETTINGS === 'defaults';
const SLOTS = a.slots === undefined ? undefined : String(a.slots);
const TRACING = a.tracing ?? 'off';
if (TRACING !== 'on' && TRACING !== 'off') throw new Error(`--tracing ${TRACING}: on or off`);
const OTLP = TRACING === 'on';

/**
 * Where each job's time went (#24), per first execution, all on this machine's clock: waiting
 * for a claim (expected time → `dispatched_at`), delivery (→ the sink's call: publish, the
 * worker's accept, outbox write and AMQP ack, its slot), and the way back (call → the instance's
 * `ended_at`: the answer, the result through the worker's outbox, the broker applying it).
 */
async function phases(pool, sink) {
  const [rows] = await pool.query(
    `SELECT i.task_name, i.expected_time, UNIX_TIMESTAMP(e.dispatched_at) * 1000 AS dispatched_ms,
            UNIX_TIMESTAMP(i.ended_at) * 1000 AS ended_ms
       FROM task_execution e JOIN task_instance i ON i.id = e.instance_id
      WHERE e.run_no = 1 AND e.attempt = 1 AND i.state = 'SUCCESS'`,
  );
  const claim = [];
  const delivery = [];
  const back = [];
  for (const r of rows) {
    const expectedMs = r.expected_time.getTime();
    const calledMs = sink.firstAt.get(slotKey(r.task_name, expectedMs, 1));
    const dispatchedMs = Number(r.dispatched_ms);
    claim.push(dispatchedMs - expectedMs);
    if (calledMs === undefined) continue;
    delivery.push(calledMs - dispatchedMs);
    back.push(Number(r.ended_ms) - calledMs);
  }
  return { claimWaitMs: summarize(claim), deliveryMs: summarize(delivery), callToAppliedMs: summarize(back) };
}

await runScenario(async () => {
  const sink = await startSink();
  onCleanup(() => sink.close());
  const round = await createAxRound('burst');
  if (PROFILE) rmSync(PROFILE, { recursive: true, force: true });
  const otlp = OTLP ? await startOtlpSink() : null;
  if (otlp !== null) onCleanup(() => otlp.close());
  const tracing = otlp === null ? {} : otlp.env;
  const settings = { profileDir: PROFILE, serviceDefaults: DEFAULTS, extraEnv: tracing };
  await round.start('worker', WORKERS, { ...settings, extraEnv: { ...tracing, ...(SLOTS === undefined ? {} : { AX_WORKER_SLOTS: SLOTS }) } });
  await round.start('broker', BROKERS, settings);
  const leadMs = 8_000 + TASKS; // 10,000 tasks → 18 s to insert them and start the scheduler
  const dueMs = Math.ceil((Date.now() + leadMs) / 1000) * 1000;
  const names = await insertTasks(round.db.pool, {
    count: TASKS,
    prefix: 'burst',
    schedule: { type: 'cron', expr: cronAt(dueMs), timezone: 'UTC' },
    url: sink.url,
  });
  await round.start('scheduler', 1, settings);
  const readyBeforeDueMs = dueMs - Date.now();
  log(`${TASKS} tasks due at ${new Date(dueMs).toISOString()}; stack ready ${readyBeforeDueMs} ms before`);
  if (readyBeforeDueMs < 1_000) throw new Error(`stack became ready only ${readyBeforeDueMs} ms before the fire time`);

  // The profiles are summarized over the burst only: from 0.5 s before the fire time to 0.5 s
  // after the last SUCCESS, on the monotonic clock the .cpuprofile files use (process.hrtime).
  const profileFromUs = profileClockUs() + (dueMs - 500 - Date.now()) * 1_000;
  await sleep(dueMs - Date.now());
  const cpuBefore = round.cpuSnapshot();
  const samples = [];
  let allSuccessPolledMs = null;
  let states = {};
  while (Date.now() < dueMs + WAIT_S * 1_000) {
    states = await countByState(round.db.pool);
    const t = Date.now() - dueMs;
    samples.push({ t, ...states });
    const final = (states.SUCCESS ?? 0) + (states.FAILED ?? 0) + (states.CANCELED ?? 0);
    if (final >= TASKS) {
      if ((states.SUCCESS ?? 0) >= TASKS) allSuccessPolledMs = t;
      break;
    }
    await sleep(100);
  }
  const timedOut = allSuccessPolledMs === null;
  const profileToUs = profileClockUs() + 500_000;
  const cpuSeconds = cpuSecondsBetween(cpuBefore, round.cpuSnapshot());
  const cpuWindowS = (Date.now() - dueMs) / 1000;
  await sleep(1_000); // late duplicate calls would arrive now
  await round.stop(undefined, 20_000); // graceful: --cpu-prof writes at exit

  const rows = await instanceRows(round.db.pool);
  const success = rows.filter((r) => r.state === 'SUCCESS');
  const instancesPerSlot = new Map();
  for (const r of rows) {
    const k = slotKey(r.taskName, r.expectedMs, 1);
    instancesPerSlot.set(k, (instancesPerSlot.get(k) ?? 0) + 1);
  }
  const expected = names.map((n) => slotKey(n, dueMs, 1));
  const endLags = success.map((r) => r.endLag).filter((x) => x !== null);
  const instances = exactlyOnce(expected, instancesPerSlot);
  const executions = exactlyOnce(expected, sink.counts);
  const problems = instances.missing + instances.duplicates + executions.missing + executions.duplicates > 0;
  return {
    status: timedOut ? 'timeout' : 'ok',
    system: 'ax',
    tasks: TASKS,
    topology: { schedulers: 1, brokers: BROKERS, workers: WORKERS, slots: SLOTS ?? null },
    settings: DEFAULTS ? 'service defaults' : 'bench',
    tracing: otlp === null ? 'off' : { exported: otlp.summary() },
    dueAt: new Date(dueMs).toISOString(),
    stackReadyBeforeDueMs: readyBeforeDueMs,
    allSuccessMs: endLags.length === TASKS ? Math.max(...endLags) : null,
    allSuccessPolledMs,
    finalStates: states,
    fireLagMs: summarize(rows.map((r) => r.fireLag)),
    startLagMs: summarize(sink.startLags()),
    earlyStarts: sink.startLags().filter((lag) => lag < 0).length,
    endLagMs: summarize(endLags),
    instances,
    executions,
    ...(problems
      ? { missingDetail: await missingDetail(round.db.pool, expected, instancesPerSlot), processOutput: round.outputTail() }
      : {}),
    phasesMs: await phases(round.db.pool, sink),
    sinkCalls: sink.total,
    samples,
    cpu: { windowS: Math.round(cpuWindowS * 10) / 10, seconds: cpuSeconds },
    profileWindowMs: PROFILE ? Math.round((profileToUs - profileFromUs) / 1000) : undefined,
    profiles: PROFILE ? summarizeProfiles(PROFILE, 10, { fromUs: profileFromUs, toUs: profileToUs }) : undefined,
  };
});
