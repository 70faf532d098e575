import { describe, expect, it } from 'vitest';
import { growthCheck, killThatExplains, meanIn, parseMarkCompactMb, parseVmRssKb, promValue, recoveryOf, victimOf, type SoakSeries } from './soak-growth.mjs';

describe('parseVmRssKb', () => {
  it('reads VmRSS in kB from /proc/<pid>/status', () => {
    const status = 'Name:\tnode\nVmPeak:\t 1200000 kB\nVmRSS:\t   98304 kB\nRssAnon:\t   70000 kB\n';
    expect(parseVmRssKb(status)).toBe(98_304);
  });
  it('is null without a VmRSS line (a kernel thread, a zombie)', () => {
    expect(parseVmRssKb('Name:\tkthreadd\nState:\tS (sleeping)\n')).toBeNull();
  });
});

describe('promValue', () => {
  const text = [
    '# HELP nodejs_eventloop_lag_p99_seconds The 99th percentile of the recorded event loop delays.',
    '# TYPE nodejs_eventloop_lag_p99_seconds gauge',
    'nodejs_eventloop_lag_p99_seconds_total{service="x"} 9',
    'nodejs_eventloop_lag_p99_seconds{service="worker",worker_id="w1"} 0.012058623',
    'nodejs_eventloop_lag_seconds 0.0031',
    'nodejs_heap_size_used_bytes{service="broker"} NaN',
  ].join('\n');
  it('takes the sample of the exact name, labelled or not, not a longer name with the same prefix', () => {
    expect(promValue(text, 'nodejs_eventloop_lag_p99_seconds')).toBe(0.012058623);
    expect(promValue(text, 'nodejs_eventloop_lag_seconds')).toBe(0.0031);
  });
  it('is null when the metric is absent or not a number', () => {
    expect(promValue(text, 'nodejs_eventloop_lag_p50_seconds')).toBeNull();
    expect(promValue(text, 'nodejs_heap_size_used_bytes')).toBeNull();
  });
});

describe('victimOf', () => {
  it('rotates over the roles, then over the slots of each role', () => {
    const counts = { scheduler: 2, broker: 2, worker: 2 };
    const order = Array.from({ length: 7 }, (_, k) => victimOf(k, counts));
    expect(order.map((v) => `${v.role}-${v.index + 1}`)).toEqual([
      'scheduler-1', 'broker-1', 'worker-1', 'scheduler-2', 'broker-2', 'worker-2', 'scheduler-1',
    ]);
  });
  it('spares the last slots of each role that has more processes than that', () => {
    const order = Array.from({ length: 7 }, (_, k) => victimOf(k, { scheduler: 2, broker: 2, worker: 3 }, undefined, 1));
    expect(order.map((v) => `${v.role}-${v.index + 1}`)).toEqual([
      'scheduler-1', 'broker-1', 'worker-1', 'scheduler-1', 'broker-1', 'worker-2', 'scheduler-1',
    ]);
    // A role of one process is still killed: the soak kills every role.
    expect(victimOf(0, { scheduler: 1 }, undefined, 1)).toEqual({ role: 'scheduler', index: 0 });
  });
  it('skips a role without processes and fails with none at all', () => {
    expect(victimOf(1, { scheduler: 1, broker: 0, worker: 3 })).toEqual({ role: 'worker', index: 0 });
    expect(() => victimOf(0, {})).toThrow(/no process/);
  });
});

describe('meanIn', () => {
  it('averages a field over [from, to), skipping missing values', () => {
    const points = [{ t: 0, fds: 10 }, { t: 10, fds: 20 }, { t: 20, fds: null }, { t: 30, fds: 40 }];
    expect(meanIn(points, 'fds', 10, 30)).toEqual({ n: 1, mean: 20 });
    expect(meanIn(points, 'fds', 0, 40)).toEqual({ n: 3, mean: 70 / 3 });
    expect(meanIn(points, 'fds', 100, 200)).toEqual({ n: 0, mean: null });
  });
});

/** Points every 10 s over [fromS, toS) with the metric values given by `f(t)`. */
const pts = (fromS: number, toS: number, f: (t: number) => { rssMb: number; fds: number; lagP99Ms: number }) =>
  Array.from({ length: Math.ceil((toS - fromS) / 10) }, (_, i) => ({ t: fromS + i * 10, ...f(fromS + i * 10) }));

describe('parseMarkCompactMb', () => {
  it('reads the heap after a full collection from a --trace-gc line, and nothing else', () => {
    expect(parseMarkCompactMb('[14700:0x285ece70]      189 ms: Mark-Compact 44.8 (77.1) -> 21.1 (54.7) MB, 14.98 / 0.00 ms  (+ 0.5 ms in 5 steps) finalize incremental marking via stack guard')).toBe(21.1);
    expect(parseMarkCompactMb('[1:0x1]  9000 ms: Mark-Compact (reduce) 30.2 (40.0) -> 18.5 (35.0) MB, 3.1 / 0.0 ms  (average mu = 0.99) memory reducer')).toBe(18.5);
    expect(parseMarkCompactMb('[1:0x1]  120 ms: Scavenge 10.1 (12.0) -> 9.5 (13.0) MB, 1.2 / 0.0 ms  (average mu = 1.000) allocation failure;')).toBeNull();
    expect(parseMarkCompactMb('{"level":"info","msg":"Mark-Compact 1 (2) -> 3 (4) MB"}')).toBeNull();
  });
});

describe('growthCheck', () => {
  const options = { warmupS: 300, windowS: 180 };
  const find = (rows: ReturnType<typeof growthCheck>, id: string, metric: string) => rows.find((r) => r.id === id && r.metric === metric);

  it('passes a flat process and fails one whose RSS floor grows by more than 10 % over its life', () => {
    const series: SoakSeries[] = [
      { id: 'broker-1.g0', role: 'broker', slot: 'broker-1', gen: 0, points: pts(0, 1_200, () => ({ rssMb: 100, fds: 40, lagP99Ms: 11 })) },
      // RSS 100 MB at minute 5 → 150 MB at minute 19: a leak; fds and lag flat.
      { id: 'worker-1.g0', role: 'worker', slot: 'worker-1', gen: 0, points: pts(0, 1_200, (t) => ({ rssMb: 100 + Math.max(0, t - 300) / 18, fds: 50, lagP99Ms: 11 })) },
    ];
    const rows = growthCheck(series, options);
    expect(rows.filter((r) => r.fail).map((r) => `${r.id} ${r.metric}`)).toEqual(['worker-1.g0 rssMb']);
    const leak = find(rows, 'worker-1.g0', 'rssMb');
    expect(leak).toMatchObject({ stat: 'min', judged: true, baseline: { fromS: 300, toS: 480, value: 100 } });
    expect(leak?.growthPct).toBeGreaterThan(30);
    expect(find(rows, 'broker-1.g0', 'fds')?.growthPct).toBe(0);
  });

  it('judges the heap by what stays after full collections, not by heap used', () => {
    const series: SoakSeries[] = [
      // Heap used's floor rises with V8's threshold (garbage not yet collected); the live heap is flat.
      { id: 'broker-2.g0', role: 'broker', slot: 'broker-2', gen: 0, points: pts(0, 1_200, (t) => ({ rssMb: 100, heapMb: 30 + t / 100, liveHeapMb: 25, fds: 28, lagP99Ms: 5 })) },
      { id: 'broker-3.g0', role: 'broker', slot: 'broker-3', gen: 0, points: pts(0, 1_200, (t) => ({ rssMb: 100, heapMb: 30, liveHeapMb: 25 + t / 100, fds: 28, lagP99Ms: 5 })) },
    ];
    const rows = growthCheck(series, options);
    expect(rows.filter((r) => r.fail).map((r) => `${r.id} ${r.metric}`)).toEqual(['broker-3.g0 liveHeapMb']);
    expect(rows.some((r) => r.metric === 'heapMb')).toBe(false);
  });

  it('judges RSS by its floor: a GC sawtooth whose peaks rise is not a leak, a rising floor is', () => {
    // Every 120 s the heap is collected back to 150 MB; the peak before each collection rises.
    const sawtooth = (t: number) => 150 + ((t % 120) / 120) * (30 + t / 20);
    const series: SoakSeries[] = [
      { id: 'scheduler-1.g0', role: 'scheduler', slot: 'scheduler-1', gen: 0, points: pts(0, 1_200, (t) => ({ rssMb: sawtooth(t), fds: 27, lagP99Ms: 5 })) },
      { id: 'scheduler-2.g0', role: 'scheduler', slot: 'scheduler-2', gen: 0, points: pts(0, 1_200, (t) => ({ rssMb: sawtooth(t) + t / 20, fds: 27, lagP99Ms: 5 })) },
    ];
    const rows = growthCheck(series, options);
    expect(find(rows, 'scheduler-1.g0', 'rssMb')).toMatchObject({ growthPct: 0, fail: false });
    expect(find(rows, 'scheduler-2.g0', 'rssMb')?.fail).toBe(true);
  });

  it('does not fail growth of exactly the limit, nor a process that shrank', () => {
    const series: SoakSeries[] = [
      { id: 'a.g0', role: 'broker', slot: 'a', gen: 0, points: [...pts(300, 480, () => ({ rssMb: 100, fds: 10, lagP99Ms: 20 })), ...pts(1_020, 1_200, () => ({ rssMb: 110, fds: 9, lagP99Ms: 10 }))] },
    ];
    expect(growthCheck(series, options).some((r) => r.fail)).toBe(false);
  });

  it('compares each process with itself from its own warm-up, and does not judge one too young', () => {
    const series: SoakSeries[] = [
      { id: 'scheduler-1.g0', role: 'scheduler', slot: 'scheduler-1', gen: 0, startedS: 0, points: pts(0, 500, () => ({ rssMb: 80, fds: 30, lagP99Ms: 10 })) },
      // Replaced at 500 s: lower while it warms up (its first 300 s), then flat at 95.
      { id: 'scheduler-1.g1', role: 'scheduler', slot: 'scheduler-1', gen: 1, startedS: 500, points: pts(500, 1_200, (t) => ({ rssMb: t < 800 ? 60 : 95, fds: 30, lagP99Ms: t < 560 ? 300 : 10 })) },
      { id: 'worker-9.g1', role: 'worker', slot: 'worker-9', gen: 1, startedS: 900, points: pts(900, 1_200, () => ({ rssMb: 50, fds: 5, lagP99Ms: 1 })) },
    ];
    const rows = growthCheck(series, options);
    expect(rows.some((r) => r.fail)).toBe(false);
    expect(find(rows, 'scheduler-1.g1', 'rssMb')).toMatchObject({ judged: true, baseline: { fromS: 800, toS: 980, value: 95 }, last: { value: 95 }, growthPct: 0 });
    expect(find(rows, 'scheduler-1.g0', 'rssMb')).toMatchObject({ judged: false, growthPct: null, fail: false });
    expect(find(rows, 'worker-9.g1', 'lagP99Ms')).toMatchObject({ judged: false, fail: false });
  });
});

describe('recoveryOf', () => {
  it('measures the peak after each kill and when the backlog was back (within a tolerance)', () => {
    const samples = [0, 10, 20, 30, 40, 50, 60, 70].map((t, i) => ({ t, backlog: [100, 120, 2_000, 900, 150, 110, 5_000, 5_000][i] ?? 0 }));
    const kills = [{ t: 15 }, { t: 55 }];
    expect(recoveryOf(kills, samples, 50)).toEqual([
      { backlogBefore: 120, peakBacklog: 2_000, recoveredAfterS: 25 },
      { backlogBefore: 110, peakBacklog: 5_000, recoveredAfterS: null },
    ]);
  });
  it('has no figures for a kill before the first sample', () => {
    expect(recoveryOf([{ t: 0 }], [{ t: 5, backlog: 1 }], 10)).toEqual([{ backlogBefore: null, peakBacklog: 1, recoveredAfterS: null }]);
  });
});

describe('killThatExplains', () => {
  const t0 = 1_000_000;
  const kills = [
    { n: 1, victim: 'scheduler-1.g0', t: 120 },
    { n: 3, victim: 'worker-1.g0', t: 360 },
    { n: 6, victim: 'worker-2.g0', t: 720 },
  ];
  const at = (s: number) => t0 + s * 1_000;

  it('puts a run its worker\'s kill interrupted down to that kill', () => {
    expect(killThatExplains({ reason: 'WORKER_RESTART', expectedMs: at(359) }, kills, t0, 120_000)?.n).toBe(3);
    expect(killThatExplains({ reason: 'LOST_WORKER', expectedMs: at(700) }, kills, t0, 120_000)?.n).toBe(6);
  });

  it('explains nothing by a kill that is not a worker\'s, or a kill before the slot was due', () => {
    expect(killThatExplains({ reason: 'LOST_WORKER', expectedMs: at(119) }, kills, t0, 120_000)).toBeNull();
    expect(killThatExplains({ reason: 'LOST_WORKER', expectedMs: at(800) }, kills, t0, 120_000)).toBeNull();
  });

  it('explains no run due longer than the window before the kill, nor one another reason ended', () => {
    expect(killThatExplains({ reason: 'WORKER_RESTART', expectedMs: at(200) }, kills, t0, 120_000)).toBeNull();
    expect(killThatExplains({ reason: 'TIMEOUT', expectedMs: at(359) }, kills, t0, 120_000)).toBeNull();
    expect(killThatExplains({ reason: null, expectedMs: at(359) }, kills, t0, 120_000)).toBeNull();
  });

  it('gives a run due between two worker kills to the later one only', () => {
    expect(killThatExplains({ reason: 'LOST_WORKER', expectedMs: at(361) }, kills, t0, 1_000_000)?.n).toBe(6);
  });
});
