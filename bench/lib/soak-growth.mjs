/**
 * Pure logic of the soak (bench/soak.mjs): parsing what is sampled (`/proc/<pid>/status`,
 * Prometheus text), which process is killed next, the growth check and the recovery after a
 * kill. No I/O, no clock. Types: `soak-growth.d.mts`.
 *
 * A series is one process: `{ id, role, slot, gen, startedS, points: [{ t, rssMb, fds,
 * lagP99Ms, … }] }`, `t` and `startedS` in seconds since the start of the run; `slot` names the
 * place a process fills (`worker-2`), `gen` counts its replacements (0 = started with the stack).
 */

/**
 * The metrics whose growth fails a soak. The heap is judged by `liveHeapMb`, what V8 keeps after
 * a full collection (`--trace-gc`'s Mark-Compact lines), not by heap used (`heapMb`, still
 * sampled): heap used also holds the garbage of the cycle in progress, and its floor rose 20 %
 * in a survivor whose heap snapshots at s 300 and s 690 held the same 25–28 MB of live objects.
 */
export const GROWTH_METRICS = ['rssMb', 'liveHeapMb', 'fds', 'lagP99Ms'];

/**
 * The heap after a full collection, in MB, of one `--trace-gc` line, e.g.
 * `[14700:0x285ece70]  189 ms: Mark-Compact 44.8 (77.1) -> 21.1 (54.7) MB, 14.98 / 0.00 ms …`
 * (also `Mark-Compact (reduce)`); null for any other line (scavenges, the service's own output).
 */
export function parseMarkCompactMb(line) {
  const m = /: Mark-Compact(?: \(reduce\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/.exec(line);
  return m ? Number(m[1]) : null;
}

/** Resident set size in kB from the text of /proc/<pid>/status (`VmRSS:  123456 kB`); null when absent. */
export function parseVmRssKb(status) {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return m ? Number(m[1]) : null;
}

/**
 * The value of the first sample of metric `name` in Prometheus text format (labels ignored:
 * `nodejs_eventloop_lag_p99_seconds{service="broker"} 0.0121`); null when absent or not a number.
 */
export function promValue(text, name) {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue; // a longer name with this prefix
    const value = Number(rest.slice(rest.lastIndexOf('}') + 1).trim().split(/\s+/)[0]);
    return Number.isFinite(value) ? value : null;
  }
  return null;
}

/**
 * The `k`-th kill (0-based) of a rotation over roles (scheduler, broker, worker, scheduler, …),
 * each role's killable slots in turn: `{ role, index }` with `index` in 0..counts[role]−1. Roles
 * with no process are skipped. The last `spare` slots of a role with more than `spare`
 * processes are never killed: they live the whole run, taking over each kill of their peers,
 * and are what the growth check can judge over 15 minutes (a killed slot's processes live only
 * a few minutes each).
 */
export function victimOf(k, counts, roles = ['scheduler', 'broker', 'worker'], spare = 0) {
  const present = roles.filter((r) => (counts[r] ?? 0) > 0);
  if (present.length === 0) throw new Error('no process to kill');
  const role = present[k % present.length];
  const killable = counts[role] > spare ? counts[role] - spare : counts[role];
  return { role, index: Math.floor(k / present.length) % killable };
}

/** `{ n, mean }` of `field` over the points with `fromS <= t < toS` (nulls skipped); mean null when none. */
export function meanIn(points, field, fromS, toS) {
  let n = 0;
  let sum = 0;
  for (const p of points) {
    if (p.t < fromS || p.t >= toS) continue;
    const v = p[field];
    if (v === null || v === undefined || !Number.isFinite(v)) continue;
    n += 1;
    sum += v;
  }
  return { n, mean: n === 0 ? null : sum / n };
}

const round2 = (x) => (x === null ? null : Math.round(x * 100) / 100);

/**
 * How each metric is summed up over a window. RSS: its floor (the lowest sample). A Node
 * process's RSS follows V8's heap, a sawtooth whose peaks are when the next major GC comes and
 * grow as V8 raises its own threshold (seen in the soak: a scheduler's heap used 40–60 MB after
 * every GC for 12 minutes, its peaks 90 → 220 MB, its RSS 170 → 250 MB with them); what a leak
 * raises is what the process keeps after GC, the floor. Open files and lag: the mean.
 */
export const WINDOW_STAT = { rssMb: 'min', heapMb: 'min', liveHeapMb: 'min', fds: 'mean', lagP99Ms: 'mean' };

/** `{ n, value }`: the `stat` of `field` over the points with `fromS <= t < toS`; value null when none. */
function statIn(points, field, fromS, toS, stat) {
  if (stat === 'mean') {
    const { n, mean } = meanIn(points, field, fromS, toS);
    return { n, value: mean };
  }
  const values = points.filter((p) => p.t >= fromS && p.t < toS && Number.isFinite(p[field])).map((p) => p[field]);
  return { n: values.length, value: values.length === 0 ? null : Math.min(...values) };
}

/**
 * The growth check, process by process: a leak is a process that keeps more the longer it runs,
 * so each process is compared with itself — the first `windowS` of its life past `warmupS`
 * (its start-up: code loading, connections, JIT, V8 sizing its heap) against its last `windowS`.
 * (Comparing a slot's processes across a kill compares two ages of two processes: a scheduler
 * 3 minutes old against one 6 minutes old differs by its warm-up, not by a leak.) A process
 * whose life past `warmupS` is shorter than two windows is not judged (`judged: false`). Each
 * window is summed up by `WINDOW_STAT`; a growth above `limitPct` % fails.
 *
 * Returns rows `{ id, slot, role, metric, stat, baseline: { fromS, toS, n, value }, last: { … },
 * judged, growthPct, fail }`, ordered by slot, generation and metric.
 */
export function growthCheck(series, { warmupS, windowS, limitPct = 10, metrics = GROWTH_METRICS }) {
  const rows = [];
  const ordered = [...series].sort((a, b) => (a.slot === b.slot ? a.gen - b.gen : a.slot < b.slot ? -1 : 1));
  for (const s of ordered) {
    const fromS = (s.startedS ?? 0) + warmupS;
    const lastT = s.points.length === 0 ? -Infinity : s.points.at(-1).t;
    const judged = lastT - fromS >= 2 * windowS;
    for (const metric of metrics) {
      const stat = WINDOW_STAT[metric] ?? 'mean';
      const bw = [fromS, fromS + windowS];
      const lw = [lastT - windowS, lastT + 1e-9];
      const b = judged ? statIn(s.points, metric, bw[0], bw[1], stat) : { n: 0, value: null };
      const l = judged ? statIn(s.points, metric, lw[0], lw[1], stat) : { n: 0, value: null };
      const growthPct = b.value !== null && l.value !== null && b.value > 0 ? ((l.value - b.value) / b.value) * 100 : null;
      rows.push({
        id: s.id,
        slot: s.slot,
        role: s.role,
        metric,
        stat,
        baseline: { fromS: bw[0], toS: bw[1], n: b.n, value: round2(b.value) },
        last: { fromS: lw[0], toS: lastT, n: l.n, value: round2(l.value) },
        judged,
        growthPct: round2(growthPct),
        fail: growthPct !== null && growthPct > limitPct,
      });
    }
  }
  return rows;
}

/**
 * What each kill cost, from the run's samples `[{ t, backlog }]` (t in s): the backlog at the
 * last sample before the kill, its peak until the next kill (or the end), and the seconds from
 * the kill to the first later sample whose backlog is back at or below the one before the kill
 * plus `toleranceItems` (null when it never was before the next kill). Kills `[{ t }]`, sorted.
 */
export function recoveryOf(kills, samples, toleranceItems) {
  return kills.map((kill, i) => {
    const until = kills[i + 1]?.t ?? Infinity;
    const before = samples.filter((s) => s.t <= kill.t).at(-1);
    const after = samples.filter((s) => s.t > kill.t && s.t <= until);
    const peak = after.length === 0 ? null : Math.max(...after.map((s) => s.backlog));
    const back = before === undefined ? undefined : after.find((s) => s.backlog <= before.backlog + toleranceItems);
    return {
      backlogBefore: before?.backlog ?? null,
      peakBacklog: peak,
      recoveredAfterS: back === undefined ? null : Math.round((back.t - kill.t) * 10) / 10,
    };
  });
}

/**
 * The reasons a worker's `kill -9` gives the runs it had started: found gone by the broker
 * (`LOST_WORKER`) or by the worker's own restart with the same id (`WORKER_RESTART`, R13).
 */
export const KILL_REASONS = new Set(['LOST_WORKER', 'WORKER_RESTART']);

/**
 * The worker kill that explains an instance that did not succeed, or null: its reason is one
 * of KILL_REASONS and its slot was due before a worker kill and after the previous worker kill
 * (or at most `windowMs` before it): the run the kill interrupted. With tasks that are not
 * retried (the soak's: a retry would call the same idempotency key twice, which the sink counts
 * as a duplicate) such a run ends FAILED by design — it was started, and it is accounted so.
 * `row` `{ reason, expectedMs }`; `kills` `[{ n, victim, t }]` (t in s since `t0Ms`), sorted.
 */
export function killThatExplains(row, kills, t0Ms, windowMs) {
  if (!KILL_REASONS.has(row.reason)) return null;
  const workerKills = kills.filter((k) => k.victim.startsWith('worker-'));
  for (let i = 0; i < workerKills.length; i++) {
    const atMs = t0Ms + workerKills[i].t * 1_000;
    const fromMs = Math.max(atMs - windowMs, i === 0 ? -Infinity : t0Ms + workerKills[i - 1].t * 1_000);
    if (row.expectedMs > fromMs && row.expectedMs <= atMs) return workerKills[i];
  }
  return null;
}
