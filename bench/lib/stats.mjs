/**
 * Pure statistics of the bench: percentiles (nearest rank), summaries, rates over a window.
 * No I/O, no clock. Types: `stats.d.mts`.
 */

/** Nearest-rank percentile of an ascending array (`p` in 0..100); NaN when empty. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  if (p <= 0) return sorted[0];
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

const round1 = (x) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : null);

/** `{n, min, p50, p95, p99, max, mean}` of the values (ms), rounded to 0.1; nulls when empty. */
export function summarize(values) {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    n,
    min: round1(n === 0 ? Number.NaN : sorted[0]),
    p50: round1(percentile(sorted, 50)),
    p95: round1(percentile(sorted, 95)),
    p99: round1(percentile(sorted, 99)),
    max: round1(n === 0 ? Number.NaN : sorted[n - 1]),
    mean: round1(n === 0 ? Number.NaN : sum / n),
  };
}

/**
 * Sustained rate (events/s) of a list of event times (ms): the events between the `trimPct`
 * and `100 − trimPct` percentiles of time, divided by the time between them, so a ramp-up
 * and a lone straggler do not bend the figure. Null when fewer than 10 events.
 */
export function sustainedRate(times, trimPct = 10) {
  const sorted = Float64Array.from(times).sort();
  if (sorted.length < 10) return null;
  const lo = Math.floor((trimPct / 100) * (sorted.length - 1));
  const hi = Math.ceil(((100 - trimPct) / 100) * (sorted.length - 1));
  const span = sorted[hi] - sorted[lo];
  if (span <= 0) return null;
  return Math.round(((hi - lo) / span) * 1000);
}

/** Events per whole second relative to `originMs`: `[{ s, n }]` for s = 0..last. */
export function perSecond(times, originMs) {
  const counts = [];
  for (const t of times) {
    const s = Math.floor((t - originMs) / 1000);
    if (s < 0) continue;
    counts[s] = (counts[s] ?? 0) + 1;
  }
  return Array.from(counts, (n, s) => ({ s, n: n ?? 0 }));
}

/**
 * Duplicates and missing of a run: `expected` keys that must each occur exactly once, and the
 * observed count per key. Keys observed but not expected count as `unexpected`.
 */
export function exactlyOnce(expected, observed) {
  let duplicates = 0;
  let missing = 0;
  let unexpected = 0;
  const want = new Set(expected);
  for (const key of want) {
    const n = observed.get(key) ?? 0;
    if (n === 0) missing += 1;
    else if (n > 1) duplicates += n - 1;
  }
  for (const [key, n] of observed) if (!want.has(key)) unexpected += n;
  return { expected: want.size, duplicates, missing, unexpected };
}

/**
 * Least-squares slope (units per second) of samples `[{ tMs, value }]`: how fast a backlog
 * grows (> 0) or drains (< 0). Null with fewer than 2 samples.
 */
export function slopePerSecond(samples) {
  if (samples.length < 2) return null;
  const n = samples.length;
  let sx = 0;
  let sy = 0;
  for (const { tMs, value } of samples) {
    sx += tMs;
    sy += value;
  }
  const mx = sx / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (const { tMs, value } of samples) {
    num += (tMs - mx) * (value - my);
    den += (tMs - mx) ** 2;
  }
  if (den === 0) return null;
  return Math.round((num / den) * 1000 * 10) / 10;
}
