/**
 * Retention purge while dispatching (#24): "a retention purge of 1,000,000 expired instances
 * while dispatching 1,000/s raises start lag p99 by ≤ 20 %".
 *
 * A private MariaDB (bench/lib/private-mariadb.mjs, `--buffer-pool` 2G, a temporary folder
 * removed at the end) with a Redis and RabbitMQ namespace of its own. Its database holds
 * `--expired` final instances of the load's own tasks that ended between `--days` + 1 and
 * `--days` + 61 days ago, with their executions, events, log chunks and ends
 * (`insertFinalInstances` of bench/lib/history-build.mjs, secondary indexes dropped during the
 * load and rebuilt after). The load is ax-steady's: `--rate` tasks `* * * * * *`, no-op HTTP to
 * the sink, 1 scheduler, 1 broker, 2 workers, the bench settings.
 *
 *   A. after `--warmup-s` (10) of load unmeasured, `--seconds`: the load alone. The scheduler
 *      runs with AX_RETENTION_DAYS=3650 (its passes find nothing to purge).
 *   B. the same load while the scheduler's own retention job purges: AX_RETENTION_DAYS=`--days`,
 *      AX_SCHEDULER_RETENTION_MS=`--period-ms` (1,000: a pass of up to 20 batches follows the end
 *      of the previous one a second later), the batch size its default (500). A scheduler reads
 *      its retention settings once at start, so phase B runs on a second scheduler started with
 *      retention on; once it answers /healthz the first is stopped (SIGTERM): a handoff without a
 *      gap in firing, as in a rolling deploy. `--gap-s` (3) seconds from the handoff belong to
 *      neither phase. B ends when every expired instance is purged or after `--seconds`.
 * Then the scheduler stops and the backlog may drain for `--drain-s`.
 *
 * Reported per phase: start lag (sink arrival − slot) p50/p99, the sustained SUCCESS rate; the
 * ratio p99 B / A (goal ≤ 1.20); the expired instances purged by the end of B (counted) and the
 * purge rate over B; each process's CPU in each phase, in cores (where the purge's cost lands);
 * exactly once from A's start to B's end, instances per slot and calls per slot (stats.mjs).
 * Stops by itself: at full size on 2 cores about 1 min of build, 10 + 60 + 3 + 60 s of load,
 * up to 15 s of drain.
 *
 *   node bench/scenarios/ax-purge.mjs [--expired 1000000] [--rate 1000] [--seconds 60] [--days 30]
 *        [--warmup-s 10] [--buffer-pool 2G] [--period-ms 1000] [--gap-s 3] [--drain-s 15] [--out f.json]
 */
import { DEFAULT_SCHEDULER_CONFIG } from '../../services/scheduler/dist/config.js';
import { createAxRound, dueBacklog, insertTasks, instanceRows, missingDetail } from '../lib/ax-stack.mjs';
import { args, log, onCleanup, runScenario, sleep } from '../lib/harness.mjs';
import { dropSecondaryIndexes, insertFinalInstances } from '../lib/history-build.mjs';
import { slotKey } from '../lib/keys.mjs';
import { cpuSecondsBetween } from '../lib/proc-cpu.mjs';
import { checkBufferPool, startPrivateMariaDb } from '../lib/private-mariadb.mjs';
import { startSink } from '../lib/sink.mjs';
import { exactlyOnce, summarize } from '../lib/stats.mjs';

/** The goal of #24: start lag p99 during the purge at most this many times the p99 without. */
const GOAL_P99_RATIO = 1.2;
/**
 * Phase A must keep up with the load for the ratio to measure the purge: SUCCESS/s at least this
 * share of the offered rate, and a backlog of at most 2 s of load in every sample. A stack already
 * behind without the purge has a p99 of its queue, not of the purge's cost.
 */
const KEPT_UP_SHARE = 0.95;
const INSTANCE_TABLES = ['task_instance', 'task_execution', 'event_log', 'job_log_chunk', 'job_log_end'];
/** Days the expired instances span, ending a day before the retention cutoff. */
const SPAN_DAYS = 60;

function parseOptions(a) {
  const number = (name, fallback, min) => {
    const v = a[name] === undefined ? fallback : Number(a[name]);
    if (!Number.isInteger(v) || v < min) throw new Error(`--${name} must be an integer ≥ ${min}, got ${a[name]}`);
    return v;
  };
  return {
    expired: number('expired', 1_000_000, 1),
    rate: number('rate', 1_000, 1),
    seconds: number('seconds', 60, 5),
    days: number('days', 30, 1),
    periodMs: number('period-ms', 1_000, 100),
    gapS: number('gap-s', 3, 0),
    warmupS: number('warmup-s', 10, 0),
    drainS: number('drain-s', 15, 0),
    bufferPool: checkBufferPool(a['buffer-pool'] ?? '2G'),
  };
}

let O;
try {
  O = parseOptions(args());
} catch (error) {
  process.stderr.write(`bench/scenarios/ax-purge.mjs: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}

const toSql = (ms) => new Date(ms).toISOString().slice(0, 23).replace('T', ' ');
/**
 * Expired instances purged so far, read cheaply each second: the expired ones have the ids
 * 1…`expired` in the order of their end, which is the purge's order, so the lowest id left tells
 * (to within a batch's few out-of-order ends) how many are gone, in one read of the primary key.
 * The scheduler's own counter (`ax_scheduler_purged_instances_total`) moves once a pass, 10,000
 * instances apart; a COUNT(*) of a million ids each second would be load of its own.
 */
const purgedSoFar = async (pool) => {
  const [[row]] = await pool.query('SELECT MIN(id) AS lo FROM task_instance');
  return Math.min(O.expired, Number(row.lo ?? O.expired + 1) - 1);
};
const expiredLeft = async (pool) => Number((await pool.query('SELECT COUNT(*) AS n FROM task_instance WHERE id <= ?', [O.expired]))[0][0].n);

/** The expired history: `O.expired` final instances spread over the tasks of `names` (ids 1…). */
async function buildExpired(pool, names) {
  const [[ids]] = await pool.query('SELECT MIN(id) AS lo, MAX(id) AS hi FROM task');
  if (Number(ids.lo) !== 1 || Number(ids.hi) !== names.length) throw new Error(`task ids ${ids.lo}..${ids.hi}: the build needs ids 1..${names.length}`);
  const toMs = Date.now() - (O.days + 1) * 86_400_000;
  const stepMs = Math.max(1, Math.floor((SPAN_DAYS * 86_400_000) / O.expired));
  const t0 = Date.now();
  const conn = await pool.getConnection();
  try {
    await conn.query("SET SESSION time_zone = '+00:00'");
    const rebuild = await dropSecondaryIndexes(conn, INSTANCE_TABLES);
    const figures = await insertFinalInstances(conn, {
      instances: O.expired,
      tasks: names.length,
      fromMs: toMs - stepMs * (O.expired - 1),
      stepMs,
      nameOf: (no) => `CONCAT('purge-', ${no} - 1)`, // insertTasks' names: purge-0 has id 1
    });
    const i0 = Date.now();
    await rebuild();
    figures.indexes = (Date.now() - i0) / 1000;
    for (const t of ['task', ...INSTANCE_TABLES]) await conn.query(`ANALYZE TABLE \`${t}\``);
    figures.totalS = Math.round((Date.now() - t0) / 100) / 10;
    return figures;
  } finally {
    conn.release();
  }
}

/**
 * Waits (at most 120 s) until InnoDB has written the build's dirty pages: a million rows and their
 * rebuilt indexes leave more than a GB to flush, and the server writing them (and checkpointing
 * the redo log) stalled every service's first 10-15 s of load, which phase A then measured.
 * Returns the seconds waited.
 */
async function flushDirtyPages(pool) {
  const t0 = Date.now();
  const [vars] = await pool.query(
    "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_max_dirty_pages_pct', 'innodb_io_capacity', 'innodb_io_capacity_max')",
  );
  const before = Object.fromEntries(vars.map((v) => [v.Variable_name, Number(v.Value)]));
  // io_capacity bounds the page cleaner's rate (default 200 pages/s: 8 minutes for a GB).
  await pool.query('SET GLOBAL innodb_io_capacity_max = 40000');
  await pool.query('SET GLOBAL innodb_io_capacity = 20000');
  await pool.query('SET GLOBAL innodb_max_dirty_pages_pct = 0');
  try {
    while (Date.now() - t0 < 120_000) {
      const [[{ Value: dirty }]] = await pool.query("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'");
      if (Number(dirty) < 1_000) break;
      await sleep(1_000);
    }
  } finally {
    await pool.query('SET GLOBAL innodb_max_dirty_pages_pct = ?', [before.innodb_max_dirty_pages_pct]);
    await pool.query('SET GLOBAL innodb_io_capacity = ?', [before.innodb_io_capacity]);
    await pool.query('SET GLOBAL innodb_io_capacity_max = ?', [before.innodb_io_capacity_max]);
  }
  return Math.round((Date.now() - t0) / 100) / 10;
}

await runScenario(async () => {
  const sink = await startSink();
  onCleanup(() => sink.close());
  const server = await startPrivateMariaDb({ bufferPool: O.bufferPool });
  const round = await createAxRound('purge', { serverUrl: server.url });
  const pool = round.db.pool;
  const names = await insertTasks(pool, {
    count: O.rate,
    prefix: 'purge',
    schedule: { type: 'cron', expr: '* * * * * *', timezone: 'UTC' },
    url: sink.url,
  });
  log(`building ${O.expired.toLocaleString('en-US')} expired instances (ended ${O.days + 1}–${O.days + 1 + SPAN_DAYS} days ago) over ${O.rate} tasks`);
  const build = await buildExpired(pool, names);
  log(`expired history built in ${build.totalS} s`);
  // As an enable does: every slot from now on. Left NULL, the scheduler catches up every slot
  // since the tasks were inserted, a build ago (80-90 s at full size): a backlog of minutes.
  await pool.query('UPDATE task SET last_fire_time = NOW(3), next_fire_time = NULL WHERE enabled = 1');
  build.flushS = await flushDirtyPages(pool);
  log(`dirty pages of the build flushed in ${build.flushS} s`);

  await round.start('worker', 2);
  await round.start('broker', 1);
  const [first] = await round.start('scheduler', 1, { name: 'scheduler-no-purge', extraEnv: { AX_RETENTION_DAYS: '3650' } });
  // Phase A starts `--warmup-s` after the scheduler is ready: the first seconds of a fresh stack
  // (catch-up slots, connections and JIT warming up) are no part of the purge's effect.
  const aFrom = Math.ceil(Date.now() / 1000) * 1000 + O.warmupS * 1_000;
  const aTo = aFrom + O.seconds * 1_000;
  log(`${O.rate} tasks every second; phase A (no purge) ${new Date(aFrom).toISOString()} + ${O.seconds} s`);
  const samples = [];
  const sample = async (phase) => {
    const [[due], purged] = await Promise.all([dueBacklog(pool), phase === 'A' ? 0 : purgedSoFar(pool)]);
    samples.push({ phase, t: Date.now() - aFrom, backlog: due.backlog, purged });
  };
  // Where the purge's cost lands: each process's CPU in each phase (the round's MariaDB is the
  // private one), as cores, so B − A is what the purge added and where.
  const cpuCores = (from, to) => {
    const seconds = (to.atMs - from.atMs) / 1000;
    return Object.fromEntries(Object.entries(cpuSecondsBetween(from.ticks, to.ticks)).map(([k, v]) => [k, Math.round((v / seconds) * 100) / 100]));
  };
  const cpuAt = () => ({ atMs: Date.now(), ticks: round.cpuSnapshot() });
  await sleep(aFrom - Date.now());
  const cpuA0 = cpuAt();
  while (Date.now() < aTo) {
    const next = Date.now() + 1_000;
    await sample('A');
    await sleep(Math.max(0, next - Date.now()));
  }

  const cpuA = cpuCores(cpuA0, cpuAt());
  // The handoff: the purging scheduler first, then the first one stops.
  const handoffMs = Date.now();
  await round.start('scheduler', 1, {
    name: 'scheduler-purge',
    extraEnv: { AX_RETENTION_DAYS: String(O.days), AX_SCHEDULER_RETENTION_MS: String(O.periodMs) },
  });
  const purgeStartMs = Date.now();
  await round.kill(first, 'SIGTERM');
  const bFrom = Math.ceil((Date.now() + O.gapS * 1_000) / 1000) * 1000;
  log(`handoff: the purging scheduler ready ${purgeStartMs - handoffMs} ms after spawn; phase B (purge) from ${new Date(bFrom).toISOString()}, at most ${O.seconds} s`);
  await sleep(Math.max(0, bFrom - Date.now()));
  const cpuB0 = cpuAt();
  let doneMs = null;
  while (Date.now() < bFrom + O.seconds * 1_000) {
    const next = Date.now() + 1_000;
    await sample('B');
    if (samples.at(-1).purged >= O.expired) {
      doneMs = Date.now();
      break;
    }
    await sleep(Math.max(0, next - Date.now()));
  }
  const bTo = Math.floor(Date.now() / 1000) * 1000;
  const cpuB = cpuCores(cpuB0, cpuAt());
  const purgeEndMs = doneMs ?? Date.now();
  const purged = O.expired - (doneMs === null ? await expiredLeft(pool) : 0);
  const schedulerStoppedMs = Date.now();
  await round.stop('scheduler', 15_000);
  const stopMs = Date.now();
  log(`phase B ended after ${((bTo - bFrom) / 1000).toFixed(0)} s, ${purged.toLocaleString('en-US')} purged; draining for at most ${O.drainS} s`);
  while (Date.now() < stopMs + O.drainS * 1_000) {
    const [due] = await dueBacklog(pool);
    if (due.backlog === 0) break;
    await sleep(500);
  }
  await sleep(500);
  await round.stop(undefined, 15_000);
  const left = await expiredLeft(pool);

  // Per phase: start lag of the slots in its window, SUCCESS ended in it per second.
  const rows = await instanceRows(pool, 'expected_time >= ?', [toSql(aFrom)]);
  const success = rows.filter((r) => r.state === 'SUCCESS' && r.endedMs !== null);
  const phase = (name, from, to, warmS) => {
    const ended = success.filter((r) => r.endedMs >= from + warmS * 1_000 && r.endedMs < to).length;
    const seconds = (to - from) / 1000;
    const sustainedSuccessPerS = seconds > warmS ? Math.round(ended / (seconds - warmS)) : null;
    const own = samples.filter((s) => s.phase === name);
    const backlogAtEnd = own.at(-1)?.backlog ?? null;
    const maxBacklog = own.length === 0 ? null : Math.max(...own.map((s) => s.backlog));
    return {
      name,
      seconds,
      startLagMs: summarize(sink.startLags(from, to)),
      sustainedSuccessPerS,
      backlogAtEnd,
      maxBacklog,
      keptUp: sustainedSuccessPerS !== null && sustainedSuccessPerS >= KEPT_UP_SHARE * O.rate && maxBacklog !== null && maxBacklog <= 2 * O.rate,
    };
  };
  const a = { ...phase('A', aFrom, aTo, 0), cpuCores: cpuA };
  const b = { ...phase('B', bFrom, bTo, 0), cpuCores: cpuB };
  const ratio = a.startLagMs.p99 > 0 && b.startLagMs.p99 !== null ? Math.round((b.startLagMs.p99 / a.startLagMs.p99) * 100) / 100 : null;
  const goal = purged === 0 || ratio === null || !a.keptUp ? 'not measured' : ratio <= GOAL_P99_RATIO ? 'met' : 'missed';

  // Every slot of every task from A's start to 2 s before B's end, exactly once. A slot whose
  // insert failed is re-created by the next re-scan (R2) only after the fire-lock TTL: holes
  // younger than that at the scheduler's stop are counted apart (as ax-steady does).
  const repairMs = Number(process.env.AX_FIRE_LOCK_TTL_MS ?? 30_000) + 2_000;
  const checkEnd = bTo - 2_000;
  const strictEnd = Math.min(checkEnd, schedulerStoppedMs - repairMs);
  const expected = [];
  const recent = [];
  for (let t = aFrom; t < checkEnd; t += 1_000) for (const n of names) (t < strictEnd ? expected : recent).push(slotKey(n, t, 1));
  const perSlot = new Map();
  const recentPerSlot = new Map();
  for (const r of rows) {
    if (r.expectedMs >= checkEnd) continue;
    const m = r.expectedMs < strictEnd ? perSlot : recentPerSlot;
    const k = slotKey(r.taskName, r.expectedMs, 1);
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  const slotCheck = exactlyOnce(expected, perSlot);
  const recentCheck = exactlyOnce(recent, recentPerSlot);
  // A hole may be a slot the misfire policy (fire_once) coalesced on purpose: the task counters tell.
  const missing = slotCheck.missing + recentCheck.missing > 0 ? await missingDetail(pool, [...expected, ...recent], new Map([...perSlot, ...recentPerSlot])) : null;
  const successKeys = success.map((r) => slotKey(r.taskName, r.expectedMs, r.runNo));
  const executions = exactlyOnce(successKeys, new Map(successKeys.map((k) => [k, sink.counts.get(k) ?? 0])));
  let duplicateCalls = 0;
  for (const n of sink.counts.values()) if (n > 1) duplicateCalls += n - 1;
  const purgeS = (purgeEndMs - purgeStartMs) / 1000;
  log(`start lag p99: A ${a.startLagMs.p99} ms, B ${b.startLagMs.p99} ms (× ${ratio}); ${purged} purged at ${purgeS > 0 ? Math.round(purged / purgeS) : '—'}/s — ${goal}`);
  return {
    status: 'ok',
    system: 'ax',
    params: { expired: O.expired, rate: O.rate, seconds: O.seconds, retentionDays: O.days, retentionPeriodMs: O.periodMs, batchSize: Number(process.env.AX_SCHEDULER_RETENTION_BATCH ?? DEFAULT_SCHEDULER_CONFIG.retentionBatchSize), bufferPool: O.bufferPool },
    topology: { schedulers: 1, brokers: 1, workers: 2 },
    build,
    phases: [a, b],
    handoffMs: purgeStartMs - handoffMs,
    startLagP99Ratio: ratio,
    goalRatio: GOAL_P99_RATIO,
    goal,
    purge: {
      purged,
      expiredLeft: left,
      done: doneMs !== null,
      seconds: Math.round(purgeS * 10) / 10,
      perS: purgeS > 0 ? Math.round(purged / purgeS) : null,
    },
    earlyStarts: sink.startLags(aFrom, bTo).filter((lag) => lag < 0).length,
    // Expected: every slot of both phases; missing: those older than the repair delay at the stop.
    // A slot the misfire policy coalesced (fire_once, a stack behind its load) is not a loss:
    // only holes beyond the tasks' misfire counters count as missing.
    instances: {
      ...slotCheck,
      expected: slotCheck.expected + recentCheck.expected,
      duplicates: slotCheck.duplicates + recentCheck.duplicates,
      missing: Math.min(slotCheck.missing, missing?.unexplainedByMisfire ?? 0),
      coalescedOrSkipped: slotCheck.missing - Math.min(slotCheck.missing, missing?.unexplainedByMisfire ?? 0),
    },
    checkedSeconds: Math.max(0, Math.round((strictEnd - aFrom) / 1000)),
    unrepairedAtStop: recentCheck.missing,
    ...(missing ? { missingDetail: missing } : {}),
    executions: { ...executions, duplicates: duplicateCalls },
    samples,
  };
});
