/**
 * The Markdown report of a bench run (pure: results object in, text out). Results shape: see
 * bench/run.mjs (`scenarios.<id> = { status, wallMs, budgetMs, result }`).
 */
import { pairedRatios } from './compare.mjs';

/** A Markdown table; cells are stringified, `|` escaped. */
export function markdownTable(headers, rows) {
  const cell = (v) => String(v ?? '—').replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const lines = [`| ${headers.map(cell).join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`];
  for (const row of rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
  return lines.join('\n');
}

const num = (v) => (v === null || v === undefined || Number.isNaN(v) ? '—' : Number(v).toLocaleString('en-US'));
/** `p50 / p95 / p99 / max` of a summary, or `—`. */
export function lagCell(s) {
  if (!s || !s.n) return '—';
  return `${num(s.p50)} / ${num(s.p95)} / ${num(s.p99)} / ${num(s.max)}`;
}
const dupMiss = (r) => {
  const checks = [r?.instances, r?.executions].filter((c) => typeof c === 'object' && c !== null);
  if (checks.length === 0) return ['—', '—'];
  return [checks.reduce((n, c) => n + c.duplicates, 0), checks.reduce((n, c) => n + c.missing, 0)];
};
/** Status of a scenario run: its own `status`, or the runner's (`timeout` = over budget). */
const statusOf = (s) => (s ? (s.status !== 'ok' ? s.status : (s.result?.status ?? 'ok')) : 'not run');
const verdict = (ok) => (ok === null ? '—' : ok ? 'met' : '**missed**');

/** Correctness problems (duplicates, missing) found anywhere in the run, as lines. */
export function correctnessProblems(results) {
  const out = [];
  for (const [id, s] of Object.entries(results.scenarios ?? {})) {
    const r = s.result;
    if (r?.earlyStarts > 0) out.push(`${id}: ${r.earlyStarts} job(s) called before their fire time`);
    for (const kind of ['instances', 'executions']) {
      const c = r?.[kind];
      if (typeof c === 'object' && c !== null && (c.duplicates > 0 || c.missing > 0)) {
        out.push(`${id}: ${kind} — ${c.duplicates} duplicate(s), ${c.missing} missing of ${c.expected}`);
      }
    }
  }
  return out;
}

/** #24 "defaults win the burst": ax as installed against both BullMQ peers, as a goal cell. */
function defaultsBurstGoal(r, sc) {
  const inproc = sc['bullmq-burst-2000-inproc']?.result?.allSuccessMs;
  const http = sc['bullmq-burst-2000']?.result?.allSuccessMs;
  if (r.allSuccessMs == null) return verdict(false);
  const vsInproc = inproc == null ? '—' : verdict(r.allSuccessMs <= inproc);
  const ratio = http == null ? null : r.allSuccessMs / http;
  return `≤ BullMQ in-process: ${vsInproc}; ≤ 0.35× BullMQ over HTTP (${ratio === null ? '—' : `${ratio.toFixed(2)}×`}): ${ratio === null ? '—' : verdict(ratio <= 0.35)}`;
}

/** #48: the traced burst against the same burst with tracing off: the time ratio and the spans received. */
function tracedBurstCell(r, sc) {
  const off = sc['ax-burst-2000-defaults']?.result?.allSuccessMs;
  const ratio = off == null || r.allSuccessMs == null ? '—' : `${(r.allSuccessMs / off).toFixed(2)}×`;
  const spans = r.tracing?.exported?.spans;
  return `tracing on / off: ${ratio}; ${spans == null ? '—' : num(spans)} spans exported`;
}

function burstSection(sc) {
  const rows = [];
  for (const [id, system, n, goal] of [
    ['ax-burst-2000', 'ax', 2_000, (r, peer) => verdict(peer?.allSuccessMs == null || r.allSuccessMs == null ? null : r.allSuccessMs <= peer.allSuccessMs && (r.startLagMs?.p99 ?? Infinity) <= 1_000)],
    ['ax-burst-2000-defaults', 'ax, service defaults (2 workers × 100 slots)', 2_000, (r) => defaultsBurstGoal(r, sc)],
    ['ax-burst-2000-traced', 'ax, service defaults, tracing on (OTLP to a local collector)', 2_000, (r) => tracedBurstCell(r, sc)],
    ['bullmq-burst-2000', 'BullMQ', 2_000, null],
    ['bullmq-burst-2000-inproc', 'BullMQ in-process (1 worker × 50, no-op function)', 2_000, null],
    ['ax-burst-10000', 'ax', 10_000, (r) => verdict(r.allSuccessMs == null ? false : r.allSuccessMs <= 5_000)],
    ['bullmq-burst-10000', 'BullMQ', 10_000, null],
  ]) {
    const s = sc[id];
    if (!s && (id.endsWith('-defaults') || id.endsWith('-inproc') || id.endsWith('-traced'))) continue; // older results have no such rows
    const r = s?.result ?? {};
    const [dup, miss] = dupMiss(r);
    const peer = sc[id.replace('ax-', 'bullmq-')]?.result;
    rows.push([system, num(r.tasks ?? n), num(r.allSuccessMs), lagCell(r.fireLagMs ?? r.pickupLagMs), lagCell(r.startLagMs), dup, miss,
      goal ? (s?.result ? goal(r, peer) : verdict(false)) : '', statusOf(s)]);
  }
  return markdownTable(
    ['system', 'tasks', 'all SUCCESS after fire (ms)', 'fire lag ms p50/p95/p99/max (BullMQ: pickup)', 'start lag ms p50/p95/p99/max', 'dup', 'missing', 'goal', 'status'],
    rows,
  );
}

/** #24: where a burst job's time went (ax-burst.mjs `phasesMs`), for the runs that measured it. */
export function burstPhasesSection(sc) {
  const rows = [];
  for (const [id, label] of [['ax-burst-2000', 'bench settings'], ['ax-burst-2000-defaults', 'service defaults'], ['ax-burst-10000', 'bench settings']]) {
    const p = sc[id]?.result?.phasesMs;
    if (!p) continue;
    rows.push([`${num(sc[id].result.tasks)} (${label})`, lagCell(p.claimWaitMs), lagCell(p.deliveryMs), lagCell(p.callToAppliedMs)]);
  }
  if (rows.length === 0) return '_no burst run measured its phases_';
  return markdownTable(
    ['burst', 'waiting for a claim: slot → dispatched (ms p50/p95/p99/max)', 'delivery: dispatched → call at the endpoint', 'way back: call → SUCCESS applied'],
    rows,
  );
}

function steadySection(sc) {
  const rows = [];
  for (const [id, system] of [['ax-steady', 'ax'], ['bullmq-steady', 'BullMQ']]) {
    const s = sc[id];
    const r = s?.result ?? {};
    const [dup, miss] = dupMiss(r);
    const goal = system === 'ax' && s?.result ? verdict((r.sustainedSuccessPerS ?? 0) >= 3_000) : '';
    const missCell = r.unrepairedAtStop > 0 ? `${miss} (+${num(r.unrepairedAtStop)} in the last ${Math.round((r.seconds ?? 0) - (r.checkedSeconds ?? 0))} s, not yet re-scanned, R2)` : miss;
    rows.push([system, num(r.offeredPerS), num(r.seconds), num(r.sustainedSuccessPerS), lagCell(r.fireLagMs ?? r.pickupLagMs),
      lagCell(r.startLagMs), num(r.backlogGrowthPerS), num(r.backlogAtStop), dup, missCell, r.skippedSlots === undefined ? 0 : num(r.skippedSlots), goal, statusOf(s)]);
  }
  return markdownTable(
    ['system', 'offered /s', 'window s', 'sustained SUCCESS /s', 'fire lag ms p50/p95/p99/max (BullMQ: pickup)', 'start lag ms p50/p95/p99/max',
      'backlog growth /s', 'backlog at end of window', 'dup', 'missing', 'slots skipped', 'goal ≥3,000/s', 'status'],
    rows,
  );
}

function schedulerSection(sc) {
  const rows = [];
  for (const id of ['ax-scheduler-1', 'ax-scheduler-3']) {
    const s = sc[id];
    const r = s?.result ?? {};
    const [dup, miss] = dupMiss(r);
    const ok = s?.result ? r.allCommittedPolledMs != null && r.allCommittedPolledMs <= 500 : null;
    rows.push([num(r.schedulers ?? Number(id.at(-1))), num(r.tasks), num(r.fireLagMs?.p50), num(r.fireLagMs?.p99), num(r.lastCreatedMs),
      num(r.allCommittedPolledMs), dup, miss, verdict(ok), statusOf(s)]);
  }
  return markdownTable(
    ['schedulers', 'tasks due at one second', 'fire lag p50 ms', 'fire lag p99 ms', 'last row created ms', 'all committed ms (polled)', 'dup', 'missing', 'goal ≤500 ms', 'status'],
    rows,
  );
}

/** CPU ms per job of a run: every process of ours and the servers, not the rest of the machine. */
function cpuMsPerJob(r) {
  const jobs = jobsOf(r);
  if (!jobs || !r?.cpu?.seconds) return null;
  return (OURS.reduce((t, n) => t + (r.cpu.seconds[n] ?? 0), 0) * 1000) / jobs;
}
const ms2 = (v) => (v === null || v === undefined ? '—' : v.toFixed(2));

/** #19: what job output costs — shell jobs printing nothing and 10 KB each (ax-output.mjs). */
export function outputSection(sc) {
  const silent = sc['ax-output-silent']?.result;
  const rows = [];
  for (const id of ['ax-output-silent', 'ax-output-10k']) {
    const s = sc[id];
    const r = s?.result ?? {};
    const ratio = silent?.sustainedPerS && r.sustainedPerS ? (r.sustainedPerS / silent.sustainedPerS).toFixed(2) : '—';
    rows.push([num(r.printBytes), num(r.succeeded), num(r.allDoneMs), num(r.sustainedPerS), ratio, r.logMbPerS ?? '—', ms2(cpuMsPerJob(r)), statusOf(s)]);
  }
  return markdownTable(['bytes printed per job', 'SUCCESS', 'all done ms', 'sustained /s', '× silent', 'log stored MB/s', 'CPU ms per job', 'status'], rows);
}

/** #24: CPU of every idle service process (ax-idle.mjs), % of one core over the window; goal ≤ 1 %. */
export function idleSection(sc) {
  const s = sc['ax-idle'];
  const r = s?.result;
  if (!r?.processes) return `_ax-idle: ${statusOf(s)}_`;
  const stacks = r.stacks.map((st) => st.label);
  const names = [...new Set(r.processes.map((p) => p.name))];
  const rows = names.map((name) => {
    const of = stacks.map((label) => r.processes.find((p) => p.stack === label && p.name === name));
    const worst = Math.max(...of.filter(Boolean).map((p) => p.cpuPct));
    return [name, ...of.map((p) => (p ? `${p.cpuPct.toFixed(2)} % (worst ${r.sampleS} s: ${p.maxWindowPct} %)` : '—')), verdict(worst <= r.goalPct)];
  });
  const title = (st) => (st.tasks > 0 ? `${st.label}: ${num(st.tasks)} tasks, next fire in ${st.fireInH} h` : `${st.label}: no task`);
  const table = markdownTable(['process', ...r.stacks.map(title), `goal ≤ ${r.goalPct} %`], rows);
  return `${table}\n\nWindow ${r.windowS} s after ${r.settleS} s of settling, service defaults; load average (1/5/15 min) ${r.load.before.join(' / ')} before, ` +
    `${r.load.after.join(' / ')} after; machine busy ${r.machinePct} % of one core (${r.cores} cores, all users); status ${statusOf(s)}.` +
    (r.profiled ? ' **Profiled** (`--cpu-prof` costs each process about 2.5 % of a core): not a goal measurement.' : '');
}

/**
 * #24 "history at scale" (ax-history.mjs): each admin-api read at `clients` concurrent clients
 * against p99 ≤ 100 ms, then the scheduler on 100,000 tasks (start, RSS, each minute's refill).
 */
export function historySection(sc) {
  const s = sc['ax-history'];
  const r = s?.result;
  if (!r) return `_ax-history: ${statusOf(s)}_`;
  const p = r.params ?? {};
  const parts = [
    `${num(p.tasks)} tasks (${num(p.everyMinute)} every minute), ${num(p.instances)} instances over ${num(p.days)} days, ` +
      `InnoDB buffer pool ${r.bufferPool ?? '?'}; ${r.history?.built ? 'built in this run' : `built ${r.history?.builtAt ?? 'earlier'}, reused`}; status ${statusOf(s)}.`,
    '',
  ];
  if ((r.api ?? []).length > 0) {
    parts.push(markdownTable(
      ['read', 'p50 ms', 'p99 ms', 'max ms', 'answered /s', 'failed', `goal p99 ≤ ${num(r.goals?.apiP99Ms ?? 100)} ms`],
      r.api.map((e) => [e.name, num(e.p50Ms), num(e.p99Ms), num(e.maxMs), num(e.perS), e.failed > 0 ? `${num(e.failed)} (${e.failures?.[0] ?? ''})` : 0, verdict(e.goal === 'met')]),
    ), '');
  }
  if ((r.apiProfiles ?? []).length > 0) {
    parts.push('### Where the missed reads\' time goes', '',
      'Each read that missed its goal once more after the measured ones, alone, against a fresh admin-api under `--cpu-prof`; ' +
        'its profile covers the measured loop only. The profiler slows admin-api: these latencies are not the goal\'s.', '');
    for (const e of r.apiProfiles) {
      parts.push(`**${e.name}**: ${num(e.perS)} answered/s, p99 ${num(e.p99Ms)} ms under the profiler; over the ${e.cpu?.windowS ?? '?'} s loop ` +
        `admin-api used ${e.cpu?.adminApiPct ?? '?'} % of a core and MariaDB ${e.cpu?.mariadbPct ?? '?'} %.`, '');
      parts.push(profileSection(e.profiles), '');
    }
  }
  if (r.rollup) {
    parts.push(`The past days' hourly figures (\`stats: hourly, a past day\`) are read from their rollup: admin-api rolled up ${num(r.rollup.days)} days in ${r.rollup.seconds} s after its start, before the reads were measured.`, '');
  }
  const sched = r.scheduler ?? {};
  if (sched.startS !== undefined) {
    const rss = Math.max(sched.maxRssMb ?? 0, sched.peakRssMb ?? 0);
    const rows = [
      [`start: every task cached (${num(sched.enabledTasks)} enabled)`, `${sched.startS} s`, `≤ ${r.goals?.schedulerStartS ?? 10} s: ${verdict(sched.startGoal === 'met')}`],
      ['RSS: highest sample / peak (VmHWM)', `${num(sched.maxRssMb)} / ${num(sched.peakRssMb)} MB`, `≤ ${r.goals?.schedulerRssMb ?? 400} MB: ${verdict(rss <= (r.goals?.schedulerRssMb ?? 400))}`],
      ...(sched.cpuPct === undefined ? [] : [['CPU after the start, % of one core', `${sched.cpuPct} %`, '']]),
      ...(sched.minutes ?? []).map((m) => [`refill of slot ${m.slot}: instances / due, last committed after the slot`,
        `${num(m.created)} / ${num(m.due)}, ${num(m.lastCommitMs)} ms`, `all, ≤ ${num(r.goals?.refillLateMs ?? 1_000)} ms: ${verdict(m.goal === 'met')}`]),
    ];
    const capped = r.schedulerCapped;
    if (capped) {
      // Not the goal's verdict (that is on the defaults): what NODE_OPTIONS=--max-old-space-size trades.
      const cappedRss = Math.max(capped.maxRssMb ?? 0, capped.peakRssMb ?? 0);
      rows.push(
        [`with \`--max-old-space-size=${capped.heapMb}\`: RSS highest sample / peak`, `${num(capped.maxRssMb)} / ${num(capped.peakRssMb)} MB`, `≤ ${r.goals?.schedulerRssMb ?? 400} MB: ${verdict(cappedRss <= (r.goals?.schedulerRssMb ?? 400))}`],
        [`with \`--max-old-space-size=${capped.heapMb}\`: start, CPU after it`, `${capped.startS} s, ${capped.cpuPct} %`, `slots complete: ${verdict((capped.minutes ?? []).length > 0 && capped.minutes.every((m) => m.goal === 'met'))}`],
      );
    }
    parts.push(markdownTable(['scheduler on the history', 'measured', 'goal'], rows), '');
  }
  parts.push('Retention purge while dispatching: see its own section (`ax-purge`).');
  return parts.join('\n');
}

/**
 * #24 "a retention purge of 1,000,000 expired instances while dispatching 1,000/s raises start
 * lag p99 by ≤ 20 %" (ax-purge.mjs): each phase's start lag and SUCCESS rate, the p99 ratio B / A
 * against the goal, what the purge removed and how fast. Not measured when nothing was purged.
 */
export function purgeSection(sc) {
  const s = sc['ax-purge'];
  const r = s?.result;
  if (!r?.phases) return `_ax-purge: ${statusOf(s)}_`;
  const p = r.params ?? {};
  const [a, b] = r.phases;
  const goalRatio = r.goalRatio ?? 1.2;
  const purge = r.purge ?? {};
  const measured = (purge.purged ?? 0) > 0 && r.startLagP99Ratio != null && a?.keptUp !== false;
  const why = (purge.purged ?? 0) === 0 ? 'nothing purged' : 'the stack did not keep up with the load in phase A';
  const goalCell = measured ? verdict(r.startLagP99Ratio <= goalRatio) : `not measured (${why})`;
  const md = r.missingDetail;
  const [dup, miss] = dupMiss(r);
  const rows = [a, b].map((x, i) => [
    i === 0 ? 'A: load alone' : 'B: load + retention purge',
    num(x.seconds),
    num(p.rate),
    num(x.sustainedSuccessPerS),
    lagCell(x.startLagMs),
    num(x.backlogAtEnd),
    x.keptUp === undefined ? '—' : x.keptUp ? 'yes' : '**no**',
  ]);
  return [
    `${num(p.expired)} expired instances (with executions, events, logs) on a private MariaDB (buffer pool ${p.bufferPool ?? '?'}), built in ${num(r.build?.totalS)} s; ` +
      `${num(p.rate)} tasks \`* * * * * *\`, 1 scheduler, 1 broker, 2 workers; retention ${num(p.retentionDays)} days, a pass every ${num(p.retentionPeriodMs)} ms, batches of ${num(p.batchSize)}; ` +
      `phase B on a second scheduler started with retention on (handoff ${num(r.handoffMs)} ms); status ${statusOf(s)}.`,
    '',
    markdownTable(['phase', 'seconds', 'offered /s', 'sustained SUCCESS /s', 'start lag ms p50/p95/p99/max', 'backlog at end', 'kept up (SUCCESS ≥ 95 %, backlog ≤ 2 s of load throughout)'], rows),
    '',
    markdownTable(['figure', 'measured', 'goal'], [
      ['start lag p99, B / A', r.startLagP99Ratio == null ? '—' : `${r.startLagP99Ratio.toFixed(2)}× (${num(a?.startLagMs?.p99)} → ${num(b?.startLagMs?.p99)} ms)`, `≤ ${goalRatio.toFixed(2)}×: ${goalCell}`],
      ['expired instances purged, from the handoff to the end of B', `${num(purge.purged)} of ${num(p.expired)}${purge.done ? ', all' : `, ${num(purge.expiredLeft)} left`}`, ''],
      ['purge rate', purge.perS == null ? '—' : `${num(purge.perS)} instances/s over ${num(purge.seconds)} s`, ''],
      ...(a?.cpuCores && b?.cpuCores ? [['CPU per process, cores: A → B (where the purge\'s cost lands)', cpuShift(a.cpuCores, b.cpuCores), '']] : []),
      ['exactly once (instances per slot, calls per slot)', `${num(dup)} dup, ${num(miss)} missing${r.unrepairedAtStop > 0 ? ` (+${num(r.unrepairedAtStop)} not yet re-scanned at the stop, R2)` : ''}` +
        `${md ? `; task counters: ${num(md.taskCoalescedCount)} coalesced, ${num(md.taskSkippedCount)} skipped (misfire policy)` : ''}`, '0 and 0'],
    ]),
  ].join('\n');
}

/** `{ mariadb: 0.6, … }` of two phases → "mariadb 0.60 → 0.95 · …", the largest change first. */
function cpuShift(a, b) {
  return Object.keys(b)
    .filter((k) => a[k] !== undefined && k !== 'machine')
    .sort((x, y) => Math.abs(b[y] - a[y]) - Math.abs(b[x] - a[x]))
    .map((k) => `${CPU_LABEL[k] ?? k} ${a[k].toFixed(2)} → ${b[k].toFixed(2)}`)
    .concat(a.machine !== undefined && b.machine !== undefined ? [`machine ${a.machine.toFixed(2)} → ${b.machine.toFixed(2)}`] : [])
    .join(' · ');
}

/** What a figure of a scenario is, for the old-against-new table: [label, value, higher is better]. */
const BASELINE_FIGURES = {
  'ax-output-silent': (r) => ['sustained SUCCESS /s', r?.sustainedPerS ?? null, true],
  'ax-throughput-1': (r) => ['sustained SUCCESS /s', r?.sustainedPerS ?? null, true],
  'ax-burst-2000': (r) => ['all SUCCESS after fire (ms)', r?.allSuccessMs ?? null, false],
  'ax-burst-2000-defaults': (r) => ['all SUCCESS after fire (ms)', r?.allSuccessMs ?? null, false],
};

/**
 * `--baseline <commit>`: each compared scenario run against that commit in alternating rounds
 * (compare.mjs); the goal is judged on the median of the rounds' new/old ratios.
 */
export function baselineSection(results) {
  const sc = results.scenarios ?? {};
  if (!results.baseline) return '_not run: `pnpm bench --baseline <commit>` runs these against an older commit in the same minutes_';
  const rows = [];
  const x = (v) => (v === null ? '—' : `${v.toFixed(2)}×`);
  for (const [id, figure] of Object.entries(BASELINE_FIGURES)) {
    const value = pairedRatios(sc, id, (r) => figure(r)[1]);
    if (value.rounds.length === 0) continue;
    const cpu = pairedRatios(sc, id, cpuMsPerJob);
    const [label, , higherBetter] = figure(undefined);
    const rounds = value.rounds
      .map((r, i) => `${r.first === 'current' ? 'new first' : 'old first'}: ${num(r.baseline)} → ${num(r.current)}, CPU ${ms2(cpu.rounds[i].baseline)} → ${ms2(cpu.rounds[i].current)}`)
      .join('; ');
    const spread = value.rounds.length > 1 && value.minRatio !== null ? ` (${value.minRatio.toFixed(2)}–${value.maxRatio.toFixed(2)})` : '';
    const goal = id === 'ax-output-silent' && value.medianRatio !== null ? `median ≥ 0.95× old: ${verdict(value.medianRatio >= 0.95)}` : '';
    rows.push([id, `${label}${higherBetter ? '' : ' (lower is better)'}`, value.rounds.length, rounds, `${x(value.medianRatio)}${spread}`, x(cpu.medianRatio), goal]);
  }
  return markdownTable(
    ['scenario', 'figure', 'rounds', `per round: old (${results.baseline.commit.slice(0, 12)}) → new, CPU ms per job old → new`, 'new / old (median, range)', 'CPU per job new / old (median)', 'goal'],
    rows,
  );
}

/** #22: how late retries and ACK-timeout re-routes happen (timers.mjs). */
export function timersSection(sc) {
  const s = sc.timers;
  const r = s?.result ?? {};
  const p99 = (x) => x?.p99 ?? null;
  const cell = (x) => (x?.n ? `${lagCell(x)} (n ${num(x.n)})` : '—');
  return markdownTable(
    ['what', 'lateness ms p50/p95/p99/max', 'goal', 'status'],
    [
      ['retry: next attempt dispatched after its due time (DB clock)', cell(r.retryLatenessMs), s?.result ? `p99 ≤ 100 ms: ${verdict(p99(r.retryLatenessMs) !== null && p99(r.retryLatenessMs) <= 100)}` : '', statusOf(s)],
      ['retry at the endpoint: gap from failed answer to next call, minus the backoff', cell(r.retryGapOverBackoffMs), s?.result ? `≤ 150 ms: ${verdict(r.retryGapOverBackoffMs?.max != null && r.retryGapOverBackoffMs.max <= 150)}` : '', statusOf(s)],
      // A run with no re-route measured nothing (the rounds of 16fd0e5–e6b5e54 froze a worker,
      // which the broker now rightly waits for): say so instead of calling the timer late.
      ['re-route: ACK_TIMEOUT after ack_deadline + 3 s', cell(r.rerouteLatenessMs),
        !s?.result ? '' : r.rerouteLatenessMs?.n ? `≤ 500 ms: ${verdict(r.rerouteLatenessMs.max <= 500)}` : 'not measured: no re-route happened', statusOf(s)],
    ],
  );
}

function throughputSection(sc) {
  const rows = [];
  for (const id of ['ax-throughput-1', 'ax-throughput-2']) {
    const s = sc[id];
    const r = s?.result ?? {};
    const [dup, miss] = dupMiss(r);
    const ok = s?.result ? (r.sustainedPerS ?? 0) >= 3_000 : null;
    rows.push([num(r.topology?.brokers ?? Number(id.at(-1))), num(r.topology?.workers), num(r.instances), num(r.succeeded),
      num(r.sustainedPerS), num(r.overallPerS), num(r.storage?.bytesPerInstance), dup, miss, verdict(ok), statusOf(s)]);
  }
  return markdownTable(
    ['brokers', 'workers', 'PENDING at start', 'SUCCESS', 'sustained /s (middle 80 %)', 'overall /s', 'MySQL bytes per instance', 'dup', 'missing', 'goal ≥3,000/s', 'status'],
    rows,
  );
}

function limitsSection(sc) {
  const r = sc.limits?.result;
  if (!r) return `_limits: ${statusOf(sc.limits)}_`;
  const best = Math.max(
    sc['ax-throughput-1']?.result?.sustainedPerS ?? 0,
    sc['ax-throughput-2']?.result?.sustainedPerS ?? 0,
    sc['ax-steady']?.result?.sustainedSuccessPerS ?? 0,
  );
  const frac = (x, of) => (of ? `${((x / of) * 100).toFixed(1)} %` : '—');
  return markdownTable(
    ['probe', 'rate /s', 'ax best instances/s as a fraction'],
    [
      ['RabbitMQ persistent publish with confirms', num(r.rabbitmq?.publishConfirmedPerS), ''],
      ['RabbitMQ consume + ack', num(r.rabbitmq?.consumeAckPerS), ''],
      ['RabbitMQ publish-confirm + consume at once (round trip)', num(r.rabbitmq?.roundTripPerS), frac(best, r.rabbitmq?.roundTripPerS)],
      [`MariaDB batched INSERT into task_instance (${r.mariadb?.batch} rows/statement)`, num(r.mariadb?.batchedInsertRowsPerS), frac(best, r.mariadb?.batchedInsertRowsPerS)],
      [`MariaDB batched UPDATE of task_instance (${r.mariadb?.batch} ids/statement)`, num(r.mariadb?.batchedUpdateRowsPerS), frac(best, r.mariadb?.batchedUpdateRowsPerS)],
    ],
  );
}

function profileSection(profiles) {
  if (!profiles || Object.keys(profiles).length === 0) return '_no CPU profiles_';
  const parts = [];
  for (const [service, p] of Object.entries(profiles)) {
    parts.push(`#### ${service} (${p.files} process${p.files > 1 ? 'es' : ''}: busy ${num(p.busyMs)} ms of ${num(p.totalMs)} ms)`);
    parts.push(`By area: ${p.areas.map((x) => `${x.area} ${x.pct} %`).join(' · ')}`);
    parts.push('');
    parts.push(markdownTable(['#', 'function', 'file', 'self ms', '% of busy'], p.top.map((f, i) => [i + 1, f.name, f.url || '(native)', num(f.selfMs), f.pct])));
    parts.push('');
    if (p.inclusive?.length > 0) {
      parts.push(`Time under ax's own functions (inclusive, once per stack): ${p.inclusive.map((f) => `\`${f.name}\` (${f.url}) ${f.pct} %`).join(' · ')}`);
      parts.push('');
    }
  }
  return parts.join('\n');
}

/**
 * #24 steady: where a saturated steady load's time goes, from `ax-steady-profile` (ax-steady
 * under `--cpu-prof` on a private MariaDB logging every statement): CPU per process, the Node
 * profiles, and MariaDB's statements by shape.
 */
export function steadyProfileSection(sc) {
  const s = sc['ax-steady-profile'];
  const r = s?.result;
  if (!r?.cpu) return `_ax-steady-profile: ${statusOf(s)}_`;
  const cpu = r.cpu.seconds ?? {};
  const perProcess = Object.entries(cpu)
    .filter(([k]) => k !== 'machine')
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${CPU_LABEL[k] ?? k} ${v.toFixed(1)} s`)
    .join(' · ');
  const d = r.mysqlDigest;
  const lines = [
    `${num(r.offeredPerS)} tasks firing every second for ${num(r.seconds)} s under the profiler: ${num(r.sustainedSuccessPerS)} SUCCESS/s sustained ` +
      `(the profiler's cost included: compare profiled runs with profiled runs only). CPU over the ${r.cpu.windowS} s window: ${perProcess}; ` +
      `the machine ${cpu.machine == null ? '—' : `${(cpu.machine / r.cpu.windowS).toFixed(2)} cores`}.`,
    '',
    '### Node: CPU profiles over the window (self time, idle excluded)',
    '',
    profileSection(r.profiles),
    '### MariaDB: its statements over the window, by shape',
    '',
  ];
  if (!d || d.statements === 0) {
    lines.push('_no statement log_');
  } else {
    lines.push(
      `A private MariaDB (buffer pool ${d.bufferPool}) with \`long_query_time=0\`: ${num(d.statements)} statements, ${num(Math.round(d.seconds * 10) / 10)} s of statement time ` +
        '(wall time per statement, lock waits included); the shapes with the most of it:',
      '',
      markdownTable(
        ['statement (literals folded)', 'share of the time', 'count', 'mean ms', 'rows examined'],
        d.top.map((e) => [`\`${e.shape.replaceAll('`', "'")}\``, `${e.share} %`, num(e.count), e.meanMs, num(e.rowsExamined)]),
      ),
    );
  }
  return lines.join('\n');
}

const CPU_NAMES = ['scheduler', 'broker', 'worker', 'admin-api', 'bench', 'mariadb', 'rabbitmq', 'redis', 'machine'];
const CPU_LABEL = { 'admin-api': 'admin-api (the workers\' enrollment)', bench: 'bench process (sink)', machine: 'whole machine (all users)' };
const OURS = ['scheduler', 'broker', 'worker', 'admin-api', 'bench', 'mariadb', 'rabbitmq', 'redis'];

/** Jobs completed in a run (for CPU per job). */
const jobsOf = (r) => r.succeeded ?? r.finalStates?.SUCCESS ?? (r.system === 'bullmq' && r.mode === 'burst' ? r.tasks : null);

/**
 * Where the CPU went during the measured windows: seconds and cores (seconds / window) per
 * process, then CPU ms per job and the rate two idle cores would allow at that cost.
 */
export function cpuSection(sc) {
  const runs = [
    ['ax-burst-10000', `ax burst ${num(sc['ax-burst-10000']?.result?.tasks)}`],
    ['bullmq-burst-10000', `BullMQ burst ${num(sc['bullmq-burst-10000']?.result?.tasks)}`],
    ['ax-throughput-1', 'ax #4, 1 broker'],
    ['ax-throughput-2', 'ax #4, 2 brokers'],
    ['ax-steady', 'ax steady'],
    ['bullmq-steady', 'BullMQ steady'],
  ].filter(([id]) => sc[id]?.result?.cpu?.seconds);
  if (runs.length === 0) return '_no CPU figures_';
  const rows = CPU_NAMES.map((n) => [
    CPU_LABEL[n] ?? n,
    ...runs.map(([id]) => {
      const c = sc[id].result.cpu;
      const secs = c.seconds[n];
      return secs === undefined ? '—' : `${secs.toFixed(1)} s (${(secs / c.windowS).toFixed(2)} cores)`;
    }),
  ]);
  const perJob = runs.map(([id]) => cpuMsPerJob(sc[id].result));
  rows.push(['**CPU ms per job** (all processes above but the machine)', ...perJob.map((ms) => (ms === null ? '—' : `**${ms.toFixed(2)}**`))]);
  rows.push(['jobs/s two idle cores would allow at that cost', ...perJob.map((ms) => (ms === null ? '—' : num(Math.round(2000 / ms))))]);
  return markdownTable(['process', ...runs.map(([id, title]) => `${title} (${sc[id].result.cpu.windowS} s)`)], rows);
}

/** The whole report. */
export function renderReport(results) {
  const sc = results.scenarios ?? {};
  const problems = correctnessProblems(results);
  const overBudget = Object.entries(sc).filter(([, s]) => s.status === 'timeout').map(([id]) => id);
  const lines = [
    `# ax benchmarks — ${results.startedAt ?? ''}`,
    '',
    `Machine: ${results.machine?.cores ?? '?'} cores, ${results.machine?.memGb ?? '?'} GB, Node ${results.machine?.node ?? '?'}; MariaDB, Redis and RabbitMQ on the same machine. ` +
      `Wall time of the run: ${num(Math.round((results.wallMs ?? 0) / 1000))} s.`,
    '',
  ];
  if (problems.length > 0) {
    lines.push('## ⚠ CORRECTNESS: DUPLICATES, MISSING OR EARLY RUNS', '', ...problems.map((p) => `- **${p}**`), '');
  }
  if (overBudget.length > 0) lines.push(`**Over budget (stopped):** ${overBudget.join(', ')}`, '');
  lines.push(
    '## Burst: N tasks, same 6-field cron, due at the same second (no-op HTTP)',
    '',
    burstSection(sc),
    '',
    'Where a job of the burst spent its time (first attempts that succeeded; one machine, one clock):',
    '',
    burstPhasesSection(sc),
    '',
    `## Steady: every task fires every second (window ${sc['ax-steady']?.result?.seconds ?? '?'} s)`,
    '',
    steadySection(sc),
    '',
    '## Scheduler alone (#3): 10,000 due at one second',
    '',
    schedulerSection(sc),
    '',
    '## Dispatch throughput PENDING → SUCCESS (#4): everything due at once, 2 workers',
    '',
    throughputSection(sc),
    '',
    '## Idle (#24): CPU of each service process when nothing is due, % of one core',
    '',
    idleSection(sc),
    '',
    '## History at scale (#24): the admin API and the scheduler on months of history',
    '',
    historySection(sc),
    '',
    '## Retention purge while dispatching (#24): start lag p99 with the purge ≤ 1.2× without',
    '',
    purgeSection(sc),
    '',
    '## Job output (#19): shell jobs printing nothing and 10 KB each, 2 workers of 16 slots, 1 broker',
    '',
    outputSection(sc),
    '',
    '## Old against new, in the same minutes (`--baseline`)',
    '',
    baselineSection(results),
    '',
    '## Timers (#22): retries and re-routes on an idle stack, default timings (timers poll 1 s)',
    '',
    timersSection(sc),
    '',
    '## Where the CPU went (2 cores; the servers and the machine include other users\' work)',
    '',
    cpuSection(sc),
    '',
    '## Limits of this machine',
    '',
    limitsSection(sc),
    '',
    `## CPU profiles during the ${num(sc['ax-burst-10000']?.result?.tasks)}-task burst (self time, idle excluded)`,
    '',
    `Samples from 0.5 s before the fire time to 0.5 s after the last SUCCESS (${num(sc['ax-burst-10000']?.result?.profileWindowMs)} ms), per service; ` +
      'the `.cpuprofile` files under bench/results/profiles/ hold the whole life of each process.',
    '',
    profileSection(sc['ax-burst-10000']?.result?.profiles),
    '',
    '## Where the steady load\'s time goes (#24): a profiled run, Node\'s CPU and MariaDB\'s statements',
    '',
    steadyProfileSection(sc),
    '',
    '## Scenario runs',
    '',
    markdownTable(
      ['scenario', 'status', 'wall s', 'budget s', 'load avg (1 min) before'],
      Object.entries(sc).map(([id, s]) => [id, statusOf(s), (s.wallMs / 1000).toFixed(1), (s.budgetMs / 1000).toFixed(0), s.load1mBefore]),
    ),
    '',
  );
  return lines.join('\n');
}
