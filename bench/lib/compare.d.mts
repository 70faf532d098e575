export function roundKeys(id: string, k: number): { current: string; baseline: string };
export function roundOrder(k: number): ['current', 'baseline'] | ['baseline', 'current'];
export function median(values: ReadonlyArray<number>): number;
export interface PairedRound {
  k: number;
  first: 'current' | 'baseline';
  current: number | null;
  baseline: number | null;
  ratio: number | null;
}
export function pairedRatios<R>(
  scenarios: Readonly<Record<string, { result?: R } | undefined>>,
  id: string,
  value: (result: R | undefined) => number | null | undefined,
): { rounds: PairedRound[]; medianRatio: number | null; minRatio: number | null; maxRatio: number | null };
