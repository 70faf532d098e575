/**
 * ax steady: T tasks firing every second (`* * * * * *`) for D seconds, no-op HTTP executor,
 * 1 scheduler, 1 broker, 2 workers. Measures the sustained SUCCESS rate, fire and start lag,
 * the backlog (instances not yet final) over time and its growth, then lets the backlog drain
 * for at most `--drain-s` after the scheduler stops.
 *
 * `--profile <dir>` runs every process with `--cpu-prof` into `<dir>/<service>/` and reports
 * their self time over the firing window (the profiler costs a few per cent of CPU: compare
 * profiled runs with profiled runs only).
 *
 * `--mysql-digest <buffer pool>` (e.g. `1G`) runs the stack on a private MariaDB with that InnoDB
 * buffer pool whose slow log records every statement (`long_query_time=0`), and reports those of
 * the firing window grouped by shape (slow-log-digest.mjs): where MariaDB's time goes. Its server
 * is not the shared one of the other runs: compare digests with digests only.
 *
 *   node bench/scenarios/ax-steady.mjs --tasks 4000 --seconds 60 [--drain-s 15] [--profile <dir>]
 *        [--mysql-digest 1G] [--out f.json]
 */
import { readFileSync, rmSync } from 'node:fs';
import { countByState, createAxRound, dueBacklog, insertTasks, instanceRows, missingDetail } from '../lib/ax-stack.mjs';
import { args, log, onCleanup, runScenario, sleep } from '../lib/harness.mjs';
import { slotKey } from '../lib/keys.mjs';
import { startSink } from '../lib/sink.mjs';
import { cpuSecondsBetween } from '../lib/proc-cpu.mjs';
import { checkBufferPool, openSlowLogWindow, slowLogArgs, startPrivateMariaDb } from '../lib/private-mariadb.mjs';
import { profileClockUs } from '../lib/cpuprofile.mjs';
import { summarizeProfiles } from '../lib/profiles.mjs';
import { digestSlowLog } from '../lib/slow-log-digest.mjs';
import { exactlyOnce, perSecond, slopePerSecond, summarize } from '../lib/stats.mjs';

const a = args();
const TASKS = Number(a.tasks ?? 4_000);
const SECONDS = Number(a.seconds ?? 60);
const DRAIN_S = Number(a['drain-s'] ?? 15);
const BROKERS = Number(a.brokers ?? 1);
const WORKERS = Number(a.workers ?? 2);
const PROFILE = a.profile;
const DIGEST_POOL = a['mysql-digest'] === undefined ? null : checkBufferPool(a['mysql-digest'], 'mysql-digest');
/** The private server's slow log, in its datadir; rotated at the window's start and end (FLUSH SLOW LOGS). */
const SLOW_LOG = 'steady-slow.log';

const FINAL = ['SUCCESS', 'FAILED', 'CANCELED'];
const backlogOf = (s) => Object.entries(s).reduce((n, [k, v]) => (FINAL.includes(k) ? n : n + v), 0);

await runScenario(async () => {
  const sink = await startSink();
  onCleanup(() => sink.close());
  const server = DIGEST_POOL
    ? await startPrivateMariaDb({ bufferPool: DIGEST_POOL, extraArgs: slowLogArgs(SLOW_LOG) })
    : null;
  const round = await createAxRound('steady', server ? { serverUrl: server.url } : {});
  if (PROFILE) rmSync(PROFILE, { recursive: true, force: true });
  const profiled = { profileDir: PROFILE };
  await round.start('worker', WORKERS, profiled);
  await round.start('broker', BROKERS, profiled);
  const names = await insertTasks(round.db.pool, {
    count: TASKS,
    prefix: 'steady',
    schedule: { type: 'cron', expr: '* * * * * *', timezone: 'UTC' },
    url: sink.url,
  });
  await round.start('scheduler', 1, profiled);
  // The window starts at the second second after the scheduler is ready (its first slots
  // may be misfire catch-up) and ends when the scheduler is stopped.
  const t0 = Math.ceil(Date.now() / 1000) * 1000 + 2_000;
  log(`${TASKS} tasks every second; window ${new Date(t0).toISOString()} + ${SECONDS} s`);
  // The profiles are summarized over the firing window, on the monotonic clock of .cpuprofile files.
  const profileFromUs = profileClockUs() + (t0 - Date.now()) * 1_000;
  await sleep(t0 - Date.now());
  // The window's statements are told apart by rotating the slow log around it.
  const slowLog = server ? await openSlowLogWindow(round.db.pool, SLOW_LOG) : null;
  const cpuBefore = round.cpuSnapshot();
  const samples = [];
  // Backlog = instances due and not final (slots created ahead of their time are not counted).
  // In the window only that one count (a range of the claim index): the count by state read the
  // whole table every second, 2.8 % of the statement time of MariaDB, the server the run is
  // bound by (its slow log, 2026-12-06 12:05; both counts 5.7 %). BullMQ's peer samples with
  // O(1) Redis counts. `calls` is what the sink has received; the drain counts every state.
  const sample = async ({ byState = false } = {}) => {
    const [[due], s] = await Promise.all([dueBacklog(round.db.pool), byState ? countByState(round.db.pool) : null]);
    samples.push({ t: Date.now() - t0, backlog: due.backlog, pending: due.pending, calls: sink.total, ...(s ? { success: s.SUCCESS ?? 0, notFinal: backlogOf(s) } : {}) });
  };
  while (Date.now() < t0 + SECONDS * 1_000) {
    const next = Date.now() + 1_000;
    await sample();
    await sleep(Math.max(0, next - Date.now()));
  }
  const cpuSeconds = cpuSecondsBetween(cpuBefore, round.cpuSnapshot());
  const cpuWindowS = (Date.now() - t0) / 1000;
  const profileToUs = profileClockUs();
  // Only the rename here: the window's log is read once the stack has stopped.
  const slowLogPath = slowLog === null ? null : await slowLog.end();
  const schedulerStoppedMs = Date.now();
  await round.stop('scheduler', 15_000);
  const stopMs = Date.now();
  log(`scheduler stopped; draining for at most ${DRAIN_S} s`);
  let drainedMs = null;
  while (Date.now() < stopMs + DRAIN_S * 1_000) {
    await sample({ byState: true });
    if (samples.at(-1).notFinal === 0) {
      drainedMs = Date.now() - stopMs;
      break;
    }
    await sleep(500);
  }
  await sleep(500);
  await round.stop(undefined, 15_000);
  const mysqlDigest = slowLogPath === null ? undefined : { bufferPool: DIGEST_POOL, ...digestSlowLog(readFileSync(slowLogPath, 'utf8'), 12) };

  const rows = await instanceRows(round.db.pool, `expected_time >= '${new Date(t0).toISOString().slice(0, 23).replace('T', ' ')}'`);
  const windowEnd = t0 + SECONDS * 1_000;
  const inWindow = rows.filter((r) => r.expectedMs < windowEnd);
  const success = rows.filter((r) => r.state === 'SUCCESS' && r.endedMs !== null);
  // Sustained completion rate: SUCCESS ended per second inside the firing window, after a 5 s warm-up.
  const warmMs = t0 + 5_000;
  const endedInWindow = success.filter((r) => r.endedMs >= warmMs && r.endedMs < windowEnd).length;
  const sustainedPerS = Math.round(endedInWindow / ((windowEnd - warmMs) / 1000));
  // Slots every task must have: whole seconds from t0 up to the fire-lock TTL (+2 s) before the
  // scheduler stopped. A slot whose insert failed is re-created by the next refill re-scan of
  // [watermark, now − lock TTL] (R2), so a hole younger than that at the stop is not (yet) a
  // loss: those are counted apart as `unrepairedAtStop`.
  const repairMs = Number(process.env.AX_FIRE_LOCK_TTL_MS ?? 30_000) + 2_000;
  const strictEnd = Math.min(windowEnd - 2_000, schedulerStoppedMs - repairMs);
  const expected = [];
  const recent = [];
  for (let t = t0; t < windowEnd - 2_000; t += 1_000) for (const n of names) (t < strictEnd ? expected : recent).push(slotKey(n, t, 1));
  const instancesPerSlot = new Map();
  for (const r of rows) {
    if (r.expectedMs >= windowEnd - 2_000) continue;
    const k = slotKey(r.taskName, r.expectedMs, 1);
    instancesPerSlot.set(k, (instancesPerSlot.get(k) ?? 0) + 1);
  }
  const slotCheck = exactlyOnce(expected, new Map([...instancesPerSlot].filter(([k]) => Date.parse(k.split(':').slice(1, -1).join(':')) < strictEnd)));
  const recentCheck = exactlyOnce(recent, new Map([...instancesPerSlot].filter(([k]) => Date.parse(k.split(':').slice(1, -1).join(':')) >= strictEnd)));
  const holes = slotCheck.missing + recentCheck.missing;
  const missing = holes > 0 ? await missingDetail(round.db.pool, [...expected, ...recent], instancesPerSlot) : null;
  const successKeys = success.map((r) => slotKey(r.taskName, r.expectedMs, r.runNo));
  const executions = exactlyOnce(successKeys, new Map(successKeys.map((k) => [k, sink.counts.get(k) ?? 0])));
  let duplicateCalls = 0;
  for (const n of sink.counts.values()) if (n > 1) duplicateCalls += n - 1;
  const windowSamples = samples.filter((s) => s.t <= SECONDS * 1_000);
  const startLags = sink.startLags(t0, windowEnd);
  return {
    status: 'ok',
    system: 'ax',
    tasks: TASKS,
    seconds: SECONDS,
    offeredPerS: TASKS,
    topology: { schedulers: 1, brokers: BROKERS, workers: WORKERS },
    firedInWindow: inWindow.length,
    firedPerS: Math.round(inWindow.length / SECONDS),
    sustainedSuccessPerS: sustainedPerS,
    successPerSecond: perSecond(success.map((r) => r.endedMs), t0).map((x) => x.n),
    fireLagMs: summarize(inWindow.map((r) => r.fireLag)),
    startLagMs: summarize(startLags),
    earlyStarts: startLags.filter((lag) => lag < 0).length,
    endLagMs: summarize(success.map((r) => r.endLag)),
    cpu: { windowS: Math.round(cpuWindowS * 10) / 10, seconds: cpuSeconds },
    backlogGrowthPerS: slopePerSecond(windowSamples.map((s) => ({ tMs: s.t, value: s.backlog }))),
    backlogAtStop: windowSamples.at(-1)?.backlog ?? null,
    drainedAfterStopMs: drainedMs,
    samples,
    instances: { ...slotCheck, duplicates: slotCheck.duplicates + recentCheck.duplicates },
    checkedSeconds: Math.max(0, Math.round((strictEnd - t0) / 1000)),
    unrepairedAtStop: recentCheck.missing,
    ...(missing ? { missingDetail: missing, processOutput: round.outputTail() } : {}),
    executions: { ...executions, duplicates: duplicateCalls },
    sinkCalls: sink.total,
    ...(PROFILE ? { profiles: summarizeProfiles(PROFILE, 10, { fromUs: profileFromUs, toUs: profileToUs }) } : {}),
    ...(mysqlDigest ? { mysqlDigest } : {}),
  };
});
