/**
 * History at scale (#24): how ax behaves with months of history and many tasks.
 *
 * A private MariaDB (its folder kept in `--dir` between runs, InnoDB buffer pool
 * `--buffer-pool`) holds the history of bench/lib/history-build.mjs: by default 100,000 tasks
 * (10,000 firing every minute) and 5,000,000 final instances with their executions, events and
 * logs over 90 days. The first run builds it (minutes); later runs with the same parameters
 * reuse it and only apply migrations added since.
 *
 * Then, on that database, with a Redis and RabbitMQ namespace of its own:
 *   1. admin-api: for each read an operator makes (task search, instance lists by each
 *      filter, instance detail, stats today and hourly, dag and its grid, audit), `--requests`
 *      requests from `--clients` concurrent clients; p50 / p99 / max (goal: p99 ≤ 100 ms), and
 *      the CPU milliseconds admin-api and MariaDB spent per answered request (steadier than
 *      latencies on a shared machine: compare old and new by them);
 *   2. scheduler (its defaults, retention off): seconds from spawn until its cache holds every
 *      task (goal ≤ 10 s), its RSS (goal ≤ 400 MB), and for each of `--minutes` minute slots
 *      whether every task due then got its instance, and how long before or after the slot the
 *      last one was committed (goal: by the slot + one refill period, 1 s); then, unless
 *      `--scheduler-heap-mb 0`, the same once more with node's `--max-old-space-size` at that
 *      size (default 256): what capping the heap does to RSS and to the scheduler's CPU.
 * What the run created (instances, their events) is deleted again; the history stays.
 *
 *   node bench/scenarios/ax-history.mjs [--tasks 100000] [--every-minute 10000] [--instances 5000000] [--days 90]
 *        [--dir /var/tmp/ax-bench-history] [--buffer-pool 2G] [--clients 20] [--requests 400] [--endpoint-s 15] [--minutes 2] [--scheduler-heap-mb 256] [--parts api,scheduler] [--out f.json]
 *        [--reads <text>] [--api-cpu-prof <dir>] [--profile-missed <dir>]
 * `--reads`: only the admin API reads whose name contains the text, or one of several texts
 * separated by `|` (`--reads "search|by team|dag grid"`; the past days are rolled
 * up first only when "stats: hourly, a past day" is among them); `--api-cpu-prof`: admin-api
 * writes a V8 CPU profile of its life into that folder (node's --cpu-prof; one per start);
 * `--profile-missed`: each read that missed its goal runs once more after the measured ones,
 * against an admin-api under --cpu-prof (`<dir>/<read>/admin-api/`), and the result holds where
 * its time went: admin-api's profile over the loop and the CPU of admin-api and MariaDB.
 */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseStatTicks } from '../lib/proc-cpu.mjs';
import { randomBytes } from 'node:crypto';
import { createPool, daysToRollUp } from '../../packages/store/dist/index.js';
import { createAxRound } from '../lib/ax-stack.mjs';
import { args, log, onCleanup, pollUntil, runScenario, sleep } from '../lib/harness.mjs';
import { ensureHistory, historyTimeline } from '../lib/history-build.mjs';
import { closedLoop } from '../lib/http-load.mjs';
import { checkBufferPool, startPrivateMariaDb } from '../lib/private-mariadb.mjs';
import { profileClockUs } from '../lib/cpuprofile.mjs';
import { summarizeProfiles } from '../lib/profiles.mjs';

const a = args();
const PARAMS = {
  tasks: Number(a.tasks ?? 100_000),
  everyMinute: Number(a['every-minute'] ?? 10_000),
  instances: Number(a.instances ?? 5_000_000),
  days: Number(a.days ?? 90),
};
const DIR = a.dir ?? process.env.AX_BENCH_HISTORY_DIR ?? '/var/tmp/ax-bench-history';
let BUFFER_POOL;
try {
  BUFFER_POOL = checkBufferPool(a['buffer-pool'] ?? '2G');
} catch (error) {
  process.stderr.write(`bench/scenarios/ax-history.mjs: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
const CLIENTS = Number(a.clients ?? 20);
const REQUESTS = Number(a.requests ?? 400);
const MINUTES = Number(a.minutes ?? 2);
/** The heap cap (MB) of the scheduler's second measurement; 0 = no second measurement. */
const SCHEDULER_HEAP_MB = Number(a['scheduler-heap-mb'] ?? 256);
/** Most seconds spent on one endpoint (a read that takes seconds reports what it answered). */
const ENDPOINT_S = Number(a['endpoint-s'] ?? 15);
/** Only the admin API reads whose name contains this, or one of its `|`-separated texts (all when absent). */
const READS = a.reads === undefined ? undefined : String(a.reads).split('|');
/** A folder for admin-api's CPU profile (none when absent). */
const API_CPU_PROF = a['api-cpu-prof'];
/** A folder for the profiles of the reads that missed their goal (none taken when absent). */
const PROFILE_MISSED = a['profile-missed'];
/** Which parts run: `api`, `scheduler` (a comma list). */
const PARTS = new Set((a.parts ?? 'api,scheduler').split(','));
/** Goals of #24. */
const GOALS = { apiP99Ms: 100, schedulerStartS: 10, schedulerRssMb: 400, refillLateMs: 1_000 };

const rssMb = (pid) => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    return { rss: Math.round(kb('VmRSS') / 1024), hwm: Math.round(kb('VmHWM') / 1024) };
  } catch {
    return { rss: 0, hwm: 0 };
  }
};

/** The reads of the admin API, each a path per request index (spread over ids, days, names). */
function endpoints(p, nowMs) {
  const { fromMs, toMs } = historyTimeline(p, nowMs);
  const pick = (i, n) => ((i * 7_919) % n) + 1; // a deterministic spread over 1..n
  const task = (i) => `hist-${String(pick(i, p.tasks)).padStart(6, '0')}`;
  const day = (i) => new Date(toMs - (pick(i, p.days) - 1) * 86_400_000).toISOString().slice(0, 10);
  const hourAt = (i) => new Date(fromMs + pick(i, Math.floor((toMs - fromMs) / 3_600_000)) * 3_600_000);
  const chainRoot = (i) => `hist-${String(p.everyMinute + (pick(i, 400) - 1) * 5 + 1).padStart(6, '0')}`;
  return [
    ['tasks: search by text', (i) => `/api/v1/tasks?q=${encodeURIComponent(i % 2 === 0 ? 'nightly' : task(i).slice(0, 9))}&limit=50`],
    ['tasks: list, first page', () => '/api/v1/tasks?limit=50'],
    ['instances: newest', () => '/api/v1/instances?limit=50'],
    ['instances: by task', (i) => `/api/v1/instances?task=${task(i)}&limit=50`],
    ['instances: by state FAILED', () => '/api/v1/instances?state=FAILED&limit=50'],
    ['instances: by bizDate', (i) => `/api/v1/instances?bizDate=${day(i)}&limit=50`],
    ['instances: by from/to (1 h)', (i) => `/api/v1/instances?from=${hourAt(i).toISOString()}&to=${new Date(hourAt(i).getTime() + 3_600_000).toISOString()}&limit=50`],
    ['instances: by team', (i) => `/api/v1/instances?team=team-${i % 10}&limit=50`],
    ['instances: by worker', (i) => `/api/v1/instances?worker=hist-w${i % 8}&limit=50`],
    ['instances: by trigger manual', () => '/api/v1/instances?trigger=manual&limit=50'],
    ['instances: task + state', (i) => `/api/v1/instances?task=${task(i)}&state=SUCCESS&limit=50`],
    ['instance detail', (i) => `/api/v1/instances/${pick(i, p.instances)}`],
    ['stats: today', () => '/api/v1/stats/today'],
    ['stats: hourly, today', () => '/api/v1/stats/hourly'],
    ['stats: hourly, a past day', (i) => `/api/v1/stats/hourly?day=${day(i)}`],
    ['dag from a root', (i) => `/api/v1/dag?root=${chainRoot(i)}`],
    ['dag grid from a root', (i) => `/api/v1/dag/grid?root=${chainRoot(i)}`],
    ['audit: newest', () => '/api/v1/audit?limit=50'],
    ['audit: by actor', (i) => `/api/v1/audit?actor=user-${i % 20}&limit=50`],
    ['audit: by from/to (1 day)', (i) => `/api/v1/audit?from=${day(i)}T00:00:00Z&to=${day(i)}T23:59:59Z&limit=50`],
  ];
}

/**
 * Kills the statements of requests the load gave up, until none is left: admin-api neither
 * cancels a query whose client went away nor drops the requests queued behind it for a pool
 * connection, so each kill lets a queued one start. Left running, they slow the next read's
 * figures. Returns how many were killed.
 */
async function killAbandonedQueries(pool) {
  let killed = 0;
  for (let quiet = 0, deadline = Date.now() + 120_000; quiet < 4 && Date.now() < deadline; ) {
    const [rows] = await pool.query(
      "SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND command = 'Query' AND id <> CONNECTION_ID()",
    );
    for (const { id } of rows) await pool.query('KILL QUERY ?', [id]).catch(() => undefined); // it may have ended meanwhile
    killed += rows.length;
    quiet = rows.length === 0 ? quiet + 1 : 0;
    await sleep(250);
  }
  return killed;
}

/** A bearer token of one measurement's own: admin-api starts with it as its bootstrap admin token. */
function apiAccess() {
  const token = `history-${randomBytes(16).toString('hex')}`;
  return { token, headers: { authorization: `Bearer ${token}` } };
}

/** One admin-api on the history, on its defaults (`profileDir`: under --cpu-prof): its process and URL. */
async function startAdminApi(round, token, profileDir) {
  const [proc] = await round.start('admin-api', 1, { serviceDefaults: true, profileDir, extraEnv: { AX_ADMIN_TOKEN: token } });
  return { proc, baseUrl: round.httpUrl(proc) };
}

/** Up to 40 requests before a read is measured, on other ids, days and names than the measured ones. */
const warmUp = (baseUrl, headers, pathOf) =>
  closedLoop({ baseUrl, headers, concurrency: CLIENTS, requests: Math.min(REQUESTS, 40), maxS: 5, pathOf: (i) => pathOf(i + 100_000) });

/** The measured requests of a read. */
const measureRead = (baseUrl, headers, pathOf) => closedLoop({ baseUrl, headers, concurrency: CLIENTS, requests: REQUESTS, maxS: ENDPOINT_S, pathOf });

async function measureApi(round, pool, p, mariadbPid) {
  const { token, headers } = apiAccess();
  let apiPid = 0;
  const startApi = async () => {
    const started = await startAdminApi(round, token, API_CPU_PROF);
    apiPid = started.proc.pid;
    return started.baseUrl;
  };
  const reads = endpoints(p, Date.now()).filter(([name]) => READS === undefined || READS.some((text) => name.includes(text)));
  const rollUp = reads.some(([name]) => name === 'stats: hourly, a past day');
  // As after the upgrade to schema 8: no past day rolled up yet. admin-api rolls them up in the
  // background (stats-rollup-loop.ts); the reads are measured once it has (the time is reported).
  if (rollUp) {
    await pool.query('DELETE FROM instance_stats_day');
    await pool.query('DELETE FROM instance_stats_hour');
  }
  const pending = (await daysToRollUp(pool, Date.now())).length;
  let baseUrl = await startApi();
  const rollupT0 = Date.now();
  if (rollUp) await pollUntil('admin-api to roll up the past days', 900_000, async () => (await daysToRollUp(pool, Date.now())).length === 0, 1_000);
  const rollup = rollUp ? { days: pending, seconds: Math.round((Date.now() - rollupT0) / 100) / 10 } : null;
  if (rollup !== null) log(`api: ${rollup.days} past days rolled up ${rollup.seconds} s after admin-api started`);
  /**
   * A read that gave requests up leaves work behind in admin-api (requests queued for a pool
   * connection, rows being decoded): its statements are killed and admin-api restarted, so the
   * next read is measured alone.
   */
  const settle = async (r) => {
    const killed = await killAbandonedQueries(pool);
    if (r.failed === 0 && killed === 0) return { killed, baseUrl };
    await round.stop('admin-api');
    return { killed, baseUrl: await startApi() };
  };
  const out = [];
  for (const [name, pathOf] of reads) {
    ({ baseUrl } = await settle(await warmUp(baseUrl, headers, pathOf)));
    // CPU per answered request (admin-api's and MariaDB's): on a loaded machine the latencies move
    // with the hour, the work a read costs much less.
    const cpu0 = { api: cpuS(apiPid), db: cpuS(mariadbPid) };
    const r = await measureRead(baseUrl, headers, pathOf);
    const perRequestMs = (s) => (r.requests > 0 ? Math.round((s / r.requests) * 100_000) / 100 : null);
    const cpuMsPerRequest = { adminApi: perRequestMs(cpuS(apiPid) - cpu0.api), mariadb: perRequestMs(cpuS(mariadbPid) - cpu0.db) };
    const goal = r.failed === 0 && r.p99Ms !== null && r.p99Ms <= GOALS.apiP99Ms ? 'met' : 'missed';
    const settled = await settle(r);
    baseUrl = settled.baseUrl;
    log(`api ${name}: p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, max ${r.maxMs} ms, ${r.perS}/s, ${r.requests} answered${r.failed > 0 ? `, ${r.failed} failed (${r.failures[0]})` : ''}${settled.killed > 0 ? `, ${settled.killed} abandoned queries killed` : ''}; CPU per request: admin-api ${cpuMsPerRequest.adminApi} ms, MariaDB ${cpuMsPerRequest.mariadb} ms — ${goal}`);
    out.push({ name, ...r, cpuMsPerRequest, abandonedQueries: settled.killed, goal });
  }
  await round.stop('admin-api');
  return { reads: out, rollup };
}

/** CPU seconds (utime + stime) of a process so far. */
const cpuS = (pid) => {
  try {
    return parseStatTicks(readFileSync(`/proc/${pid}/stat`, 'utf8')) / 100;
  } catch {
    return 0;
  }
};

/** "tasks: search by text" → "tasks-search-by-text": a read's folder name. */
const slugOf = (name) => name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

/**
 * Where each missed read's time goes (#24 asks a profile of every missed goal): the read once
 * more, alone, against a fresh admin-api under --cpu-prof, its profile summarized over the
 * measured loop only (not the start or the warm-up), beside the CPU seconds admin-api and
 * MariaDB used in that loop: which of the two the read waits on. The profiler slows admin-api,
 * so these latencies are not the goal's; the measured pass is.
 */
async function profileMissedReads(round, pool, p, missed, mariadbPid) {
  const { token, headers } = apiAccess();
  const out = [];
  for (const name of missed) {
    const pathOf = endpoints(p, Date.now()).find(([n]) => n === name)[1];
    const dir = path.join(PROFILE_MISSED, slugOf(name));
    rmSync(dir, { recursive: true, force: true }); // a profile of an earlier run would be summed in
    const { proc: api, baseUrl } = await startAdminApi(round, token, dir);
    await warmUp(baseUrl, headers, pathOf);
    await killAbandonedQueries(pool);
    const at0 = { us: profileClockUs(), ms: Date.now(), api: cpuS(api.pid), db: cpuS(mariadbPid) };
    const r = await measureRead(baseUrl, headers, pathOf);
    const windowS = (Date.now() - at0.ms) / 1000;
    const cpu = {
      windowS: Math.round(windowS * 10) / 10,
      adminApiPct: Math.round(((cpuS(api.pid) - at0.api) / windowS) * 1000) / 10,
      mariadbPct: Math.round(((cpuS(mariadbPid) - at0.db) / windowS) * 1000) / 10,
    };
    const window = { fromUs: at0.us, toUs: profileClockUs() };
    await round.stop('admin-api'); // the profile is written as it exits
    await killAbandonedQueries(pool);
    log(`api ${name}, profiled: ${r.perS}/s, p99 ${r.p99Ms} ms; admin-api ${cpu.adminApiPct} % of a core, MariaDB ${cpu.mariadbPct} %`);
    out.push({ name, p50Ms: r.p50Ms, p99Ms: r.p99Ms, perS: r.perS, failed: r.failed, cpu, profiles: summarizeProfiles(dir, 10, window) });
  }
  return out;
}

/** The scheduler on the history (node `nodeArgs` before its entry): start time, RSS, CPU, and each minute's slots. */
async function measureScheduler(round, pool, p, nodeArgs = []) {
  // As an enable does: every slot from now on, none caught up from the history's last run.
  await pool.query('UPDATE task SET last_fire_time = NOW(3), next_fire_time = NULL WHERE enabled = 1');
  const [[{ maxId }]] = await pool.query('SELECT COALESCE(MAX(id), 0) AS maxId FROM task_instance');
  const [[{ enabled }]] = await pool.query('SELECT COUNT(*) AS enabled FROM task WHERE enabled = 1');
  onCleanup(async () => {
    // What this run fired goes again; the history stays as built.
    await pool.query('DELETE FROM event_log WHERE instance_id > ?', [maxId]);
    await pool.query('DELETE FROM task_instance WHERE id > ?', [maxId]);
  });
  const t0 = Date.now();
  const [sched] = await round.start('scheduler', 1, { serviceDefaults: true, extraEnv: { AX_RETENTION_DAYS: '3650' }, nodeArgs });
  const metricsUrl = `${round.httpUrl(sched)}/metrics`;
  await pollUntil('the scheduler to cache every task', 120_000, async () => {
    const text = await (await fetch(metricsUrl)).text();
    const n = Number(/^ax_scheduler_tasks(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? 0);
    return n >= Number(enabled);
  }, 100);
  const startS = (Date.now() - t0) / 1000;
  log(`scheduler: all ${enabled} tasks cached ${startS.toFixed(1)} s after spawn; RSS ${rssMb(sched.pid).rss} MB`);

  const firstSlotMs = Math.ceil((Date.now() + 1_000) / 60_000) * 60_000;
  const lastSlotMs = firstSlotMs + (MINUTES - 1) * 60_000;
  let maxRss = 0;
  const cpu0 = { s: cpuS(sched.pid), atMs: Date.now() };
  while (Date.now() < lastSlotMs + 5_000) {
    maxRss = Math.max(maxRss, rssMb(sched.pid).rss);
    await sleep(1_000);
  }
  // CPU after the start: refills, reconciles, the minute slots' inserts and the collector.
  const cpuPct = Math.round(((cpuS(sched.pid) - cpu0.s) / ((Date.now() - cpu0.atMs) / 1000)) * 1000) / 10;
  const { hwm } = rssMb(sched.pid);
  const minutes = [];
  for (let slot = firstSlotMs; slot <= lastSlotMs; slot += 60_000) {
    const at = new Date(slot);
    const [[due]] = await pool.query(
      'SELECT ? + COUNT(*) AS n FROM task WHERE enabled = 1 AND id > ? AND id % 60 = ? AND (id DIV 60) % 24 = ?',
      [p.everyMinute, p.everyMinute, at.getUTCMinutes(), at.getUTCHours()],
    );
    const [[r]] = await pool.query(
      `SELECT COUNT(*) AS n, MIN(TIMESTAMPDIFF(MICROSECOND, expected_time, created_at)) / 1000 AS first_ms,
              MAX(TIMESTAMPDIFF(MICROSECOND, expected_time, created_at)) / 1000 AS last_ms
         FROM task_instance WHERE id > ? AND expected_time = ?`,
      [maxId, at],
    );
    const m = { slot: at.toISOString(), due: Number(due.n), created: Number(r.n), firstCommitMs: Math.round(Number(r.first_ms)), lastCommitMs: Math.round(Number(r.last_ms)) };
    m.goal = m.created === m.due && m.lastCommitMs <= GOALS.refillLateMs ? 'met' : 'missed';
    log(`scheduler: slot ${m.slot}: ${m.created} of ${m.due} instances, committed from ${m.firstCommitMs} to ${m.lastCommitMs} ms around the slot — ${m.goal}`);
    minutes.push(m);
  }
  await round.stop('scheduler');
  return {
    enabledTasks: Number(enabled),
    startS: Math.round(startS * 10) / 10,
    startGoal: startS <= GOALS.schedulerStartS ? 'met' : 'missed',
    maxRssMb: maxRss,
    peakRssMb: hwm,
    rssGoal: Math.max(maxRss, hwm) <= GOALS.schedulerRssMb ? 'met' : 'missed',
    cpuPct,
    nodeArgs,
    minutes,
  };
}

await runScenario(async () => {
  const server = await startPrivateMariaDb({ bufferPool: BUFFER_POOL, keepDir: DIR, startTimeoutMs: 300_000, stopTimeoutMs: 300_000 });
  const history = await ensureHistory(server.url, PARAMS);
  const pool = createPool(history.url, { connectionLimit: 4 });
  onCleanup(() => pool.end());
  const round = await createAxRound('history', { database: { name: 'ax_history', url: history.url, pool } });

  const { reads: api, rollup } = PARTS.has('api') ? await measureApi(round, pool, PARAMS, server.pid) : { reads: [], rollup: null };
  const missed = api.filter((e) => e.goal === 'missed').map((e) => e.name);
  const apiProfiles = PROFILE_MISSED !== undefined && missed.length > 0 ? await profileMissedReads(round, pool, PARAMS, missed, server.pid) : [];
  const scheduler = PARTS.has('scheduler') ? await measureScheduler(round, pool, PARAMS) : { minutes: [] };
  // The goal is judged on the defaults; this shows what a heap cap (NODE_OPTIONS) trades for RSS.
  const schedulerCapped = PARTS.has('scheduler') && SCHEDULER_HEAP_MB > 0
    ? { heapMb: SCHEDULER_HEAP_MB, ...(await measureScheduler(round, pool, PARAMS, [`--max-old-space-size=${SCHEDULER_HEAP_MB}`])) }
    : null;
  const [sizes] = await pool.query(
    `SELECT table_name AS t, table_rows AS n, data_length + index_length AS bytes FROM information_schema.tables
      WHERE table_schema = DATABASE() AND table_rows > 0 ORDER BY bytes DESC`,
  );
  const apiMet = api.every((e) => e.goal === 'met');
  return {
    status: 'ok',
    system: 'ax',
    params: PARAMS,
    bufferPool: BUFFER_POOL,
    history: { built: history.built, builtAt: history.builtAt ?? null, figures: history.figures, migrated: history.migrated },
    tables: sizes.map((r) => ({ table: r.t, rows: Number(r.n), mb: Math.round(Number(r.bytes) / 2 ** 20) })),
    goals: GOALS,
    clients: CLIENTS,
    requestsPerEndpoint: REQUESTS,
    api,
    apiProfiles,
    rollup,
    apiWorstP99Ms: api.length > 0 ? Math.max(...api.map((e) => e.p99Ms)) : null,
    apiGoal: api.length === 0 ? 'not measured' : apiMet ? 'met' : 'missed',
    scheduler,
    schedulerCapped,
    refillGoal: scheduler.minutes.length > 0 && scheduler.minutes.every((m) => m.goal === 'met') ? 'met' : 'missed',
  };
});
