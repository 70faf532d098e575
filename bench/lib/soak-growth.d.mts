export type GrowthMetric = 'rssMb' | 'heapMb' | 'liveHeapMb' | 'fds' | 'lagP99Ms';
export const GROWTH_METRICS: readonly GrowthMetric[];
export function parseMarkCompactMb(line: string): number | null;
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
  id: string;
  slot: string;
  role: string;
  metric: string;
  stat: 'min' | 'mean';
  baseline: { fromS: number; toS: number; n: number; value: number | null };
  last: { fromS: number; toS: number; n: number; value: number | null };
  judged: boolean;
  growthPct: number | null;
  fail: boolean;
}
export function parseVmRssKb(status: string): number | null;
export function promValue(text: string, name: string): number | null;
export function victimOf(k: number, counts: Record<string, number>, roles?: readonly string[], spare?: number): { role: string; index: number };
export function meanIn(points: readonly SoakPoint[], field: string, fromS: number, toS: number): { n: number; mean: number | null };
export function growthCheck(
  series: readonly SoakSeries[],
  options: { warmupS: number; windowS: number; limitPct?: number; metrics?: readonly string[] },
): GrowthRow[];
export const WINDOW_STAT: Readonly<Record<string, 'min' | 'mean'>>;
export function recoveryOf(
  kills: ReadonlyArray<{ t: number }>,
  samples: ReadonlyArray<{ t: number; backlog: number }>,
  toleranceItems: number,
): Array<{ backlogBefore: number | null; peakBacklog: number | null; recoveredAfterS: number | null }>;
export const KILL_REASONS: ReadonlySet<string>;
export interface SoakKill {
  n: number;
  victim: string;
  /** Seconds since the start of the run. */
  t: number;
}
export function killThatExplains<K extends SoakKill>(row: { reason: string | null; expectedMs: number }, kills: readonly K[], t0Ms: number, windowMs: number): K | null;
