/**
 * Pure logic of the soak (bench/soak.mjs): parsing what is sampled (`/proc/<pid>/status`,
 * Prometheus text), which process is killed next, the growth check and the recovery after a
 * kill. No I/O, no clock. Types: `soak-growth.d.mts`.
 *
 * A series is one process: `{ id, role, slot, gen, startedS, points: [{ t, rssMb, fds,
 * lagP99Ms, … }] }`, `t` and `startedS` in seconds since the start of the run; `slot` names the
 * place a process fills (`worker-2`), `gen` counts its replacements (0 = started with the stack).
 */

/** The metrics whose growth fails a soak. */
export const GROWTH_METRICS = ['rssMb', 'fds', 'lagP99Ms'];

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
 * each role's slots in turn: `{ role, index }` with `index` in 0..counts[role]−1. Roles with no
 * process are skipped.
 */
export function victimOf(k, counts, roles = ['scheduler', 'broker', 'worker']) {
  const present = roles.filter((r) => (counts[r] ?? 0) > 0);
  if (present.length === 0) throw new Error('no process to kill');
  const role = present[k % present.length];
  return { role, index: Math.floor(k / present.length) % counts[role] };
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
 * The growth check: for each slot, the mean of each metric over the `baseline` window
 * `[fromS, toS)` against the mean over the `last` window. When one process lived through both
 * windows it is compared with itself (`sameProcess`); when the slot's process was replaced in
 * between, the samples of the slot in the baseline window (whichever process) are compared with
 * its latest process's samples in the last window. The samples of a process's first `settleS`
 * seconds (its start-up: loading code, first connections, JIT) are left out of both windows. A
 * growth above `limitPct` % fails; a slot without samples in a window is reported with
 * `fail: false` and `growthPct: null`.
 *
 * Returns rows `{ slot, role, metric, baseline: { series, n, mean }, last: { series, n, mean },
 * sameProcess, growthPct, fail }`, ordered by slot then metric.
 */
export function growthCheck(series, { baseline, last, limitPct = 10, settleS = 0, metrics = GROWTH_METRICS }) {
  const bySlot = new Map();
  for (const s of series) {
    if (!bySlot.has(s.slot)) bySlot.set(s.slot, []);
    bySlot.get(s.slot).push({ ...s, points: s.points.filter((p) => p.t >= (s.startedS ?? 0) + settleS) });
  }
  const rows = [];
  for (const slot of [...bySlot.keys()].sort()) {
    const gens = bySlot.get(slot).sort((a, b) => a.gen - b.gen);
    const latest = gens.at(-1);
    const inBaseline = gens.filter((s) => s.points.some((p) => p.t >= baseline[0] && p.t < baseline[1]));
    const same = inBaseline.includes(latest);
    for (const metric of metrics) {
      const from = same ? [latest] : inBaseline;
      const b = meanIn(from.flatMap((s) => s.points), metric, baseline[0], baseline[1]);
      const l = meanIn(latest.points, metric, last[0], last[1]);
      const growthPct = b.mean !== null && l.mean !== null && b.mean > 0 ? ((l.mean - b.mean) / b.mean) * 100 : null;
      rows.push({
        slot,
        role: latest.role,
        metric,
        baseline: { series: from.map((s) => s.id), n: b.n, mean: round2(b.mean) },
        last: { series: [latest.id], n: l.n, mean: round2(l.mean) },
        sameProcess: same,
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
