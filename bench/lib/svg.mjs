/**
 * A small SVG writer for the bench chart: panels of horizontal bars, each with an optional goal
 * line. Pure: panels in, SVG text out.
 */

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const COLORS = { ax: '#2b6cb0', bullmq: '#c05621', limit: '#718096' };
const fmt = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : 'n/a');

/**
 * Renders panels `[{ title, unit, goal?: { value, label }, bars: [{ label, value, kind }] }]`
 * (kind: ax | bullmq | limit; value null = not measured) into one SVG document.
 */
export function renderChart(panels, { width = 760, title = 'ax benchmarks' } = {}) {
  const barH = 20;
  const gap = 6;
  const labelW = 220;
  const valueW = 90;
  const plotW = width - labelW - valueW - 20;
  const out = [];
  let y = 46;
  for (const panel of panels) {
    if (panel.series) {
      y = linePanel(out, panel, y, width);
      continue;
    }
    out.push(`<text x="10" y="${y}" font-size="14" font-weight="bold">${esc(panel.title)}</text>`);
    y += 10;
    const values = panel.bars.map((b) => (Number.isFinite(b.value) ? b.value : 0));
    const max = Math.max(1, ...values, panel.goal?.value ?? 0) * 1.05;
    const top = y;
    for (const bar of panel.bars) {
      const w = Number.isFinite(bar.value) ? Math.max(1, (bar.value / max) * plotW) : 0;
      const color = COLORS[bar.kind] ?? COLORS.limit;
      out.push(`<text x="${labelW - 6}" y="${y + barH - 5}" font-size="12" text-anchor="end">${esc(bar.label)}</text>`);
      out.push(`<rect x="${labelW}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${color}"/>`);
      out.push(`<text x="${(labelW + w + 4).toFixed(1)}" y="${y + barH - 5}" font-size="12">${esc(fmt(bar.value))} ${esc(panel.unit)}</text>`);
      y += barH + gap;
    }
    if (panel.goal) {
      const gx = labelW + (panel.goal.value / max) * plotW;
      out.push(`<line x1="${gx.toFixed(1)}" y1="${top - 4}" x2="${gx.toFixed(1)}" y2="${y - gap + 4}" stroke="#c53030" stroke-width="2" stroke-dasharray="5,3"/>`);
      out.push(`<text x="${gx.toFixed(1)}" y="${y + 10}" font-size="11" fill="#c53030" text-anchor="middle">${esc(panel.goal.label)}</text>`);
      y += 14;
    }
    y += 22;
  }
  const height = y;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="16" font-weight="bold">${esc(title)}</text>`,
    ...out,
    '</svg>',
    '',
  ].join('\n');
}

/**
 * A line panel `{ title, unit, series: [{ label, kind, color?, points: [{ x, y }] }], marks? }`
 * (x in s; `color` overrides the kind's; `marks: [{ x, label }]` are dashed vertical lines, e.g.
 * the kills of a soak); the legend wraps onto more rows when it is wider than the plot. Returns
 * the next y.
 */
function linePanel(out, panel, top, width) {
  const left = 70;
  const plotW = width - left - 30;
  const plotH = 140;
  out.push(`<text x="10" y="${top}" font-size="14" font-weight="bold">${esc(panel.title)}</text>`);
  const y0 = top + 14;
  const all = panel.series.flatMap((s) => s.points);
  const maxX = Math.max(1, ...all.map((p) => p.x));
  const maxY = Math.max(1, ...all.map((p) => p.y)) * 1.05;
  const px = (x) => (left + (x / maxX) * plotW).toFixed(1);
  const py = (v) => (y0 + plotH - (v / maxY) * plotH).toFixed(1);
  out.push(`<line x1="${left}" y1="${y0 + plotH}" x2="${left + plotW}" y2="${y0 + plotH}" stroke="#999"/>`);
  out.push(`<line x1="${left}" y1="${y0}" x2="${left}" y2="${y0 + plotH}" stroke="#999"/>`);
  out.push(`<text x="${left - 4}" y="${y0 + 10}" font-size="11" text-anchor="end">${esc(fmt(maxY / 1.05))}</text>`);
  out.push(`<text x="${left - 4}" y="${y0 + plotH}" font-size="11" text-anchor="end">0</text>`);
  out.push(`<text x="${left + plotW}" y="${y0 + plotH + 14}" font-size="11" text-anchor="end">${esc(fmt(maxX))} s</text>`);
  for (const mark of panel.marks ?? []) {
    const mx = px(Math.min(mark.x, maxX));
    out.push(`<line x1="${mx}" y1="${y0}" x2="${mx}" y2="${y0 + plotH}" stroke="#c53030" stroke-width="1" stroke-dasharray="4,3"/>`);
    out.push(`<text x="${mx}" y="${y0 + plotH + 14}" font-size="10" fill="#c53030" text-anchor="middle">${esc(mark.label)}</text>`);
  }
  let legendX = left + 10;
  let legendY = y0 + 4;
  for (const series of panel.series) {
    const color = series.color ?? COLORS[series.kind] ?? COLORS.limit;
    if (series.points.length > 0) {
      const d = series.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${px(p.x)},${py(p.y)}`).join(' ');
      out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"/>`);
    }
    const legendW = 24 + series.label.length * 6.5;
    if (legendX > left + 10 && legendX + legendW > left + plotW) {
      legendX = left + 10;
      legendY += 14;
    }
    out.push(`<rect x="${legendX}" y="${legendY}" width="10" height="10" fill="${color}"/>`);
    out.push(`<text x="${legendX + 14}" y="${legendY + 9}" font-size="11">${esc(series.label)}</text>`);
    legendX += legendW;
  }
  return y0 + plotH + 40;
}

/** The panels of a bench run's results (see bench/run.mjs). */
export function chartPanels(results) {
  const r = (id) => results.scenarios?.[id]?.result ?? {};
  return [
    {
      title: 'Burst: fire time → all SUCCESS (ms, lower is better)',
      unit: 'ms',
      goal: { value: 5_000, label: 'goal 10,000 ≤ 5 s' },
      bars: [
        { label: 'ax 2,000', value: r('ax-burst-2000').allSuccessMs, kind: 'ax' },
        { label: 'BullMQ 2,000', value: r('bullmq-burst-2000').allSuccessMs, kind: 'bullmq' },
        { label: 'ax 2,000, defaults', value: r('ax-burst-2000-defaults').allSuccessMs, kind: 'ax' },
        { label: 'BullMQ 2,000, in-process', value: r('bullmq-burst-2000-inproc').allSuccessMs, kind: 'bullmq' },
        { label: 'ax 10,000', value: r('ax-burst-10000').allSuccessMs, kind: 'ax' },
        { label: 'BullMQ 10,000', value: r('bullmq-burst-10000').allSuccessMs, kind: 'bullmq' },
      ],
    },
    {
      title: 'Throughput (instances/s, higher is better)',
      unit: '/s',
      goal: { value: 3_000, label: 'goal 3,000/s' },
      bars: [
        { label: 'ax steady (1 broker)', value: r('ax-steady').sustainedSuccessPerS, kind: 'ax' },
        { label: 'BullMQ steady', value: r('bullmq-steady').sustainedSuccessPerS, kind: 'bullmq' },
        { label: 'ax PENDING→SUCCESS, 1 broker', value: r('ax-throughput-1').sustainedPerS, kind: 'ax' },
        { label: 'ax PENDING→SUCCESS, 2 brokers', value: r('ax-throughput-2').sustainedPerS, kind: 'ax' },
      ],
    },
    {
      title: 'Scheduler alone: 10,000 due → all committed (ms)',
      unit: 'ms',
      goal: { value: 500, label: 'goal 500 ms' },
      bars: [
        { label: '1 scheduler', value: r('ax-scheduler-1').allCommittedPolledMs, kind: 'ax' },
        { label: '3 schedulers', value: r('ax-scheduler-3').allCommittedPolledMs, kind: 'ax' },
      ],
    },
    {
      title: `Steady: backlog (due, not final) while ${fmt(r('ax-steady').offeredPerS)} tasks fire every second`,
      unit: '',
      series: [
        { label: 'ax (due PENDING+DISPATCHED+RUNNING)', kind: 'ax', points: (r('ax-steady').samples ?? []).map((p) => ({ x: p.t / 1000, y: p.backlog })) },
        { label: 'BullMQ (wait+active)', kind: 'bullmq', points: (r('bullmq-steady').samples ?? []).map((p) => ({ x: p.t / 1000, y: p.backlog })) },
      ].map((s) => ({ ...s, points: s.points.filter((p) => p.x >= 0) })),
    },
    {
      title: 'Limits of this machine (per second)',
      unit: '/s',
      bars: [
        { label: 'RabbitMQ publish+consume', value: r('limits').rabbitmq?.roundTripPerS, kind: 'limit' },
        { label: 'RabbitMQ publish (confirms)', value: r('limits').rabbitmq?.publishConfirmedPerS, kind: 'limit' },
        { label: 'MariaDB batched INSERT rows', value: r('limits').mariadb?.batchedInsertRowsPerS, kind: 'limit' },
        { label: 'MariaDB batched UPDATE rows', value: r('limits').mariadb?.batchedUpdateRowsPerS, kind: 'limit' },
      ],
    },
  ];
}
