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
  series: Array<{ label: string; kind: Kind; points: Array<{ x: number; y: number }> }>;
  bars?: undefined;
}
export type ChartPanel = BarPanel | LinePanel;
export function renderChart(panels: readonly ChartPanel[], options?: { width?: number; title?: string }): string;
export function chartPanels(results: BenchResults): ChartPanel[];
