export type GrowthMetric = 'rssMb' | 'fds' | 'lagP99Ms';
export const GROWTH_METRICS: readonly GrowthMetric[];
export interface SoakPoint {
  /** Seconds since the start of the run. */
  t: number;
  rssMb?: number | null;
  fds?: number | null;
  lagP99Ms?: number | null;
  [field: string]: number | null | undefined;
}
export interface SoakSeries {
  id: string;
  role: string;
  slot: string;
  gen: number;
  /** Seconds since the start of the run when it started; default 0. */
  startedS?: number;
  points: SoakPoint[];
}
export interface GrowthRow {
  slot: string;
  role: string;
  metric: string;
  baseline: { series: string[]; n: number; mean: number | null };
  last: { series: string[]; n: number; mean: number | null };
  sameProcess: boolean;
  growthPct: number | null;
  fail: boolean;
}
export function parseVmRssKb(status: string): number | null;
export function promValue(text: string, name: string): number | null;
export function victimOf(k: number, counts: Record<string, number>, roles?: readonly string[]): { role: string; index: number };
export function meanIn(points: readonly SoakPoint[], field: string, fromS: number, toS: number): { n: number; mean: number | null };
export function growthCheck(
  series: readonly SoakSeries[],
  options: { baseline: readonly [number, number]; last: readonly [number, number]; limitPct?: number; settleS?: number; metrics?: readonly string[] },
): GrowthRow[];
export function recoveryOf(
  kills: ReadonlyArray<{ t: number }>,
  samples: ReadonlyArray<{ t: number; backlog: number }>,
  toleranceItems: number,
): Array<{ backlogBefore: number | null; peakBacklog: number | null; recoveredAfterS: number | null }>;
