import { describe, expect, it } from 'vitest';
import { callsResumeMs, computeDrillStats, drillTable, expectedSlots, type SinkCall, type SlotInstance } from './stats.js';

const T = Date.UTC(2026, 10, 29, 12, 0, 0); // an even second

function call(taskName: string, expectedMs: number, executionId: string, receivedMs: number, endedMs: number | null = receivedMs + 200): SinkCall {
  return { taskName, expectedMs, executionId, instanceId: `i-${taskName}-${expectedMs}`, workerId: `w-${executionId}`, attempt: 1, receivedMs, endedMs };
}

function ok(taskName: string, expectedMs: number, endedMs: number): SlotInstance {
  return { instanceId: `i-${taskName}-${expectedMs}`, taskName, expectedMs, state: 'SUCCESS', endedMs };
}

describe('expectedSlots', () => {
  it('lists every epoch-aligned period boundary of [from, to) for every task', () => {
    expect(expectedSlots(['a', 'b'], 2_000, T - 1, T + 4_000)).toEqual([
      { taskName: 'a', expectedMs: T },
      { taskName: 'a', expectedMs: T + 2_000 },
      { taskName: 'b', expectedMs: T },
      { taskName: 'b', expectedMs: T + 2_000 },
    ]);
    expect(expectedSlots(['a'], 2_000, T + 1, T + 2_000)).toEqual([]);
  });
});

describe('callsResumeMs', () => {
  it('finds the first instant after which `threshold` calls arrive within one second', () => {
    const times = [T - 500, T + 100, T + 5_000, T + 5_100, T + 5_900, T + 7_000];
    expect(callsResumeMs(times, T, 3)).toBe(T + 5_000);
    expect(callsResumeMs(times, T, 1)).toBe(T + 100);
    expect(callsResumeMs(times, T, 4)).toBeNull();
  });
});

describe('computeDrillStats', () => {
  const base = { taskNames: ['a', 'b'], periodMs: 2_000, fromMs: T, toMs: T + 4_000, recoveryFromMs: T + 1_000, nominalCallsPerSecond: 2 };

  it('a clean drill: nothing lost, nothing doubled, recovery measured from the reference instant', () => {
    const stats = computeDrillStats({
      ...base,
      instances: [ok('a', T, T + 300), ok('b', T, T + 3_500), ok('a', T + 2_000, T + 2_300), ok('b', T + 2_000, T + 2_300)],
      calls: [call('a', T, 'e1', T + 50), call('b', T, 'e2', T + 3_000), call('a', T + 2_000, 'e3', T + 2_050), call('b', T + 2_000, 'e4', T + 2_060)],
    });
    expect(stats.expectedSlots).toBe(4);
    expect(stats.lost).toEqual([]);
    expect(stats.doubled).toEqual([]);
    // b@T succeeded 2.5 s after the reference instant: that is when the backlog was gone
    expect(stats.backlogGoneS).toBe(2.5);
    // one call per second is the threshold (half of 2/s): the first after T+1000 is at T+2050
    expect(stats.callsResumeS).toBe(1.1);
    expect(stats.windowCalls).toBe(4);
  });

  it('a slot without an instance, or not in SUCCESS, is lost; the backlog is then never gone', () => {
    const stats = computeDrillStats({
      ...base,
      instances: [ok('a', T, T + 300), { instanceId: 'x', taskName: 'a', expectedMs: T + 2_000, state: 'FAILED', endedMs: T + 2_500 }],
      calls: [],
    });
    expect(stats.lost).toEqual([
      { taskName: 'a', expectedMs: T + 2_000, state: 'FAILED', instanceId: 'x' },
      { taskName: 'b', expectedMs: T, state: 'MISSING', instanceId: null },
      { taskName: 'b', expectedMs: T + 2_000, state: 'MISSING', instanceId: null },
    ]);
    expect(stats.backlogGoneS).toBeNull();
    expect(stats.callsResumeS).toBeNull();
  });

  it('a call received after SUCCESS was recorded is doubled', () => {
    const stats = computeDrillStats({
      ...base,
      taskNames: ['a'],
      toMs: T + 2_000,
      instances: [ok('a', T, T + 300)],
      calls: [call('a', T, 'e1', T + 50), call('a', T, 'e2', T + 9_000)],
    });
    expect(stats.doubled).toHaveLength(1);
    expect(stats.doubled[0]).toMatchObject({ taskName: 'a', expectedMs: T, kind: 'after-success', executionIds: ['e2'] });
  });

  it('two executions whose calls overlap are doubled; sequential ones (a lost attempt, then a retry) are not', () => {
    const overlapping = computeDrillStats({
      ...base,
      taskNames: ['a'],
      toMs: T + 2_000,
      instances: [ok('a', T, T + 9_000)],
      calls: [call('a', T, 'e1', T + 50, T + 600), call('a', T, 'e2', T + 400, T + 800)],
    });
    expect(overlapping.doubled.map((d) => d.kind)).toEqual(['overlap']);
    const sequential = computeDrillStats({
      ...base,
      taskNames: ['a'],
      toMs: T + 2_000,
      instances: [ok('a', T, T + 9_000)],
      calls: [call('a', T, 'e1', T + 50, T + 600), call('a', T, 'e2', T + 5_000, T + 5_200)],
    });
    expect(sequential.doubled).toEqual([]);
    // a call whose caller never went away (still open) overlaps everything after it
    const open = computeDrillStats({
      ...base,
      taskNames: ['a'],
      toMs: T + 2_000,
      instances: [ok('a', T, T + 9_000)],
      calls: [call('a', T, 'e1', T + 50, null), call('a', T, 'e2', T + 5_000)],
    });
    expect(open.doubled.map((d) => d.kind)).toEqual(['overlap']);
  });

  it('the same execution calling twice is doubled (R12)', () => {
    const stats = computeDrillStats({
      ...base,
      taskNames: ['a'],
      toMs: T + 2_000,
      instances: [ok('a', T, T + 9_000)],
      calls: [call('a', T, 'e1', T + 50), call('a', T, 'e1', T + 3_000)],
    });
    expect(stats.doubled.map((d) => d.kind)).toEqual(['same-execution-twice']);
  });

  it('calls of slots outside the window are ignored for lost and doubled', () => {
    const stats = computeDrillStats({
      ...base,
      taskNames: ['a'],
      toMs: T + 2_000,
      instances: [ok('a', T, T + 300)],
      calls: [call('a', T, 'e1', T + 50), call('a', T - 2_000, 'e0', T + 9_000), call('a', T - 2_000, 'e9', T + 9_000)],
    });
    expect(stats.doubled).toEqual([]);
    expect(stats.windowCalls).toBe(1);
  });
});

describe('drillTable', () => {
  it('prints one Markdown row per drill, "never" for a recovery that did not happen', () => {
    expect(
      drillTable([
        { drill: '1 kill -9 scheduler', lost: 0, doubled: 0, callsResumeS: 0, backlogGoneS: 1.2, goal: '30 s (ceiling 150 s)' },
        { drill: '4 RabbitMQ down 60 s', lost: 3, doubled: 0, callsResumeS: null, backlogGoneS: null, goal: '30 s (ceiling 150 s)' },
      ]),
    ).toBe(
      [
        '| drill | lost | doubled | calls-resume s | backlog-gone s | goal |',
        '|---|---|---|---|---|---|',
        '| 1 kill -9 scheduler | 0 | 0 | 0 | 1.2 | 30 s (ceiling 150 s) |',
        '| 4 RabbitMQ down 60 s | 3 | 0 | never | never | 30 s (ceiling 150 s) |',
      ].join('\n'),
    );
  });
});
