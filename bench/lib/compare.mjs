/**
 * Old against new over several rounds (`pnpm bench --baseline <commit> [--rounds N]`), pure.
 *
 * One run of a scenario is a 10–40 s window on a machine whose speed swings by ±30 % between
 * consecutive minutes, so one pair of runs cannot settle a 5 % goal. Each round runs both
 * codes back to back, alternating which goes first (round 1 new → old, round 2 old → new, …)
 * so that neither always gets the warmer or the quieter slot; the verdict is the median of
 * the rounds' new/old ratios (as `farm-bench` does), with the spread shown beside it.
 */

/** The scenario keys of round `k` (1-based) of `id`: round 1 keeps the plain names. */
export function roundKeys(id, k) {
  const suffix = k === 1 ? '' : `#${k}`;
  return { current: `${id}${suffix}`, baseline: `${id}@baseline${suffix}` };
}

/** Which code runs first in round `k`: the current code in odd rounds, the baseline in even ones. */
export function roundOrder(k) {
  return k % 2 === 1 ? ['current', 'baseline'] : ['baseline', 'current'];
}

/** The median of a non-empty list of numbers (the mean of the middle two for an even count). */
export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * Every round of `id` found in `scenarios`, each with `value(result)` of both runs and their
 * ratio (new / old; null when either run has no figure), and the median of the ratios that
 * exist. `{ rounds: [{ k, first, current, baseline, ratio }], medianRatio, minRatio, maxRatio }`.
 */
export function pairedRatios(scenarios, id, value) {
  const rounds = [];
  for (let k = 1; ; k++) {
    const keys = roundKeys(id, k);
    if (!scenarios[keys.current] && !scenarios[keys.baseline]) break;
    const current = value(scenarios[keys.current]?.result) ?? null;
    const baseline = value(scenarios[keys.baseline]?.result) ?? null;
    const ratio = current !== null && baseline !== null && baseline !== 0 ? current / baseline : null;
    rounds.push({ k, first: roundOrder(k)[0], current, baseline, ratio });
  }
  const ratios = rounds.map((r) => r.ratio).filter((r) => r !== null);
  return {
    rounds,
    medianRatio: ratios.length > 0 ? median(ratios) : null,
    minRatio: ratios.length > 0 ? Math.min(...ratios) : null,
    maxRatio: ratios.length > 0 ? Math.max(...ratios) : null,
  };
}
