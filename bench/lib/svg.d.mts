import type { BenchResults } from './table.mjs';
export type Kind = 'ax' | 'bullmq' | 'limit';
export interface BarPanel {
  title: string;
  unit: string;
  goal?: { value: number; label: string };
  bars: Array<{ label: string; value: number | null | undefined; kind: Kind }>;
  series?: undefined;
}
export interface LinePanel {
  title: string;
  unit: string;
  series: Array<{ label: string; kind: Kind; color?: string; points: Array<{ x: number; y: number }> }>;
  /** Dashed vertical lines at these x (e.g. the kills of a soak). */
  marks?: Array<{ x: number; label: string }>;
  bars?: undefined;
}
export type ChartPanel = BarPanel | LinePanel;
export function renderChart(panels: readonly ChartPanel[], options?: { width?: number; title?: string }): string;
export function chartPanels(results: BenchResults): ChartPanel[];
