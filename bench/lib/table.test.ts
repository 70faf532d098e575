import { describe, expect, it } from 'vitest';
import { chartPanels, renderChart } from './svg.mjs';
import {
  baselineSection,
  burstPhasesSection,
  correctnessProblems,
  historySection,
  idleSection,
  lagCell,
  markdownTable,
  outputSection,
  purgeSection,
  renderReport,
  steadyProfileSection,
  timersSection,
  type BenchResults,
} from './table.mjs';

const lag = (p50: number, max: number) => ({ n: 10, p50, p95: max, p99: max, max, mean: p50 });
const once = (dup = 0, missing = 0) => ({ expected: 10, duplicates: dup, missing, unexpected: 0 });
const run = (result: object, status: 'ok' | 'timeout' | 'error' = 'ok') => ({ status, wallMs: 12_300, budgetMs: 90_000, result });

const results: BenchResults = {
  startedAt: '2026-11-29T21:00:00.000Z',
  wallMs: 420_000,
  machine: { cores: 2, memGb: 23, node: 'v20.20.2' },
  scenarios: {
    'ax-burst-2000': run({ status: 'ok', earlyStarts: 0, tasks: 2_000, allSuccessMs: 1_900, fireLagMs: lag(80, 90), startLagMs: lag(400, 900), instances: once(), executions: once() }),
    'bullmq-burst-2000': run({ status: 'ok', tasks: 2_000, allSuccessMs: 2_200, pickupLagMs: lag(100, 200), startLagMs: lag(300, 600), executions: once() }),
    'ax-burst-10000': run({ status: 'timeout', earlyStarts: 4, tasks: 10_000, allSuccessMs: null, fireLagMs: lag(150, 160), instances: once(0, 3), executions: once(2, 0),
      profiles: { broker: { files: 1, totalMs: 20_000, idleMs: 12_000, busyMs: 8_000, areas: [{ area: 'mysql2', selfMs: 4_000, pct: 50 }],
        top: [{ name: 'query', url: 'mysql2:lib/c.js:1', selfMs: 4_000, pct: 50 }] } } }),
    'ax-throughput-1': run({ status: 'ok', cpu: { windowS: 10, seconds: { broker: 4, worker: 6.5, mariadb: 4.5, machine: 19 } }, instances: 15_000, succeeded: 15_000, sustainedPerS: 3_200, overallPerS: 2_900, topology: { brokers: 1, workers: 2 }, executions: once() }),
    limits: run({ status: 'ok', rabbitmq: { publishConfirmedPerS: 16_000, consumeAckPerS: 20_000, roundTripPerS: 12_800 }, mariadb: { batch: 500, batchedInsertRowsPerS: 30_000, batchedUpdateRowsPerS: 10_000 } }),
    'ax-steady': run({}, 'timeout'),
  },
};

describe('markdownTable and cells', () => {
  it('renders a header, a separator and escaped cells', () => {
    expect(markdownTable(['a', 'b'], [['x|y', null]])).toBe('| a | b |\n|---|---|\n| x\\|y | — |');
  });
  it('prints lag as p50 / p95 / p99 / max', () => {
    expect(lagCell(lag(1_200, 3_400))).toBe('1,200 / 3,400 / 3,400 / 3,400');
    expect(lagCell(undefined)).toBe('—');
  });
});

describe('renderReport', () => {
  const md = renderReport(results);
  it('puts duplicates and missing first and loudly', () => {
    expect(correctnessProblems(results)).toEqual([
      'ax-burst-10000: 4 job(s) called before their fire time',
      'ax-burst-10000: instances — 0 duplicate(s), 3 missing of 10',
      'ax-burst-10000: executions — 2 duplicate(s), 0 missing of 10',
    ]);
    expect(md.indexOf('CORRECTNESS')).toBeGreaterThan(0);
    expect(md.indexOf('CORRECTNESS')).toBeLessThan(md.indexOf('## Burst'));
  });
  it('judges the goals against the peer and the fixed targets', () => {
    const ax2k = md.split('\n').find((l) => l.startsWith('| ax | 2,000'));
    expect(ax2k).toContain('| 1,900 |');
    expect(ax2k).toContain('| met |');
    expect(md.split('\n').find((l) => l.startsWith('| ax | 10,000'))).toContain('**missed**');
    expect(md.split('\n').find((l) => l.startsWith('| 1 | 2 | 15,000'))).toContain('| met |');
    const withStorage = renderReport({ scenarios: { 'ax-throughput-1': run({ instances: 15_000, succeeded: 15_000, sustainedPerS: 3_200, overallPerS: 2_900, topology: { brokers: 1, workers: 2 }, storage: { instances: 15_000, bytesPerInstance: 2_345, byTable: {} } }) } });
    expect(withStorage.split('\n').find((l) => l.startsWith('| 1 | 2 | 15,000'))).toContain('| 3,200 | 2,900 | 2,345 |');
  });
  it('judges ax with its own defaults against both BullMQ peers (#24), and leaves those rows out of older results', () => {
    const withDefaults: BenchResults = {
      scenarios: {
        ...results.scenarios,
        'ax-burst-2000-defaults': run({ tasks: 2_000, allSuccessMs: 700, instances: once(), executions: once() }),
        'bullmq-burst-2000-inproc': run({ tasks: 2_000, allSuccessMs: 800, executions: once() }),
      },
    };
    const row = renderReport(withDefaults).split('\n').find((l) => l.startsWith('| ax, service defaults'));
    expect(row).toContain('≤ BullMQ in-process: met; ≤ 0.35× BullMQ over HTTP (0.32×): met');
    const slow = { scenarios: { ...withDefaults.scenarios, 'ax-burst-2000-defaults': run({ tasks: 2_000, allSuccessMs: 2_037 }) } };
    expect(renderReport(slow).split('\n').find((l) => l.startsWith('| ax, service defaults'))).toContain('≤ BullMQ in-process: **missed**; ≤ 0.35× BullMQ over HTTP (0.93×): **missed**');
    expect(md).not.toContain('service defaults');
  });
  it('shows where a burst job spent its time, for the runs that measured it', () => {
    const md = burstPhasesSection({
      'ax-burst-2000-defaults': run({ tasks: 2_000, phasesMs: { claimWaitMs: lag(400, 1_500), deliveryMs: lag(30, 90), callToAppliedMs: lag(60, 200) } }),
    });
    expect(md.split('\n').find((l) => l.startsWith('| 2,000 (service defaults)'))).toBe('| 2,000 (service defaults) | 400 / 1,500 / 1,500 / 1,500 | 30 / 90 / 90 / 90 | 60 / 200 / 200 / 200 |');
    expect(burstPhasesSection({ 'ax-burst-2000': run({ tasks: 2_000 }) })).toContain('no burst run measured its phases');
  });
  it('shows ax as a fraction of the RabbitMQ round trip, the profiles and the runs over budget', () => {
    expect(md).toContain('| RabbitMQ publish-confirm + consume at once (round trip) | 12,800 | 25.0 % |');
    expect(md).toContain('#### broker (1 process: busy 8,000 ms of 20,000 ms)');
    expect(md).toContain('| 1 | query | mysql2:lib/c.js:1 | 4,000 | 50 |');
    expect(md).toContain('**Over budget (stopped):** ax-steady');
  });
});

describe('steadyProfileSection', () => {
  it('shows the CPU per process, the Node profiles and MariaDB\'s statements by shape', () => {
    const md = steadyProfileSection({
      'ax-steady-profile': run({
        status: 'ok', offeredPerS: 4_000, seconds: 30, sustainedSuccessPerS: 1_500,
        cpu: { windowS: 30, seconds: { mariadb: 22.5, broker: 9, machine: 57 } },
        profiles: { scheduler: { files: 1, totalMs: 30_000, idleMs: 20_000, busyMs: 10_000, areas: [{ area: '(garbage collector)', selfMs: 2_300, pct: 23 }],
          top: [{ name: '(garbage collector)', url: '', selfMs: 2_300, pct: 23 }] } },
        mysqlDigest: { bufferPool: '1G', statements: 7_000, seconds: 41.25, top: [{ shape: "SELECT a | b FROM t WHERE c = ? AND `d` IN (?+)", count: 300, seconds: 13.2, share: 32, meanMs: 44, rowsExamined: 12_000 }] },
      }),
    });
    expect(md).toContain('4,000 tasks firing every second for 30 s under the profiler: 1,500 SUCCESS/s sustained');
    expect(md).toContain('mariadb 22.5 s · broker 9.0 s; the machine 1.90 cores');
    expect(md).toContain('#### scheduler (1 process: busy 10,000 ms of 30,000 ms)');
    expect(md).toContain('7,000 statements, 41.3 s of statement time');
    expect(md).toContain("| `SELECT a \\| b FROM t WHERE c = ? AND 'd' IN (?+)` | 32 % | 300 | 44 | 12,000 |");
    expect(steadyProfileSection({})).toBe('_ax-steady-profile: not run_');
  });
});

describe('cpuSection', () => {
  it('shows seconds and cores per process for the runs that measured them', () => {
    const md = renderReport(results);
    expect(md).toContain('| process | ax #4, 1 broker (10 s) |');
    expect(md).toContain('| broker | 4.0 s (0.40 cores) |');
    expect(md).toContain('| whole machine (all users) | 19.0 s (1.90 cores) |');
    expect(md).toContain('| redis | — |');
    // (4 + 6.5 + 4.5) s for 15,000 jobs = 1 ms per job → 2,000 jobs/s on two cores
    expect(md).toContain('| **CPU ms per job** (all processes above but the machine) | **1.00** |');
    expect(md).toContain('| jobs/s two idle cores would allow at that cost | 2,000 |');
  });
});

describe('idleSection', () => {
  const proc = (stack: string, service: string, name: string, cpuPct: number) => ({ stack, service, name, cpuSeconds: cpuPct * 0.6, cpuPct, maxWindowPct: cpuPct + 0.5, windowsPct: [], goal: cpuPct <= 1 ? 'met' : 'missed' });
  const idle = {
    status: 'ok', goalPct: 1, settleS: 15, windowS: 60, sampleS: 10, machinePct: 90, cores: 2, profiled: false,
    stacks: [{ label: 'empty', tasks: 0, fireInH: null }, { label: 'far', tasks: 20, fireInH: 6 }],
    load: { atStart: [1, 1, 1], before: [2.5, 2, 1.5], after: [2.4, 2, 1.5] },
    processes: [proc('empty', 'broker', 'broker-1', 1.45), proc('far', 'broker', 'broker-1', 0.9), proc('empty', 'worker', 'worker-1', 0.5), proc('far', 'worker', 'worker-1', 0.55)],
  };
  it('shows every process of both stacks and judges the worst against 1 %', () => {
    const md = idleSection({ 'ax-idle': run(idle) });
    expect(md).toContain('| process | empty: no task | far: 20 tasks, next fire in 6 h | goal ≤ 1 % |');
    expect(md).toContain('| broker-1 | 1.45 % (worst 10 s: 1.95 %) | 0.90 % (worst 10 s: 1.4 %) | **missed** |');
    expect(md).toContain('| worker-1 | 0.50 % (worst 10 s: 1 %) | 0.55 % (worst 10 s: 1.05 %) | met |');
    expect(md).toContain('load average (1/5/15 min) 2.5 / 2 / 1.5 before');
    expect(md).not.toContain('Profiled');
    expect(idleSection({ 'ax-idle': run({ ...idle, profiled: true }) })).toContain('**Profiled**');
    expect(idleSection({})).toBe('_ax-idle: not run_');
  });
});

describe('renderChart', () => {
  const svg = renderChart(chartPanels(results), { title: 'a <b> & c' });
  it('is one SVG document with escaped text, a bar per measured value and goal lines', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('a &lt;b&gt; &amp; c');
    expect(svg).toContain('1,900 ms');
    expect(svg).toContain('n/a ms'); // the 10,000 burst that timed out
    expect(svg.match(/stroke-dasharray/g)).toHaveLength(3);
  });
  it('draws the steady backlog of both systems as lines', () => {
    const withSamples: BenchResults = {
      scenarios: {
        'ax-steady': run({ offeredPerS: 4_000, samples: [{ t: -500, backlog: 9 }, { t: 0, backlog: 0 }, { t: 1_000, backlog: 2_000 }] }),
        'bullmq-steady': run({ samples: [{ t: 0, backlog: 5 }] }),
      },
    };
    const svg = renderChart(chartPanels(withSamples));
    const paths = [...svg.matchAll(/<path d="([^"]+)"/g)].map((m) => m[1]!);
    expect(paths).toHaveLength(2);
    expect(paths[0]!.split(' ')).toHaveLength(2); // the sample before the window is dropped
    expect(svg).toContain('4,000 tasks fire every second');
  });
  it('scales bars to the largest value of their panel', () => {
    const one = renderChart([{ title: 't', unit: 'x', bars: [{ label: 'a', value: 50, kind: 'ax' }, { label: 'b', value: 100, kind: 'bullmq' }] }], { width: 530 });
    const widths = [...one.matchAll(/<rect x="220" y="\d+" width="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(widths[1]! / widths[0]!).toBeCloseTo(2, 2);
  });
});

describe('job output, old against new, timers', () => {
  const cpu = (broker: number) => ({ windowS: 10, seconds: { broker, worker: 1, mariadb: 1, machine: 20 } });
  it('puts 10 KB jobs beside silent ones: rate as a share of the silent rate, MB/s stored, CPU per job', () => {
    const md = outputSection({
      'ax-output-silent': run({ printBytes: 0, succeeded: 1_000, sustainedPerS: 200, logMbPerS: 0, cpu: cpu(2) }),
      'ax-output-10k': run({ printBytes: 10_240, succeeded: 1_000, sustainedPerS: 150, logMbPerS: 1.5, cpu: cpu(3) }),
    });
    const tenK = md.split('\n').find((l) => l.startsWith('| 10,240'));
    expect(tenK).toContain('| 150 | 0.75 | 1.5 | 5.00 |'); // (3 + 1 + 1) s × 1000 / 1,000 jobs
  });
  it('judges silent jobs against the baseline commit on the median of alternated rounds, and says how to run it when it was not', () => {
    const withBaseline: BenchResults = {
      baseline: { commit: '0123456789abcdef' },
      scenarios: {
        'ax-output-silent': run({ succeeded: 1_000, sustainedPerS: 94, cpu: cpu(2) }),
        'ax-output-silent@baseline': run({ succeeded: 1_000, sustainedPerS: 100, cpu: cpu(1) }),
        'ax-output-silent@baseline#2': run({ succeeded: 1_000, sustainedPerS: 100, cpu: cpu(1) }),
        'ax-output-silent#2': run({ succeeded: 1_000, sustainedPerS: 92, cpu: cpu(1) }),
        'ax-output-silent#3': run({ succeeded: 1_000, sustainedPerS: 120, cpu: cpu(1) }),
        'ax-output-silent@baseline#3': run({ succeeded: 1_000, sustainedPerS: 100, cpu: cpu(1) }),
      },
    };
    const row = baselineSection(withBaseline).split('\n').find((l) => l.startsWith('| ax-output-silent'));
    expect(row).toContain('| 3 | new first: 100 → 94, CPU 3.00 → 4.00; old first: 100 → 92, CPU 3.00 → 3.00; new first: 100 → 120, CPU 3.00 → 3.00 |');
    expect(row).toContain('| 0.94× (0.92–1.20) | 1.00× |');
    expect(row).toContain('median ≥ 0.95× old: **missed**');
    const one = { baseline: withBaseline.baseline, scenarios: { 'ax-output-silent': run({ sustainedPerS: 97 }), 'ax-output-silent@baseline': run({ sustainedPerS: 100 }) } };
    expect(baselineSection(one).split('\n').find((l) => l.startsWith('| ax-output-silent'))).toContain('| 0.97× | — | median ≥ 0.95× old: met |');
    expect(baselineSection({ scenarios: {} })).toContain('--baseline <commit>');
  });
  it('shows retry and re-route lateness against their goals', () => {
    const md = timersSection({ timers: run({ retryLatenessMs: lag(9, 47), retryGapOverBackoffMs: lag(54, 122), rerouteLatenessMs: lag(15, 600) }) });
    expect(md.split('\n').find((l) => l.startsWith('| retry: next'))).toContain('p99 ≤ 100 ms: met');
    expect(md.split('\n').find((l) => l.startsWith('| re-route'))).toContain('≤ 500 ms: **missed**');
    const none = timersSection({ timers: run({ retryLatenessMs: lag(9, 47), rerouteLatenessMs: { n: 0 } }) });
    expect(none.split('\n').find((l) => l.startsWith('| re-route'))).toContain('not measured: no re-route happened');
  });
});

describe('historySection (#24)', () => {
  const history = {
    params: { tasks: 100_000, everyMinute: 10_000, instances: 5_000_000, days: 90 },
    bufferPool: '2G',
    history: { built: false, builtAt: '2026-12-02T10:00:00.000Z' },
    goals: { apiP99Ms: 100, schedulerStartS: 10, schedulerRssMb: 400, refillLateMs: 1_000 },
    api: [
      { name: 'stats: today', p50Ms: 12, p99Ms: 40, maxMs: 55, perS: 900, failed: 0, goal: 'met' },
      { name: 'dag grid from a root', p50Ms: 90, p99Ms: 280, maxMs: 400, perS: 80, failed: 2, failures: ['timeout'], goal: 'missed' },
    ],
    rollup: { days: 89, seconds: 161.2 },
    scheduler: { enabledTasks: 100_000, startS: 6.6, startGoal: 'met', maxRssMb: 380, peakRssMb: 420, cpuPct: 17.1, minutes: [
      { slot: '2026-12-03T10:00:00.000Z', due: 10_004, created: 10_004, lastCommitMs: -20_000, goal: 'met' },
      { slot: '2026-12-03T10:01:00.000Z', due: 10_004, created: 10_001, lastCommitMs: 300, goal: 'missed' },
    ] },
    schedulerCapped: { heapMb: 256, enabledTasks: 100_000, startS: 7.1, maxRssMb: 333, peakRssMb: 341, cpuPct: 26.2, minutes: [
      { slot: '2026-12-03T10:03:00.000Z', due: 10_004, created: 10_004, lastCommitMs: 90, goal: 'met' },
    ] },
  };
  const md = historySection({ 'ax-history': run(history) });
  const line = (start: string) => md.split('\n').find((l) => l.startsWith(start));
  it('judges each admin-api read against p99 ≤ 100 ms', () => {
    expect(md).toContain('100,000 tasks (10,000 every minute), 5,000,000 instances over 90 days, InnoDB buffer pool 2G; built 2026-12-02T10:00:00.000Z, reused');
    expect(line('| stats: today')).toContain('| 12 | 40 | 55 | 900 | 0 | met |');
    expect(line('| dag grid')).toContain('| 2 (timeout) | **missed** |');
    expect(md).toContain('admin-api rolled up 89 days in 161.2 s after its start, before the reads were measured.');
  });
  it('judges the scheduler on the higher of its RSS sample and peak, and every minute on all its instances', () => {
    expect(line('| start')).toContain('| 6.6 s | ≤ 10 s: met |');
    expect(line('| RSS')).toContain('| 380 / 420 MB | ≤ 400 MB: **missed** |');
    expect(line('| refill of slot 2026-12-03T10:01')).toContain('10,001 / 10,004, 300 ms | all, ≤ 1,000 ms: **missed** |');
    expect(md).toContain('Retention purge while dispatching: see its own section (`ax-purge`).');
  });
  it('shows the scheduler with a capped heap beside the defaults, its CPU too', () => {
    expect(line('| CPU after the start')).toContain('| 17.1 % |');
    expect(line('| with `--max-old-space-size=256`: RSS')).toContain('| 333 / 341 MB | ≤ 400 MB: met |');
    expect(line('| with `--max-old-space-size=256`: start')).toContain('| 7.1 s, 26.2 % | slots complete: met |');
  });
  it('shows where each missed read\'s time went, from its profiled pass', () => {
    expect(md).not.toContain('### Where the missed reads');
    const profiled = historySection({ 'ax-history': run({ ...history, apiProfiles: [{
      name: 'dag grid from a root', p50Ms: 120, p99Ms: 310, perS: 70, failed: 0, cpu: { windowS: 5.7, adminApiPct: 64.5, mariadbPct: 31.2 },
      profiles: { 'admin-api': { files: 1, totalMs: 5_700, idleMs: 2_000, busyMs: 3_700, areas: [{ area: '(garbage collector)', selfMs: 600, pct: 16.2 }],
        top: [{ name: 'parseTaskDefinition', url: 'packages/core/dist/task/definition.js', selfMs: 500, pct: 13.5 }] } },
    }] }) });
    expect(profiled).toContain('### Where the missed reads\' time goes');
    expect(profiled).toContain('**dag grid from a root**: 70 answered/s, p99 310 ms under the profiler; over the 5.7 s loop admin-api used 64.5 % of a core and MariaDB 31.2 %.');
    expect(profiled).toContain('#### admin-api (1 process: busy 3,700 ms of 5,700 ms)');
    expect(profiled).toContain('| 1 | parseTaskDefinition | packages/core/dist/task/definition.js | 500 | 13.5 |');
  });
  it('says so when the scenario did not run', () => {
    expect(historySection({})).toBe('_ax-history: not run_');
    expect(renderReport({ scenarios: { 'ax-history': run(history) } })).toContain('## History at scale (#24)');
  });
});

describe('purgeSection (#24)', () => {
  const purge = (over: object = {}) => ({
    status: 'ok',
    params: { expired: 1_000_000, rate: 1_000, seconds: 60, retentionDays: 30, retentionPeriodMs: 1_000, batchSize: 500, bufferPool: '2G' },
    build: { totalS: 61.5 },
    phases: [
      { name: 'A', seconds: 60, startLagMs: lag(30, 100), sustainedSuccessPerS: 1_000, backlogAtEnd: 40, keptUp: true },
      { name: 'B', seconds: 60, startLagMs: lag(35, 115), sustainedSuccessPerS: 990, backlogAtEnd: 60, keptUp: true },
    ],
    handoffMs: 1_600,
    startLagP99Ratio: 1.15,
    goalRatio: 1.2,
    purge: { purged: 80_000, expiredLeft: 920_000, done: false, seconds: 63, perS: 1_270 },
    instances: once(),
    executions: once(),
    unrepairedAtStop: 0,
    ...over,
  });
  const lineOf = (md: string, start: string) => md.split('\n').find((l) => l.startsWith(start));
  it('judges the p99 ratio of the purge phase to the phase without against 1.20', () => {
    const md = purgeSection({ 'ax-purge': run(purge()) });
    expect(md).toContain('1,000,000 expired instances');
    expect(lineOf(md, '| A: load alone')).toContain('| 60 | 1,000 | 1,000 | 30 / 100 / 100 / 100 | 40 | yes |');
    expect(lineOf(md, '| start lag p99, B / A')).toContain('1.15× (100 → 115 ms) | ≤ 1.20×: met |');
    expect(lineOf(md, '| expired instances purged')).toContain('80,000 of 1,000,000, 920,000 left');
    expect(lineOf(md, '| purge rate')).toContain('1,270 instances/s over 63 s');
    expect(lineOf(md, '| exactly once')).toContain('0 dup, 0 missing');
    const missed = purgeSection({ 'ax-purge': run(purge({ startLagP99Ratio: 1.5 })) });
    expect(lineOf(missed, '| start lag p99, B / A')).toContain('≤ 1.20×: **missed**');
  });
  it('shows where the purge\'s CPU lands, per process, the largest change first', () => {
    expect(lineOf(purgeSection({ 'ax-purge': run(purge()) }), '| CPU per process')).toBeUndefined();
    const [a, b] = purge().phases;
    const md = purgeSection({ 'ax-purge': run(purge({ phases: [
      { ...a, cpuCores: { scheduler: 0.05, mariadb: 0.6, broker: 0.2, machine: 1.5 } },
      { ...b, cpuCores: { scheduler: 0.25, mariadb: 0.95, broker: 0.21, machine: 1.9 } },
    ] })) });
    expect(lineOf(md, '| CPU per process')).toContain('| mariadb 0.60 → 0.95 · scheduler 0.05 → 0.25 · broker 0.20 → 0.21 · machine 1.50 → 1.90 |');
  });
  it('does not call a run that purged nothing met', () => {
    const md = purgeSection({ 'ax-purge': run(purge({ startLagP99Ratio: 0.9, purge: { purged: 0, expiredLeft: 1_000_000, done: false, seconds: 0, perS: null } })) });
    expect(lineOf(md, '| start lag p99, B / A')).toContain('not measured (nothing purged)');
  });
  it('does not judge the purge when the stack was behind the load without it', () => {
    const behind = purge({
      phases: [
        { name: 'A', seconds: 60, startLagMs: lag(42_000, 58_000), sustainedSuccessPerS: 285, backlogAtEnd: 33_000, keptUp: false },
        { name: 'B', seconds: 60, startLagMs: lag(50_000, 67_000), sustainedSuccessPerS: 590, backlogAtEnd: 8_000, keptUp: false },
      ],
      instances: { expected: 125_000, duplicates: 0, missing: 23_000, unexpected: 0 },
      missingDetail: { missing: 32_500, taskCoalescedCount: 32_000, taskSkippedCount: 0 },
    });
    const md = purgeSection({ 'ax-purge': run(behind) });
    expect(lineOf(md, '| A: load alone')).toContain('| **no** |');
    expect(lineOf(md, '| start lag p99, B / A')).toContain('not measured (the stack did not keep up with the load in phase A)');
    expect(lineOf(md, '| exactly once')).toContain('23,000 missing; task counters: 32,000 coalesced, 0 skipped (misfire policy)');
  });
  it('says so when the scenario did not run, and the report has its section', () => {
    expect(purgeSection({})).toBe('_ax-purge: not run_');
    expect(purgeSection({ 'ax-purge': run({ status: 'error', error: 'boom' }, 'error') })).toBe('_ax-purge: error_');
    expect(renderReport({ scenarios: { 'ax-purge': run(purge()) } })).toContain('## Retention purge while dispatching (#24)');
  });
});
