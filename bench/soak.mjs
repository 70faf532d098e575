/**
 * Soak (issue #23; not in CI, not part of `pnpm bench`): `--rate` tasks firing every second
 * (`* * * * * *`, no-op HTTP to the sink) for `--minutes` on 2 schedulers, 2 brokers and 2
 * workers, `kill -9` of one service process every `--kill-every-s` in rotation (scheduler,
 * broker, worker, …; `--spare` processes of each role are never killed, so that some live the
 * whole run) with a replacement of the same role (a worker keeps its AX_WORKER_ID and so its
 * outbox). Every `--sample-s` it samples each live process's RSS (/proc/<pid>/status),
 * open files (/proc/<pid>/fd) and event-loop lag p99 (`nodejs_eventloop_lag_p99_seconds` from
 * its `/metrics`, prom-client's default metrics: the histogram restarts at every scrape, so each
 * sample is the p99 since the previous one), and the backlog and SUCCESS rate. At the end: the
 * exactly-once check over the whole run and the growth check (bench/lib/soak-growth.mjs); any
 * FAIL line exits 1. Writes bench/results/soak.{md,svg,json} (docs/benchmarks.md, "Soak").
 *
 *   pnpm soak                      # = pnpm build && node bench/soak.mjs (20 min, 600/s, kill every 120 s,
 *                                  # a private MariaDB with a 2 GB pool: the committed run's settings)
 *   node bench/soak.mjs --minutes 3 --rate 200 --kill-every-s 45   # a short try
 *   options: --sample-s 10 --warmup-min 5 --window-s 180 --limit-pct 10 --spare 1 --drain-s 60
 *            --schedulers 2 --brokers 2 --workers 2 --out-dir bench/results
 *   --buffer-pool 2G               # the InnoDB buffer pool of the run's private MariaDB (default 2G; a 1 GB
 *                                  # redo log); `--buffer-pool shared` runs on the shared test server instead
 *   --heap-snapshots-s 300,1140    # V8 heap snapshots of every live process at those seconds of the
 *                                  # run (SIGUSR2, --heapsnapshot-signal), compared first against last
 *                                  # per process into <out-dir>/soak-heap.md (bench/heap-diff.mjs); the
 *                                  # snapshots stay in --heap-dir (default $TMPDIR/ax-soak-heap-<time>).
 *                                  # A snapshot stops its process for seconds: a run for finding a leak,
 *                                  # not the run to report.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAxRound, dueBacklog, insertTasks, instanceRows, repoRoot } from './lib/ax-stack.mjs';
import { args, log, onCleanup, runScenario, sleep } from './lib/harness.mjs';
import { parseIdempotencyKey, slotKey } from './lib/keys.mjs';
import { checkBufferPool, startPrivateMariaDb } from './lib/private-mariadb.mjs';
import { startSink } from './lib/sink.mjs';
import { growthCheck, killThatExplains, parseMarkCompactMb, parseVmRssKb, promValue, recoveryOf, victimOf } from './lib/soak-growth.mjs';
import { ROLES, soakMarkdown, soakPanels } from './lib/soak-report.mjs';
import { exactlyOnce, summarize } from './lib/stats.mjs';
import { renderChart } from './lib/svg.mjs';

/** The options, checked once: a bad value is one clear line. */
function parseOptions(a) {
  const number = (name, fallback, { min = 0, integer = false } = {}) => {
    const v = a[name] === undefined ? fallback : Number(a[name]);
    if (!Number.isFinite(v) || v < min || (integer && !Number.isInteger(v))) {
      throw new Error(`--${name} must be ${integer ? 'an integer' : 'a number'} ≥ ${min}, got ${a[name]}`);
    }
    return v;
  };
  const minutes = number('minutes', 20, { min: 2 });
  const o = {
    minutes,
    /**
     * Tasks firing every second = instances offered per second. Default 600: at 1,000/s this
     * 2-core machine is at its limit with nothing else running (docs/benchmarks.md, "Soak").
     */
    rate: number('rate', 600, { min: 1, integer: true }),
    killEveryS: number('kill-every-s', 120, { min: 5 }),
    sampleS: number('sample-s', 10, { min: 1 }),
    /** Minutes of a process's life before the growth check looks at it; default 5 (a shorter run: less). */
    warmupMin: number('warmup-min', Math.max(0, Math.min(5, minutes / 4)), { min: 0 }),
    /** Seconds of each window the growth check compares (a process's first after warm-up, its last). */
    windowS: number('window-s', Math.min(180, (minutes * 60) / 8), { min: 1 }),
    limitPct: number('limit-pct', 10, { min: 0 }),
    /** Processes of each role never killed (where a role has more): they live the whole run. */
    spare: number('spare', 1, { min: 0, integer: true }),
    drainS: number('drain-s', 60, { min: 0 }),
    outDir: path.resolve(a['out-dir'] ?? path.join(repoRoot, 'bench', 'results')),
    /** Seconds of the run at which every live process writes a heap snapshot; none by default. */
    heapSnapshotsS: (a['heap-snapshots-s'] ?? '')
      .split(',')
      .filter((x) => x.trim() !== '')
      .map((x) => {
        const v = Number(x);
        if (!Number.isFinite(v) || v <= 0 || v >= minutes * 60) throw new Error(`--heap-snapshots-s takes seconds within the ${minutes * 60} s run, got ${x}`);
        return v;
      })
      .sort((x, y) => x - y),
    /**
     * InnoDB buffer pool of the run's private MariaDB (`2G`, `512M`; default 2G), or null for
     * `--buffer-pool shared`: the shared test server, whose 128 MB pool is a tenth of what 20
     * minutes at 600/s write (its growth shows in every service's lag, not ax's own aging).
     */
    bufferPool: a['buffer-pool'] === 'shared' ? null : String(a['buffer-pool'] ?? '2G'),
    heapDir: path.resolve(a['heap-dir'] ?? path.join(os.tmpdir(), `ax-soak-heap-${new Date().toISOString().replace(/[:.]/g, '-')}`)),
  };
  const topology = {
    scheduler: number('schedulers', 2, { min: 1, integer: true }),
    broker: number('brokers', 2, { min: 1, integer: true }),
    worker: number('workers', 2, { min: 1, integer: true }),
  };
  if (o.bufferPool !== null) {
    try {
      o.bufferPool = checkBufferPool(o.bufferPool);
    } catch (error) {
      throw new Error(`${error instanceof Error ? error.message : String(error)} (or shared: the shared test server)`, { cause: error });
    }
  }
  if (o.warmupMin * 60 + 2 * o.windowS > minutes * 60) {
    throw new Error(`--warmup-min ${o.warmupMin} and two windows of --window-s ${o.windowS} do not fit in the --minutes ${minutes} run`);
  }
  return { o, topology };
}

let parsed;
try {
  parsed = parseOptions(args());
} catch (error) {
  process.stderr.write(`bench/soak.mjs: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
const { o: opts, topology: TOPOLOGY } = parsed;
const FINAL = new Set(['SUCCESS', 'FAILED', 'CANCELED']);
const CHECK_CHUNK_MS = 300_000;
const toSql = (ms) => new Date(ms).toISOString().slice(0, 23).replace('T', ' ');
const readOr = (file) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null; // the process is gone
  }
};

/** Writes soak.{json,md,svg} and returns the Markdown. */
function writeReport(result) {
  mkdirSync(opts.outDir, { recursive: true });
  const md = soakMarkdown(result);
  writeFileSync(path.join(opts.outDir, 'soak.json'), `${JSON.stringify(result, null, 1)}\n`);
  writeFileSync(path.join(opts.outDir, 'soak.md'), md);
  writeFileSync(path.join(opts.outDir, 'soak.svg'), renderChart(soakPanels(result), { title: `ax soak: ${opts.minutes} min at ${opts.rate}/s, kill -9 every ${opts.killEveryS} s` }));
  return md;
}

/**
 * For each process with two snapshots or more: its first against its last, by bench/heap-diff.mjs
 * in a process of its own (a snapshot takes about twice its heap to parse), into soak-heap.md.
 */
function writeHeapDiffs(series) {
  const sections = [`# Soak: heap growth per process\n\nSnapshots at s ${opts.heapSnapshotsS.join(', ')} of the run, in ${opts.heapDir}. Each table: kinds of objects (V8 node type and name) that grew from the process's first snapshot to its last, most added bytes first.\n`];
  for (const s of series) {
    const dir = path.join(opts.heapDir, s.id);
    let files;
    try {
      files = readdirSync(dir)
        .filter((f) => f.endsWith('.heapsnapshot'))
        .map((f) => path.join(dir, f))
        .sort((x, y) => statSync(x).mtimeMs - statSync(y).mtimeMs);
    } catch {
      continue; // no snapshot directory: started without snapshots
    }
    if (files.length < 2) continue;
    try {
      const md = execFileSync(process.execPath, ['--max-old-space-size=8192', path.join(repoRoot, 'bench', 'heap-diff.mjs'), '--before', files[0], '--after', files.at(-1), '--label', `${s.id} (s ${s.heapSnapshotsS?.[0]} → s ${s.heapSnapshotsS?.at(-1)})`], { encoding: 'utf8', maxBuffer: 16 << 20 });
      sections.push(`## ${s.id}\n\n${md}`);
    } catch (error) {
      sections.push(`## ${s.id}\n\nnot compared: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]}\n`);
    }
  }
  mkdirSync(opts.outDir, { recursive: true });
  writeFileSync(path.join(opts.outDir, 'soak-heap.md'), sections.join('\n'));
  log(`heap growth per process: ${path.relative(repoRoot, opts.outDir)}/soak-heap.md`);
}

await runScenario(async () => {
  const startedAt = new Date().toISOString();
  const load1mBefore = os.loadavg()[0];
  const sink = await startSink();
  onCleanup(() => sink.close());
  let serverUrl;
  if (opts.bufferPool !== null) {
    serverUrl = (await startPrivateMariaDb({ bufferPool: opts.bufferPool })).url;
  }
  const round = await createAxRound('soak', { serverUrl });
  const pool = round.db.pool;
  log(`database ${round.db.name}, namespace ${round.namespace}, data ${round.dataDir}`);

  /** Slots (a place a process fills) and series (one per process, JSON-clean); live process per slot. */
  const slots = [];
  const series = [];
  const live = new Map(); // slot name → { proc, series }
  const system = [];
  const kills = [];
  let t0 = Date.now();
  const tS = (ms = Date.now()) => Math.round((ms - t0) / 100) / 10;

  const startSlot = async (slot) => {
    const gen = slot.gen++;
    const id = `${slot.name}.g${gen}`;
    // --trace-gc: each full collection prints what the heap kept (the live heap of the growth
    // check); not the scavenges, a line each, many a second under load, which the soak ignores.
    const nodeArgs = ['--trace-gc', '--trace-gc-ignore-scavenger'];
    if (opts.heapSnapshotsS.length > 0) {
      mkdirSync(path.join(opts.heapDir, id), { recursive: true });
      nodeArgs.push('--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${path.join(opts.heapDir, id)}`);
    }
    const [proc] = await round.start(slot.role, 1, { name: id, nodeArgs, extraEnv: slot.workerId ? { AX_WORKER_ID: slot.workerId } : {} });
    const s = { id, role: slot.role, slot: slot.name, gen, pid: proc.pid, startedS: tS(), endedS: null, endedBy: null, scrapeErrors: 0, lastScrapeError: null, points: [] };
    series.push(s);
    // The least the heap kept after a full collection since the previous sample (null: none ran).
    const l = { proc, series: s, liveSinceSampleMb: null };
    proc.onLine(({ text }) => {
      const mb = parseMarkCompactMb(text);
      if (mb !== null) l.liveSinceSampleMb = l.liveSinceSampleMb === null ? mb : Math.min(l.liveSinceSampleMb, mb);
    });
    live.set(slot.name, l);
    return s;
  };

  // A signal stops the loop first (cleanups run in reverse order), waits for a kill/restart in
  // progress, and writes what was sampled as a partial report; then the round is removed.
  let stopping = false;
  let inFlight = Promise.resolve();
  let finished = false;
  const base = () => ({
    startedAt,
    options: { ...opts, outDir: path.relative(repoRoot, opts.outDir) },
    topology: TOPOLOGY,
    machine: { cores: os.cpus().length, load1mBefore, load1mAfter: os.loadavg()[0], node: process.version },
    windows: { warmupS: opts.warmupMin * 60, windowS: opts.windowS },
    t0: new Date(t0).toISOString(),
    series,
    system,
  });
  onCleanup(async () => {
    stopping = true;
    await inFlight.catch(() => undefined); // its error is the run's, reported by the main path
    if (finished) return;
    const recovery = recoveryOf(kills, system, opts.rate);
    const b = base();
    const growth = growthCheck(series, { ...b.windows, limitPct: opts.limitPct });
    writeReport({ ...b, status: 'interrupted', kills: kills.map((k, i) => ({ ...k, ...recovery[i] })), growth, checks: null, fails: ['the run did not finish (a signal or an error: see its output)'] });
    log(`partial report written to ${path.relative(repoRoot, opts.outDir)}/soak.md`);
  });

  for (const role of ['worker', 'broker']) {
    for (let i = 1; i <= TOPOLOGY[role]; i++) {
      const slot = { role, name: `${role}-${i}`, gen: 0, ...(role === 'worker' ? { workerId: `soak-w${i}` } : {}) };
      slots.push(slot);
      await startSlot(slot);
    }
  }
  const names = await insertTasks(pool, { count: opts.rate, prefix: 'soak', schedule: { type: 'cron', expr: '* * * * * *', timezone: 'UTC' }, url: sink.url });
  for (let i = 1; i <= TOPOLOGY.scheduler; i++) {
    const slot = { role: 'scheduler', name: `scheduler-${i}`, gen: 0 };
    slots.push(slot);
    await startSlot(slot);
  }
  // As in ax-steady: the run starts at the second second after the schedulers are ready.
  t0 = Math.ceil(Date.now() / 1000) * 1000 + 2_000;
  for (const s of series) s.startedS = 0;
  const endMs = t0 + opts.minutes * 60_000;
  log(`${opts.rate} tasks every second; run ${new Date(t0).toISOString()} + ${opts.minutes} min; kill -9 every ${opts.killEveryS} s`);
  await sleep(t0 - Date.now());

  let lastDbNowS = t0 / 1000;
  const sample = async () => {
    const t = tS();
    await Promise.all(
      [...live.values()].map(async (l) => {
        const { proc, series: s } = l;
        const liveHeapMb = l.liveSinceSampleMb;
        l.liveSinceSampleMb = null;
        const status = readOr(`/proc/${proc.pid}/status`);
        const rssKb = status === null ? null : parseVmRssKb(status);
        let fds = null;
        try {
          fds = readdirSync(`/proc/${proc.pid}/fd`).length;
        } catch (error) {
          s.lastScrapeError = `fd: ${error instanceof Error ? error.message : String(error)}`;
        }
        let text = '';
        try {
          const res = await fetch(`${round.httpUrl(proc)}/metrics`, { signal: AbortSignal.timeout(3_000) });
          text = await res.text();
          if (!res.ok) throw new Error(`HTTP ${res.status}`);
        } catch (error) {
          s.scrapeErrors += 1;
          s.lastScrapeError = `metrics: ${error instanceof Error ? error.message : String(error)}`;
        }
        const lag = promValue(text, 'nodejs_eventloop_lag_p99_seconds');
        const heap = promValue(text, 'nodejs_heap_size_used_bytes');
        const heapTotal = promValue(text, 'nodejs_heap_size_total_bytes');
        s.points.push({
          t,
          rssMb: rssKb === null ? null : Math.round(rssKb / 102.4) / 10,
          fds,
          lagP99Ms: lag === null ? null : Math.round(lag * 10_000) / 10,
          heapMb: heap === null ? null : Math.round(heap / 104_857.6) / 10,
          liveHeapMb,
          // What V8 has taken for its heap: RSS beyond it is the native side (buffers, SQLite, malloc).
          heapTotalMb: heapTotal === null ? null : Math.round(heapTotal / 104_857.6) / 10,
        });
      }),
    );
    const [[due], [[done]]] = await Promise.all([
      dueBacklog(pool),
      pool.query(
        `SELECT COUNT(*) AS n, UNIX_TIMESTAMP(NOW(3)) AS now FROM task_instance
          WHERE ended_at > FROM_UNIXTIME(?) AND ended_at <= NOW(3) AND state = 'SUCCESS'`,
        [lastDbNowS],
      ),
    ]);
    const nowS = Number(done.now);
    system.push({ t, backlog: due.backlog, pending: due.pending, successPerS: nowS > lastDbNowS ? Math.round(Number(done.n) / (nowS - lastDbNowS)) : null });
    lastDbNowS = nowS;
  };

  const kill = async (k) => {
    const { role, index } = victimOf(k, TOPOLOGY, ROLES, opts.spare);
    const slot = slots.filter((s) => s.role === role)[index];
    const victim = live.get(slot.name);
    const killedMs = Date.now();
    await round.kill(victim.proc, 'SIGKILL');
    victim.series.endedS = tS(killedMs);
    victim.series.endedBy = 'kill -9';
    live.delete(slot.name);
    const entry = { n: k + 1, t: tS(killedMs), victim: victim.series.id, victimPid: victim.proc.pid, replacement: null, replacementPid: null, restartMs: null, error: null };
    kills.push(entry);
    for (let attempt = 1; attempt <= 3 && !stopping; attempt++) {
      try {
        const s = await startSlot(slot);
        Object.assign(entry, { replacement: s.id, replacementPid: s.pid, restartMs: Date.now() - killedMs, error: null });
        break;
      } catch (error) {
        entry.error = (error instanceof Error ? error.message : String(error)).split('\n')[0];
        log(`replacement of ${victim.series.id} failed (attempt ${attempt}): ${entry.error}`);
        await sleep(5_000);
      }
    }
    if (!entry.replacement && !stopping) throw new Error(`no replacement for ${victim.series.id}: ${entry.error}`);
    log(`kill ${entry.n}: ${entry.victim} (pid ${entry.victimPid}) → ${entry.replacement} ready after ${entry.restartMs} ms`);
  };

  const pendingSnapshotsS = [...opts.heapSnapshotsS];
  let nextSampleMs = t0;
  let nextKillMs = t0 + opts.killEveryS * 1_000;
  let k = 0;
  while (!stopping && Date.now() < endMs) {
    if (nextKillMs < endMs && nextKillMs < nextSampleMs) {
      await sleep(nextKillMs - Date.now());
      if (stopping) break;
      inFlight = kill(k++);
      await inFlight;
      nextKillMs += opts.killEveryS * 1_000;
    } else {
      if (nextSampleMs >= endMs) {
        await sleep(endMs - Date.now());
        break;
      }
      await sleep(nextSampleMs - Date.now());
      if (stopping) break;
      inFlight = sample();
      await inFlight;
      nextSampleMs += opts.sampleS * 1_000;
      if (pendingSnapshotsS.length > 0 && tS() >= pendingSnapshotsS[0]) {
        pendingSnapshotsS.shift();
        for (const { proc, series: s } of live.values()) {
          process.kill(proc.pid, 'SIGUSR2');
          s.heapSnapshotsS = [...(s.heapSnapshotsS ?? []), tS()];
        }
        log(`heap snapshots asked of ${live.size} processes (into ${opts.heapDir})`);
      }
      if (system.length % 6 === 0) {
        const last = system.at(-1);
        log(`t=${last.t} s backlog ${last.backlog} SUCCESS ${last.successPerS}/s; RSS MB ${[...live.values()].map((l) => `${l.series.id} ${l.series.points.at(-1)?.rssMb}`).join(', ')}`);
      }
    }
  }
  if (stopping) throw new Error('stopped by signal');

  // The schedulers stop; what they created may drain; then everything stops and is checked.
  const schedulersStoppedMs = Date.now();
  for (const [name, l] of live) {
    l.series.endedS = tS();
    l.series.endedBy = 'end';
    if (l.series.role === 'scheduler') live.delete(name);
  }
  await round.stop('scheduler', 15_000);
  log(`schedulers stopped; draining for at most ${opts.drainS} s`);
  let drainedAfterS = null;
  while (Date.now() < schedulersStoppedMs + opts.drainS * 1_000) {
    const [due] = await dueBacklog(pool);
    // Slots are created up to 5 s ahead (precreate): they are due only after that.
    if (due.backlog === 0 && Date.now() > schedulersStoppedMs + 6_000) {
      drainedAfterS = Math.round((Date.now() - schedulersStoppedMs) / 100) / 10;
      break;
    }
    await sleep(1_000);
  }
  await round.stop(undefined, 15_000);
  live.clear();

  log('checking every slot and every sink call');
  const repairMs = Number(process.env.AX_FIRE_LOCK_TTL_MS ?? 30_000) + 2_000;
  const windowEnd = endMs - 2_000;
  const strictEnd = Math.min(windowEnd, schedulersStoppedMs - repairMs);
  const sum = (a, b) => ({ expected: a.expected + b.expected, duplicates: a.duplicates + b.duplicates, missing: a.missing + b.missing, unexpected: a.unexpected + b.unexpected });
  const zero = { expected: 0, duplicates: 0, missing: 0, unexpected: 0 };
  let instances = zero;
  let recent = zero;
  let executions = zero;
  const notSuccess = {};
  /** Runs a worker's kill interrupted (FAILED by design: the soak's tasks are not retried), per kill. */
  const interruptedByKill = {};
  /** Missing slots per checked chunk (seconds from the start): where the holes are. */
  const missingByChunk = [];
  for (let from = t0; from < windowEnd; from += CHECK_CHUNK_MS) {
    const to = Math.min(from + CHECK_CHUNK_MS, windowEnd);
    const rows = await instanceRows(pool, 'expected_time >= ? AND expected_time < ?', [toSql(from), toSql(to)]);
    const strictObserved = new Map();
    const recentObserved = new Map();
    const successKeys = [];
    for (const r of rows) {
      const key = slotKey(r.taskName, r.expectedMs, 1);
      const m = r.expectedMs < strictEnd ? strictObserved : recentObserved;
      m.set(key, (m.get(key) ?? 0) + 1);
      if (r.state === 'SUCCESS') successKeys.push(slotKey(r.taskName, r.expectedMs, r.runNo));
      else {
        const kill = r.state === 'FAILED' ? killThatExplains(r, kills, t0, opts.killEveryS * 1_000) : null;
        const label = FINAL.has(r.state) ? r.state : `${r.state} (not final)`;
        if (kill !== null) {
          const by = `kill ${kill.n} (${kill.victim}) ${r.reason}`;
          interruptedByKill[by] = (interruptedByKill[by] ?? 0) + 1;
        } else notSuccess[label] = (notSuccess[label] ?? 0) + 1;
      }
    }
    const strictKeys = [];
    const recentKeys = [];
    for (let t = from; t < to; t += 1_000) for (const n of names) (t < strictEnd ? strictKeys : recentKeys).push(slotKey(n, t, 1));
    const chunk = exactlyOnce(strictKeys, strictObserved);
    if (chunk.missing > 0) missingByChunk.push({ fromS: Math.round((from - t0) / 1000), toS: Math.round((to - t0) / 1000), missing: chunk.missing });
    instances = sum(instances, chunk);
    recent = sum(recent, exactlyOnce(recentKeys, recentObserved));
    executions = sum(executions, exactlyOnce(successKeys, new Map(successKeys.map((key) => [key, sink.counts.get(key) ?? 0]))));
  }
  // A second call of the same run anywhere is a duplicate; each is put down to the first kill at
  // or after its slot (the kill that interrupted it, most likely).
  let duplicateCalls = 0;
  const duplicateCallsByKill = {};
  const duplicateCallExamples = [];
  for (const [key, n] of sink.counts) {
    if (n <= 1) continue;
    duplicateCalls += n - 1;
    const parsed = parseIdempotencyKey(key);
    const by = parsed ? kills.find((x) => t0 + x.t * 1_000 >= parsed.expectedMs) : undefined;
    const label = by ? `kill ${by.n} (${by.victim})` : 'no kill after it';
    duplicateCallsByKill[label] = (duplicateCallsByKill[label] ?? 0) + n - 1;
    if (duplicateCallExamples.length < 10) duplicateCallExamples.push({ key, calls: n });
  }
  const startLags = sink.startLags(t0, windowEnd);
  // A slot with no instance is lost only when the misfire policy did not decide it: a scheduler
  // more than AX_MISFIRE_THRESHOLD_MS behind leaves its slots to the policy (fire_once: one run
  // for the gap, the rest counted on the task), by design.
  const [[misfire]] = await pool.query('SELECT COALESCE(SUM(skipped_count), 0) AS skipped, COALESCE(SUM(coalesced_count), 0) AS coalesced FROM task');
  const [unsuccessful] = await pool.query(`SELECT state, COALESCE(reason, '-') AS reason, COUNT(*) AS n FROM task_instance WHERE state <> 'SUCCESS' GROUP BY state, reason ORDER BY n DESC`);
  const checks = {
    checkedSeconds: Math.max(0, Math.round((strictEnd - t0) / 1000)),
    instances: { ...instances, duplicates: instances.duplicates + recent.duplicates },
    unrepairedAtStop: recent.missing,
    executions: { ...executions, duplicates: duplicateCalls },
    duplicateCallsByKill,
    duplicateCallExamples,
    notSuccess,
    interruptedByKill,
    notSuccessByReason: unsuccessful.map((r) => ({ state: r.state, reason: r.reason, n: Number(r.n) })),
    missingByChunk,
    misfire: { skipped: Number(misfire.skipped), coalesced: Number(misfire.coalesced) },
    drainedAfterS,
    sinkCalls: sink.total,
    earlyStarts: startLags.filter((lag) => lag < 0).length,
    startLagMs: summarize(startLags),
  };

  if (opts.heapSnapshotsS.length > 0) writeHeapDiffs(series);

  const b = base();
  const growth = growthCheck(series, { ...b.windows, limitPct: opts.limitPct });
  const recovery = recoveryOf(kills, system, opts.rate);
  const fails = [
    ...growth.filter((g) => g.fail).map((g) => `${g.id} ${g.metric} (${g.stat}) grew ${g.growthPct} % (${g.baseline.value} at s ${g.baseline.fromS}–${g.baseline.toS} → ${g.last.value} at s ${g.last.fromS}–${g.last.toS})`),
    ...(checks.instances.duplicates > 0 ? [`${checks.instances.duplicates} duplicate instances`] : []),
    ...(checks.instances.missing > checks.misfire.skipped + checks.misfire.coalesced
      ? [`${checks.instances.missing} missing slots (no instance), ${checks.instances.missing - checks.misfire.skipped - checks.misfire.coalesced} more than the misfire policy decided (skipped ${checks.misfire.skipped} + coalesced ${checks.misfire.coalesced})`]
      : []),
    ...(checks.executions.duplicates > 0 ? [`${checks.executions.duplicates} duplicate sink calls (same run called again)`] : []),
    ...(checks.executions.missing > 0 ? [`${checks.executions.missing} SUCCESS runs without a sink call`] : []),
    ...(checks.earlyStarts > 0 ? [`${checks.earlyStarts} calls before their fire time`] : []),
    ...(Object.keys(notSuccess).length > 0 ? [`instances not SUCCESS after the ${opts.drainS} s drain: ${Object.entries(notSuccess).map(([s, n]) => `${s} ${n}`).join(', ')}`] : []),
    ...kills.filter((x) => x.error && !x.replacement).map((x) => `no replacement for ${x.victim}: ${x.error}`),
  ];
  const result = { ...b, status: fails.length === 0 ? 'ok' : 'fail', endedAt: new Date().toISOString(), kills: kills.map((x, i) => ({ ...x, ...recovery[i] })), growth, checks, fails };
  finished = true;
  process.stderr.write(`\n${writeReport(result)}\n`);
  log(`report: ${path.relative(repoRoot, opts.outDir)}/soak.{md,svg,json}`);
  if (fails.length > 0) throw new Error(`soak FAIL: ${fails.length} problem(s): ${fails.join('; ')}`);
  return { status: 'ok', report: path.join(path.relative(repoRoot, opts.outDir), 'soak.md'), fails: [] };
});
