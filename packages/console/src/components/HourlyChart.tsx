/**
 * One uPlot chart over the 24 hours of a UTC day (x in seconds, labelled in UTC). Its width
 * follows its container, so it fits a phone as well as a 1280 px screen.
 */
import { useEffect, useMemo, useRef } from 'react';
import uPlot from 'uplot';
import type { HourStats } from '../types';

export interface ChartSeries {
  label: string;
  value: (h: HourStats) => number | null;
  color: string;
  /** Bars for counts, a line for averages. */
  kind: 'bars' | 'line';
}

const HEIGHT_PX = 180;

function build(el: HTMLElement, hours: readonly HourStats[], series: readonly ChartSeries[], unit: string): uPlot {
  const xs = hours.map((h) => Date.parse(h.hour) / 1000);
  const data: uPlot.AlignedData = [xs, ...series.map((s) => hours.map((h) => s.value(h)))];
  const bars = uPlot.paths.bars?.({ size: [0.7, 40] });
  const options: uPlot.Options = {
    width: Math.max(240, el.clientWidth),
    height: HEIGHT_PX,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    legend: { show: true, live: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
    axes: [
      // 24-hour UTC labels: the day on the dashboard is a UTC day.
      { values: (_u, splits) => splits.map((s) => new Date(s * 1000).toISOString().slice(11, 16)) },
      { label: unit, size: 56 },
    ],
    series: [
      { label: 'hour (UTC)' },
      ...series.map((s): uPlot.Series => ({
        label: s.label,
        stroke: s.color,
        fill: s.kind === 'bars' ? `${s.color}99` : undefined,
        width: s.kind === 'bars' ? 1 : 2,
        // Hours without runs have no average: points, so a lone hour is still seen.
        ...(s.kind === 'bars' && bars !== undefined ? { paths: bars, points: { show: false } } : { spanGaps: false, points: { show: true, size: 6 } }),
      })),
    ],
  };
  return new uPlot(options, data, el);
}

export function HourlyChart({ title, hours, series, unit }: { title: string; hours: readonly HourStats[]; series: readonly ChartSeries[]; unit: string }) {
  const holder = useRef<HTMLDivElement>(null);
  // Rebuilt when the figures change, not on every refresh: `hours` is a new array each time.
  const key = JSON.stringify(hours);
  const stable = useMemo(() => hours, [key]);
  useEffect(() => {
    const el = holder.current;
    if (el === null) return;
    const plot = build(el, stable, series, unit);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(240, el.clientWidth), height: HEIGHT_PX }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [stable, series, unit]);
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <div ref={holder} />
    </figure>
  );
}
