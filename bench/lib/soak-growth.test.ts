import { describe, expect, it } from 'vitest';
import { growthCheck, meanIn, parseVmRssKb, promValue, recoveryOf, victimOf, type SoakSeries } from './soak-growth.mjs';

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

describe('growthCheck', () => {
  const window = { baseline: [300, 360] as const, last: [1_140, 1_200] as const };

  it('passes a flat process and fails one whose RSS grows by more than 10 %', () => {
    const series: SoakSeries[] = [
      { id: 'broker-1.g0', role: 'broker', slot: 'broker-1', gen: 0, points: pts(0, 1_200, () => ({ rssMb: 100, fds: 40, lagP99Ms: 11 })) },
      // RSS 100 MB at minute 5 → 150 MB at minute 19: a leak; fds and lag flat.
      { id: 'worker-1.g0', role: 'worker', slot: 'worker-1', gen: 0, points: pts(0, 1_200, (t) => ({ rssMb: 100 + Math.max(0, t - 300) / 18, fds: 50, lagP99Ms: 11 })) },
    ];
    const rows = growthCheck(series, window);
    const failed = rows.filter((r) => r.fail).map((r) => `${r.slot} ${r.metric}`);
    expect(failed).toEqual(['worker-1 rssMb']);
    const leak = rows.find((r) => r.slot === 'worker-1' && r.metric === 'rssMb');
    expect(leak?.sameProcess).toBe(true);
    expect(leak?.growthPct).toBeGreaterThan(40);
    expect(rows.find((r) => r.slot === 'broker-1' && r.metric === 'fds')?.growthPct).toBe(0);
  });

  it('does not fail growth of exactly the limit, nor a process that shrank', () => {
    const series: SoakSeries[] = [
      { id: 'a.g0', role: 'broker', slot: 'a', gen: 0, points: [...pts(300, 360, () => ({ rssMb: 100, fds: 10, lagP99Ms: 20 })), ...pts(1_140, 1_200, () => ({ rssMb: 110, fds: 9, lagP99Ms: 10 }))] },
    ];
    expect(growthCheck(series, window).some((r) => r.fail)).toBe(false);
  });

  it('compares a replaced slot with its latest process, and reports a slot missing a window without failing it', () => {
    const series: SoakSeries[] = [
      { id: 'scheduler-1.g0', role: 'scheduler', slot: 'scheduler-1', gen: 0, points: pts(0, 600, () => ({ rssMb: 80, fds: 30, lagP99Ms: 10 })) },
      { id: 'scheduler-1.g1', role: 'scheduler', slot: 'scheduler-1', gen: 1, points: pts(600, 1_200, () => ({ rssMb: 95, fds: 30, lagP99Ms: 10 })) },
      { id: 'worker-9.g0', role: 'worker', slot: 'worker-9', gen: 0, points: pts(0, 400, () => ({ rssMb: 50, fds: 5, lagP99Ms: 1 })) },
    ];
    const rows = growthCheck(series, window);
    const rss = rows.find((r) => r.slot === 'scheduler-1' && r.metric === 'rssMb');
    expect(rss).toMatchObject({
      sameProcess: false,
      baseline: { series: ['scheduler-1.g0'], mean: 80 },
      last: { series: ['scheduler-1.g1'], mean: 95 },
      growthPct: 18.75,
      fail: true,
    });
    const orphan = rows.find((r) => r.slot === 'worker-9' && r.metric === 'rssMb');
    expect(orphan).toMatchObject({ growthPct: null, fail: false, last: { n: 0 } });
  });

  it('leaves out the start-up of a process (its first settleS seconds)', () => {
    // Replaced at 1,100 s: high lag and low RSS while it starts, then the same as before.
    const series: SoakSeries[] = [
      { id: 'worker-1.g0', role: 'worker', slot: 'worker-1', gen: 0, startedS: 0, points: pts(0, 1_100, () => ({ rssMb: 100, fds: 50, lagP99Ms: 10 })) },
      { id: 'worker-1.g1', role: 'worker', slot: 'worker-1', gen: 1, startedS: 1_100, points: pts(1_100, 1_200, (t) => (t < 1_160 ? { rssMb: 80, fds: 50, lagP99Ms: 90 } : { rssMb: 100, fds: 50, lagP99Ms: 10 })) },
    ];
    expect(growthCheck(series, window).filter((r) => r.fail).map((r) => r.metric)).toEqual(['lagP99Ms']);
    const settled = growthCheck(series, { ...window, settleS: 60 });
    expect(settled.some((r) => r.fail)).toBe(false);
    expect(settled.find((r) => r.metric === 'lagP99Ms')).toMatchObject({ last: { n: 4, mean: 10 }, growthPct: 0 });
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
