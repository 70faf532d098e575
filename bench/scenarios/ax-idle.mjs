/**
 * Idle cost (#24: "each service ≤ 1 % of a core when nothing is due, measured over 60 s").
 * Two stacks side by side, each in its own namespace and with the services' own defaults (no
 * AX_BENCH_ENV: broker dispatch poll 500 ms, log level info…): 1 scheduler, 1 broker,
 * `--workers` workers and 1 admin-api —
 *   - `empty`: no task at all (a fresh install);
 *   - `far`: `--tasks` enabled cron tasks whose next fire is `--fire-in-h` hours away (what a
 *     real stack is between fires: the scheduler holds them in its cache and time wheel).
 * After `--settle-s` (start-up work done), it reads every service process's CPU ticks
 * (utime + stime, /proc/<pid>/stat) every `--sample-s` for `--measure-s` and reports per
 * process: CPU % of one core over the whole window (the goal: ≤ 1 %), the worst sample window,
 * and the machine's load average. Nothing touches the stacks or the servers while it measures.
 * At the end it checks that nothing was due (no instance in either database).
 *
 *   node bench/scenarios/ax-idle.mjs [--settle-s 15] [--measure-s 60] [--tasks 20] [--workers 2] [--profile dir] [--out f.json]
 *
 * `--profile dir` runs every service with `--cpu-prof` (one sub-directory per stack and
 * service) and summarizes the samples of the measured window. The profiler costs every process
 * about 2.5 % of a core itself: a profiled run finds where the time goes, not whether the goal
 * is met (its result says `profiled: true`).
 */
import os from 'node:os';
import path from 'node:path';
import { createAxRound, cronAt, insertTasks } from '../lib/ax-stack.mjs';
import { args, log, runScenario, sleep } from '../lib/harness.mjs';
import { cpuSnapshot, serverPids } from '../lib/proc-cpu.mjs';
import { profileClockUs } from '../lib/cpuprofile.mjs';
import { summarizeProfiles } from '../lib/profiles.mjs';

const a = args();
const SETTLE_S = Number(a['settle-s'] ?? 15);
const MEASURE_S = Number(a['measure-s'] ?? 60);
const SAMPLE_S = Number(a['sample-s'] ?? 10);
const TASKS = Number(a.tasks ?? 20);
const WORKERS = Number(a.workers ?? 2);
const FIRE_IN_H = Number(a['fire-in-h'] ?? 6);
const PROFILE = a.profile;
/** The goal of #24, in % of one core. */
const GOAL_PCT = 1;
const TICKS_PER_S = 100; // CLK_TCK on Linux
const SERVICES = ['scheduler', 'broker', 'worker', 'admin-api'];

const round1 = (v, d = 2) => Math.round(v * 10 ** d) / 10 ** d;
const load = () => os.loadavg().map((v) => round1(v));

/** One stack: its round, then every service started with its own defaults. */
async function startStack(label, tasks) {
  const round = await createAxRound(`idle-${label}`);
  if (tasks > 0) {
    await insertTasks(round.db.pool, {
      count: tasks,
      prefix: `idle-${label}`,
      schedule: { type: 'cron', expr: cronAt(Date.now() + FIRE_IN_H * 3_600_000), timezone: 'UTC' },
      url: 'http://127.0.0.1:9/never-called',
    });
  }
  const opts = { serviceDefaults: true, ...(PROFILE ? { profileDir: path.join(PROFILE, label) } : {}) };
  // admin-api first: the workers enroll through it (bench/lib/enrollment.mjs) rather than a second one.
  await round.start('admin-api', 1, opts);
  await round.start('worker', WORKERS, opts);
  await round.start('broker', 1, opts);
  await round.start('scheduler', 1, opts);
  return { label, tasks, round };
}

await runScenario(async () => {
  const startedMs = Date.now();
  const loadAtStart = load();
  log(`starting two stacks (empty; ${TASKS} tasks firing in ${FIRE_IN_H} h), 1 scheduler, 1 broker, ${WORKERS} workers, 1 admin-api each, service defaults`);
  const stacks = await Promise.all([startStack('empty', 0), startStack('far', TASKS)]);
  log(`all started in ${((Date.now() - startedMs) / 1000).toFixed(1)} s; settling ${SETTLE_S} s`);
  await sleep(SETTLE_S * 1_000);

  // One group per process: `<stack>/<name>` → [pid]; the shared servers and the machine too.
  const groups = { ...serverPids() };
  const procs = [];
  for (const { label, round } of stacks) {
    for (const { service, proc } of round.procs) {
      const key = `${label}/${proc.name}`;
      groups[key] = [proc.pid];
      procs.push({ key, stack: label, service, name: proc.name, pid: proc.pid, proc });
    }
  }
  const loadBefore = load();
  const profileFromUs = profileClockUs();
  const snaps = [{ atMs: Date.now(), ticks: cpuSnapshot(groups) }];
  const endMs = snaps[0].atMs + MEASURE_S * 1_000;
  while (Date.now() < endMs) {
    await sleep(Math.min(SAMPLE_S * 1_000, endMs - Date.now()));
    snaps.push({ atMs: Date.now(), ticks: cpuSnapshot(groups) });
  }
  const profileToUs = profileClockUs();
  const loadAfter = load();
  const first = snaps[0];
  const last = snaps.at(-1);
  const windowS = (last.atMs - first.atMs) / 1000;
  const pctOf = (key, from, to) => ((to.ticks[key] - from.ticks[key]) / TICKS_PER_S / ((to.atMs - from.atMs) / 1000)) * 100;
  const exited = procs.filter((p) => p.proc.exitInfo !== undefined).map((p) => p.key);

  const processes = procs.map((p) => {
    const windows = snaps.slice(1).map((s, i) => round1(pctOf(p.key, snaps[i], s)));
    const cpuPct = round1(pctOf(p.key, first, last));
    return {
      stack: p.stack,
      service: p.service,
      name: p.name,
      cpuSeconds: round1((last.ticks[p.key] - first.ticks[p.key]) / TICKS_PER_S),
      cpuPct,
      maxWindowPct: Math.max(...windows),
      windowsPct: windows,
      goal: cpuPct <= GOAL_PCT ? 'met' : 'missed',
    };
  });
  const servers = {};
  for (const name of ['mariadb', 'rabbitmq', 'redis']) if (groups[name]) servers[name] = round1(pctOf(name, first, last));
  // /proc/stat's busy ticks are summed over every CPU: machine % of one core (2 cores → up to 200 %).
  const machinePct = round1(pctOf('machine', first, last));
  for (const p of processes) log(`${p.stack}/${p.name}: ${p.cpuPct} % of a core (${p.cpuSeconds} s in ${windowS.toFixed(1)} s; worst ${SAMPLE_S} s: ${p.maxWindowPct} %) — ${p.goal}`);
  log(`load average ${loadBefore.join(' / ')} before, ${loadAfter.join(' / ')} after; machine busy ${machinePct} % of one core`);

  // Nothing was due: no instance exists in either stack (a far-away fire creates none before its time).
  const instances = {};
  for (const { label, round } of stacks) {
    const [rows] = await round.db.pool.query('SELECT COUNT(*) AS n, SUM(due_at <= NOW(3)) AS due FROM task_instance');
    instances[label] = { total: Number(rows[0].n), due: Number(rows[0].due ?? 0) };
  }
  const outputTails = {};
  for (const { label, round } of stacks) for (const [n, lines] of Object.entries(round.outputTail(5))) outputTails[`${label}/${n}`] = lines;
  for (const { round } of stacks) await round.stop(undefined, 10_000);

  // Per service (worst process of that service in either stack): the figure the goal is about.
  const byService = {};
  for (const service of SERVICES) {
    const of = processes.filter((p) => p.service === service);
    if (of.length === 0) continue;
    const worst = of.reduce((w, p) => (p.cpuPct > w.cpuPct ? p : w));
    byService[service] = { worstPct: worst.cpuPct, worst: `${worst.stack}/${worst.name}`, goal: worst.cpuPct <= GOAL_PCT ? 'met' : 'missed' };
  }
  const nothingDue = Object.values(instances).every((i) => i.due === 0);
  return {
    status: exited.length > 0 ? 'error' : nothingDue ? 'ok' : 'something-was-due',
    system: 'ax',
    goalPct: GOAL_PCT,
    settings: 'service defaults (no AX_BENCH_ENV)',
    /** AX_* settings of the bench's environment the services inherit over their defaults (URLs left out). */
    envOverrides: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('AX_') && !k.endsWith('_URL'))),
    stacks: stacks.map((s) => ({ label: s.label, tasks: s.tasks, fireInH: s.tasks > 0 ? FIRE_IN_H : null, workers: WORKERS })),
    settleS: SETTLE_S,
    windowS: round1(windowS, 1),
    sampleS: SAMPLE_S,
    processes,
    byService,
    allMet: processes.every((p) => p.goal === 'met'),
    servers,
    machinePct,
    cores: os.availableParallelism(),
    load: { atStart: loadAtStart, before: loadBefore, after: loadAfter },
    instances,
    exited,
    outputTails: exited.length > 0 ? outputTails : undefined,
    profiled: PROFILE !== undefined,
    /** The measured window on the monotonic clock of the .cpuprofile files (µs). */
    profileWindowUs: PROFILE ? { from: profileFromUs, to: profileToUs } : undefined,
    profiles: PROFILE
      ? Object.fromEntries(stacks.map(({ label }) => [label, summarizeProfiles(path.join(PROFILE, label), 12, { fromUs: profileFromUs, toUs: profileToUs })]))
      : undefined,
  };
});
