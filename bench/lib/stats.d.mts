export interface Summary {
  readonly n: number;
  readonly min: number | null;
  readonly p50: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
  readonly max: number | null;
  readonly mean: number | null;
}
export function percentile(sorted: ArrayLike<number>, p: number): number;
export function summarize(values: Iterable<number>): Summary;
export function sustainedRate(times: Iterable<number>, trimPct?: number): number | null;
export function perSecond(times: Iterable<number>, originMs: number): Array<{ s: number; n: number }>;
export function exactlyOnce(
  expected: Iterable<string>,
  observed: ReadonlyMap<string, number>,
): { expected: number; duplicates: number; missing: number; unexpected: number };
export function slopePerSecond(samples: ReadonlyArray<{ tMs: number; value: number }>): number | null;
