/**
 * The report of a soak run (bench/soak.mjs): Markdown and chart panels from its result object.
 * Pure: result in, text / panels out. The result's shape is built in bench/soak.mjs.
 */
import { markdownTable } from './table.mjs';

const PALETTE = ['#2b6cb0', '#c05621', '#2f855a', '#6b46c1', '#b7791f', '#00a3c4', '#d53f8c', '#4a5568', '#9c4221', '#276749'];
export const ROLES = ['scheduler', 'broker', 'worker'];
const num = (v, digits = 0) =>
  v === null || v === undefined || !Number.isFinite(v) ? '—' : Number(v).toLocaleString('en-US', { maximumFractionDigits: digits });
const pct = (v) => (v === null || v === undefined ? '—' : `${v > 0 ? '+' : ''}${num(v, 1)} %`);

/** First value / lowest and highest after the process's warm-up / last value of a series' field. */
function firstRangeLast(series, field, warmupS) {
  const values = series.points.filter((p) => p[field] !== null && p[field] !== undefined);
  const after = values.filter((p) => p.t >= (series.startedS ?? 0) + warmupS).map((p) => p[field]);
  const range = after.length === 0 ? '—' : `${num(Math.min(...after), 1)}–${num(Math.max(...after), 1)}`;
  return `${num(values[0]?.[field], 1)} / ${range} / ${num(values.at(-1)?.[field], 1)}`;
}

const STAT_NAME = { min: 'floor', mean: 'mean' };

function growthSection(r) {
  const byProcess = new Map();
  for (const row of r.growth) {
    if (!byProcess.has(row.id)) byProcess.set(row.id, []);
    byProcess.get(row.id).push(row);
  }
  const cell = (rows, metric) => {
    const g = rows.find((x) => x.metric === metric);
    if (!g || !g.judged) return '—';
    const text = `${num(g.baseline.value, 1)} → ${num(g.last.value, 1)} (${pct(g.growthPct)})`;
    return g.fail ? `**${text}**` : text;
  };
  const judged = [...byProcess].filter(([, rs]) => rs[0].judged);
  const rows = judged.map(([id, rs]) => [
    id,
    `${num(rs[0].baseline.fromS)}–${num(rs[0].baseline.toS)} → ${num(rs[0].last.fromS)}–${num(rs[0].last.toS)}`,
    cell(rs, 'rssMb'),
    cell(rs, 'liveHeapMb'),
    cell(rs, 'fds'),
    cell(rs, 'lagP99Ms'),
    rs.some((x) => x.fail) ? '**FAIL**' : rs.every((x) => x.growthPct === null) ? 'no samples' : 'ok',
  ]);
  const short = [...byProcess].filter(([, rs]) => !rs[0].judged).map(([id]) => id);
  const { warmupS, windowS } = r.windows;
  const stats = Object.entries(STAT_NAME).map(([stat, name]) => `${name}: ${[...new Set(r.growth.filter((g) => g.stat === stat).map((g) => g.metric))].join(', ')}`).join('; ');
  return [
    `## Growth: each process, its first ${num(windowS)} s after ${num(warmupS)} s of life against its last ${num(windowS)} s, limit +${r.options.limitPct} %`,
    '',
    `A process is compared with itself: a leak is a process that keeps more the longer it runs. Each window is summed up by one figure (${stats}): RSS by its floor, the lowest sample, because a Node process's RSS follows the peaks of V8's GC sawtooth, which rise as V8 raises its own threshold, while what a leak raises is what stays after GC (RSS also holds what V8 has not given back); the heap by what it kept after its full collections (\`--trace-gc\`), the live objects, where heap used also counts the garbage of the cycle in progress. Not judged (less than ${num(warmupS)} s + two windows of life): ${short.join(', ') || 'none'}.`,
    '',
    markdownTable(['process', 'windows (s of the run)', 'RSS MB (floor)', 'heap after full GC MB (floor)', 'open files', 'event-loop lag p99 ms', 'verdict'], rows),
  ].join('\n');
}

function processSection(r) {
  const parts = ['## Processes', '', 'Each cell: first sample / lowest–highest after the warm-up / last sample.'];
  for (const role of ROLES) {
    const series = r.series.filter((s) => s.role === role);
    if (series.length === 0) continue;
    parts.push('', `### ${role}`, '');
    parts.push(
      markdownTable(
        ['process', 'pid', 'lived (s)', 'ended by', 'RSS MB', 'open files', 'lag p99 ms', 'heap used MB', 'heap after full GC MB', 'V8 heap total MB', 'scrape errors'],
        series.map((s) => [
          s.id,
          s.pid,
          `${num(s.startedS)}–${s.endedS === null ? 'end' : num(s.endedS)}`,
          s.endedBy ?? '—',
          firstRangeLast(s, 'rssMb', r.windows.warmupS),
          firstRangeLast(s, 'fds', r.windows.warmupS),
          firstRangeLast(s, 'lagP99Ms', r.windows.warmupS),
          firstRangeLast(s, 'heapMb', r.windows.warmupS),
          firstRangeLast(s, 'liveHeapMb', r.windows.warmupS),
          firstRangeLast(s, 'heapTotalMb', r.windows.warmupS),
          s.scrapeErrors,
        ]),
      ),
    );
  }
  return parts.join('\n');
}

function minuteSection(r) {
  const minutes = Math.ceil(r.options.minutes);
  const rows = [];
  for (let m = 0; m < minutes; m++) {
    const inMinute = r.system.filter((s) => s.t >= m * 60 && s.t < (m + 1) * 60);
    const rates = inMinute.map((s) => s.successPerS).filter((v) => v !== null);
    const kills = r.kills.filter((k) => k.t >= m * 60 && k.t < (m + 1) * 60).map((k) => k.victim);
    rows.push([
      m + 1,
      num(rates.length ? rates.reduce((a, b) => a + b, 0) / rates.length : null),
      num(inMinute.length ? Math.max(...inMinute.map((s) => s.backlog)) : null),
      num(inMinute.at(-1)?.backlog),
      kills.join(', ') || '—',
    ]);
  }
  return ['## Rate and backlog per minute', '', `Offered ${num(r.options.rate)} instances/s. Backlog: instances due and not final.`, '',
    markdownTable(['minute', 'SUCCESS/s (mean)', 'backlog max', 'backlog at end', 'kills'], rows)].join('\n');
}

function killSection(r) {
  if (r.kills.length === 0) return '## Kills\n\nNone.';
  return [
    '## Kills',
    '',
    `\`kill -9\` of one process every ${r.options.killEveryS} s in rotation, then a replacement of the same role (a worker keeps its AX_WORKER_ID, so its outbox). restart = kill → the replacement's \`/healthz\` answered; back after = kill → the first sample whose backlog is at most the one before the kill + ${num(r.options.rate)} (one second of load), before the next kill.`,
    '',
    markdownTable(
      ['#', 'at s', 'killed', 'pid', 'replacement', 'restart ms', 'backlog before', 'peak backlog', 'back after s'],
      r.kills.map((k) => [k.n, num(k.t, 1), k.victim, k.victimPid, k.replacement ?? `**${k.error ?? 'none'}**`, num(k.restartMs), num(k.backlogBefore), num(k.peakBacklog), k.recoveredAfterS ?? 'not before the next kill']),
    ),
  ].join('\n');
}

function checkSection(r) {
  const c = r.checks;
  if (!c) return '## Exactly once\n\nNot checked (the run did not finish).';
  const rows = [
    ['instances (rows per slot)', num(c.instances.expected), c.instances.duplicates, c.instances.missing, c.instances.unexpected],
    ['executions (sink calls per SUCCESS run)', num(c.executions.expected), c.executions.duplicates, c.executions.missing, '—'],
  ];
  const lines = [
    '## Exactly once',
    '',
    `Slots of every task from the first second of the run to ${num(c.checkedSeconds)} s (the fire-lock TTL + 2 s before the schedulers stopped: younger holes are repaired by a re-scan that a stopped scheduler no longer runs; ${c.unrepairedAtStop} of those were open).`,
    '',
    markdownTable(['check', 'expected', 'duplicates', 'missing', 'unexpected'], rows),
    '',
    `Sink calls ${num(c.sinkCalls)}, early starts ${c.earlyStarts}, start lag ms p50/p99/max ${num(c.startLagMs.p50)} / ${num(c.startLagMs.p99)} / ${num(c.startLagMs.max)}; instances not SUCCESS after the drain: ${Object.entries(c.notSuccess).map(([s, n]) => `${s} ${n}`).join(', ') || 'none'}.`,
  ];
  if (c.interruptedByKill !== undefined) {
    lines.push(
      '',
      `Runs a worker's kill interrupted (started, then FAILED with the kill's reason; the soak's tasks are not retried — a retry would call the same idempotency key again — so these are accounted, not lost): ${Object.entries(c.interruptedByKill).map(([k, n]) => `${k}: ${num(n)}`).join(', ') || 'none'}.`,
    );
  }
  if (c.misfire !== undefined) {
    lines.push(
      '',
      `Slots the misfire policy decided (a scheduler more than AX_MISFIRE_THRESHOLD_MS behind; \`fire_once\`: one run for the gap, the rest counted on the task): skipped ${num(c.misfire.skipped)}, coalesced ${num(c.misfire.coalesced)}` +
        ` — missing slots beyond those are lost. Missing by checked chunk: ${c.missingByChunk.length === 0 ? 'none' : c.missingByChunk.map((m) => `s ${num(m.fromS)}–${num(m.toS)}: ${num(m.missing)}`).join(', ')}.` +
        ` Not SUCCESS by reason: ${c.notSuccessByReason.length === 0 ? 'none' : c.notSuccessByReason.map((r) => `${r.state} ${r.reason} ${num(r.n)}`).join(', ')}.`,
    );
  }
  if (c.duplicateCallExamples.length > 0) {
    lines.push('', `Duplicate calls by the kill just after their slot: ${Object.entries(c.duplicateCallsByKill).map(([k, n]) => `${k}: ${n}`).join(', ')}. Examples: ${c.duplicateCallExamples.map((d) => `\`${d.key}\` ×${d.calls}`).join(', ')}.`);
  }
  return lines.join('\n');
}

/** The Markdown report. */
export function soakMarkdown(r) {
  const o = r.options;
  const verdict = r.status === 'interrupted' ? '**INTERRUPTED** (partial: no exactly-once check)' : r.fails.length === 0 ? '**PASS**' : `**FAIL** (${r.fails.length})`;
  return [
    '# Soak',
    '',
    `${r.startedAt} · ${num(o.minutes, 1)} min at ${num(o.rate)} instances/s (${num(o.rate)} tasks \`* * * * * *\`, no-op HTTP) · kill -9 every ${o.killEveryS} s · samples every ${o.sampleS} s · ${Object.entries(r.topology).map(([k, v]) => `${v} ${k}${v > 1 ? 's' : ''}`).join(', ')} · MariaDB: ${o.bufferPool ? `private, buffer pool ${o.bufferPool}` : 'the shared test server'} · ${r.machine.cores} cores, load ${num(r.machine.load1mBefore, 2)} before, ${num(r.machine.load1mAfter, 2)} after · node ${r.machine.node}`,
    '',
    `Verdict: ${verdict}`,
    ...r.fails.map((f) => `- FAIL ${f}`),
    '',
    growthSection(r),
    '',
    processSection(r),
    '',
    minuteSection(r),
    '',
    killSection(r),
    '',
    checkSection(r),
    '',
  ].join('\n');
}

/** Chart panels: RSS of every process per role, backlog and SUCCESS rate; kills marked. */
export function soakPanels(r) {
  const marks = r.kills.map((k) => ({ x: k.t, label: `k${k.n}` }));
  const panels = ROLES.filter((role) => r.series.some((s) => s.role === role)).map((role) => ({
    title: `RSS of the ${role} processes (MB; a new line per replacement; dashed: kills)`,
    unit: 'MB',
    marks,
    series: r.series
      .filter((s) => s.role === role)
      .map((s, i) => ({ label: s.id, kind: 'ax', color: PALETTE[i % PALETTE.length], points: s.points.filter((p) => p.rssMb !== null).map((p) => ({ x: p.t, y: p.rssMb })) })),
  }));
  panels.push({
    title: 'Backlog (instances due and not final)',
    unit: '',
    marks,
    series: [{ label: 'backlog', kind: 'ax', points: r.system.map((s) => ({ x: s.t, y: s.backlog })) }],
  });
  panels.push({
    title: `SUCCESS per second (offered ${num(r.options.rate)}/s)`,
    unit: '/s',
    marks,
    series: [{ label: 'SUCCESS/s', kind: 'ax', color: '#2f855a', points: r.system.filter((s) => s.successPerS !== null).map((s) => ({ x: s.t, y: s.successPerS })) }],
  });
  return panels;
}
