import { describe, expect, it } from 'vitest';
import { TeamQuota, parseTaskDefinitionOrThrow, type WorkerSnapshot } from '@ax/core';
import type { ActiveRun, ClaimedInstance, RerunBatchLoad, TaskRecord } from '@ax/store';
import type { PoolHold } from './backlog-deferral.js';
import { dropRefused, runPlan, type Decision, type PlanEffect, type PlanInput } from './claim-plan.js';

// The planner alone (#46): claimed rows, a worker snapshot and the block/team/batch state in,
// one decision per instance out. No database, Redis or broker: effects are answered by a table.

const DB_NOW = new Date('2026-12-07T00:00:00.000Z');

function task(id: string, over: Record<string, unknown> = {}): TaskRecord {
  const definition = parseTaskDefinitionOrThrow({ name: `t${id}`, schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] }, block: 'parallel', ...over });
  return { id, definition, version: 1, createdAt: DB_NOW, updatedAt: DB_NOW, lastFireTime: null, nextFireTime: null, skippedCount: 0, coalescedCount: 0 } as unknown as TaskRecord;
}

function row(id: string, taskId: string, over: Partial<ClaimedInstance> = {}): ClaimedInstance {
  return {
    id,
    taskId,
    taskName: `t${taskId}`,
    team: null,
    expectedTime: new Date(DB_NOW.getTime() - 1_000),
    runNo: 1,
    bizDate: '2026-12-07',
    trigger: 'manual',
    attempt: 1,
    maxAttempts: 1,
    priority: 5,
    params: {},
    workerId: null,
    rerouteCount: 0,
    rerunBatchId: null,
    lateMs: 1_000,
    waitingMs: 0,
    dbNow: DB_NOW,
    traceParent: null,
    ...over,
  };
}

function worker(id: string, over: Partial<WorkerSnapshot> = {}): WorkerSnapshot {
  return { id, tags: [], cores: 4, slots: 2, running: 0, avgDurationMs5m: 0, draining: false, ...over };
}

function run(id: string, taskName: string): ActiveRun {
  return { id, taskName, state: 'RUNNING', workerId: 'w1', executionId: `e-${id}` };
}

interface Case {
  readonly name: string;
  readonly tasks: TaskRecord[];
  readonly claimed: ClaimedInstance[];
  readonly workers: WorkerSnapshot[];
  readonly active?: ActiveRun[];
  readonly queueHeads?: Record<string, number>;
  readonly batches?: Record<string, RerunBatchLoad>;
  readonly limits?: { readonly max: Record<string, number>; readonly active: Record<string, number> };
  readonly holds?: Record<string, PoolHold>;
  readonly answer?: (effect: PlanEffect) => unknown;
  /** One line per instance: `i1 → w1`, `i1 → w1,w2`, `i1 deferred serial`, `i1 canceled TOO_LATE`, `i1 no-worker`, `i1 untouched`. */
  readonly expect: string[];
  readonly canceled?: number;
  readonly deferred?: number;
}

function inputOf(c: Case): PlanInput {
  const activeByTask = new Map<string, ActiveRun[]>();
  for (const r of c.active ?? []) activeByTask.set(r.taskName, [...(activeByTask.get(r.taskName) ?? []), r]);
  let n = 0;
  return {
    claimed: c.claimed,
    tasks: new Map(c.tasks.map((t) => [t.id, t])),
    workers: c.workers,
    activeByTask,
    queueHeads: new Map(Object.entries(c.queueHeads ?? {})),
    batches: new Map(Object.entries(c.batches ?? {})),
    quota: c.limits === undefined ? null : new TeamQuota(new Map(Object.entries(c.limits.max)), new Map(Object.entries(c.limits.active))),
    holdOf: (def) => c.holds?.[def.name],
    noWorkerAlertMs: 60_000,
    random: () => 0,
    newId: () => `x${++n}`,
  };
}

function line(d: Decision): string {
  switch (d.kind) {
    case 'dispatch':
      return `${d.instanceId} → ${d.workerIds.join(',')}`;
    case 'deferred':
      return `${d.instanceId} deferred ${d.why}`;
    case 'canceled':
      return `${d.instanceId} canceled ${d.reason}`;
    case 'no-worker':
      return `${d.instanceId} no-worker`;
    case 'untouched':
      return `${d.instanceId} untouched`;
  }
}

const HOLD: PoolHold = { pool: 'p', since: DB_NOW, important: 10, slots: 2 };

const cases: Case[] = [
  {
    name: 'R11 no live worker: no-worker, never a failure',
    tasks: [task('1')],
    claimed: [row('i1', '1')],
    workers: [],
    expect: ['i1 no-worker'],
  },
  {
    name: 'tags: only a worker carrying every tag of the task',
    tasks: [task('1', { tags: ['gpu'] })],
    claimed: [row('i1', '1'), row('i2', '1')],
    workers: [worker('w1'), worker('w2', { tags: ['gpu', 'x'] })],
    expect: ['i1 → w2', 'i2 → w2'],
  },
  {
    name: 'tags: no worker carries them (R11)',
    tasks: [task('1', { tags: ['gpu'] })],
    claimed: [row('i1', '1')],
    workers: [worker('w1', { tags: ['cpu'] })],
    expect: ['i1 no-worker'],
  },
  {
    name: "team: a worker serving other teams is not one for the task's",
    tasks: [task('1', { team: 'blue' })],
    claimed: [row('i1', '1')],
    workers: [worker('w1', { teams: ['red'] })],
    expect: ['i1 no-worker'],
  },
  {
    name: 'team: the worker serving it takes it',
    tasks: [task('1', { team: 'blue' })],
    claimed: [row('i1', '1')],
    workers: [worker('w1', { teams: ['red'] }), worker('w2', { teams: ['blue'] })],
    expect: ['i1 → w2'],
  },
  {
    name: 'R9 capacity is slots + prefetch; beyond it the instance waits silently (busy, not no-worker)',
    tasks: [task('1')],
    claimed: [row('i1', '1'), row('i2', '1'), row('i3', '1'), row('i4', '1')],
    workers: [worker('w1', { slots: 1, prefetch: 2, running: 1 })],
    expect: ['i1 → w1', 'i2 → w1', 'i3 deferred busy', 'i4 deferred busy'],
    deferred: 2,
  },
  {
    name: 'R9 a draining worker takes nothing',
    tasks: [task('1')],
    claimed: [row('i1', '1')],
    workers: [worker('w1', { draining: true })],
    expect: ['i1 no-worker'],
  },
  {
    name: 'R9 below the reserve priority the reserved slots stay free; claim order (priority first) decides',
    tasks: [task('1')],
    claimed: [row('hi', '1', { priority: 9 }), row('lo1', '1', { priority: 1 }), row('lo2', '1', { priority: 1 })],
    workers: [worker('w1', { slots: 3, reservedSlots: { slots: 1, minPriority: 8 } })],
    expect: ['hi → w1', 'lo1 → w1', 'lo2 deferred busy'],
  },
  {
    name: 'R4 serial: one of the batch starts, the next waits; a running one holds every new one',
    tasks: [task('1', { block: 'serial' }), task('2', { block: 'serial' })],
    claimed: [row('i1', '1'), row('i2', '1'), row('i3', '2')],
    workers: [worker('w1', { slots: 10 })],
    active: [run('r2', 't2')],
    expect: ['i1 → w1', 'i2 deferred serial', 'i3 deferred serial'],
    deferred: 2,
  },
  {
    name: 'R4 discard cancels while one runs (DISCARDED)',
    tasks: [task('1', { block: 'discard' })],
    claimed: [row('i1', '1')],
    workers: [worker('w1')],
    active: [run('r1', 't1')],
    expect: ['i1 canceled DISCARDED'],
    canceled: 1,
  },
  {
    name: 'R4 cover cancels the running one and starts; a second of the batch waits',
    tasks: [task('1', { block: 'cover' })],
    claimed: [row('i1', '1'), row('i2', '1')],
    workers: [worker('w1')],
    active: [run('r1', 't1')],
    expect: ['i1 → w1', 'i2 deferred cover'],
    canceled: 1,
  },
  {
    name: 'R4 queue: only the earliest waiting slot starts, one at a time',
    tasks: [task('1', { block: { queue: 3 } })],
    claimed: [row('i2', '1', { expectedTime: new Date(DB_NOW.getTime() - 500) }), row('i1', '1', { expectedTime: new Date(DB_NOW.getTime() - 1_000) })],
    workers: [worker('w1')],
    queueHeads: { t1: DB_NOW.getTime() - 1_000 },
    expect: ['i2 deferred queue', 'i1 → w1'],
  },
  {
    name: 'R20 a rerun batch never runs more than its concurrency',
    tasks: [task('1')],
    claimed: [row('i1', '1', { rerunBatchId: 'b1' }), row('i2', '1', { rerunBatchId: 'b1' }), row('i3', '1', { rerunBatchId: 'b2' }), row('i4', '1', { rerunBatchId: 'b3' })],
    workers: [worker('w1', { slots: 10 })],
    batches: { b1: { concurrency: 2, active: 1 }, b2: { concurrency: 1, active: 1 }, b3: { concurrency: null, active: 50 } },
    expect: ['i1 → w1', 'i2 deferred batch', 'i3 deferred batch', 'i4 → w1'],
  },
  {
    name: "DESIGN §11 a team's maxRunning counts the batch's own picks; other teams go on",
    tasks: [task('1', { team: 'blue' }), task('2', { team: 'red' })],
    claimed: [row('i1', '1'), row('i2', '1'), row('i3', '2')],
    workers: [worker('w1', { slots: 10 })],
    limits: { max: { blue: 2 }, active: { blue: 1 } },
    expect: ['i1 → w1', 'i2 deferred team', 'i3 → w1'],
  },
  {
    name: "DESIGN §11 R4 a covered run gives its team's room back",
    tasks: [task('1', { team: 'blue', block: 'cover' })],
    claimed: [row('i1', '1')],
    workers: [worker('w1')],
    active: [run('r1', 't1')],
    limits: { max: { blue: 1 }, active: { blue: 1 } },
    expect: ['i1 → w1'],
    canceled: 1,
  },
  {
    name: 'DESIGN §11 R4 a cover that lost its cancel leaves the team full',
    tasks: [task('1', { team: 'blue', block: 'cover' })],
    claimed: [row('i1', '1')],
    workers: [worker('w1')],
    active: [run('r1', 't1')],
    limits: { max: { blue: 1 }, active: { blue: 1 } },
    answer: (e) => (e.kind === 'cover' ? false : true),
    expect: ['i1 deferred team'],
    canceled: 0,
  },
  {
    name: 'R5 a scheduled first attempt past maxLatenessSeconds is canceled; a retry never is',
    tasks: [task('1', { maxLatenessSeconds: 10 })],
    claimed: [row('i1', '1', { trigger: 'schedule', lateMs: 10_001 }), row('i2', '1', { trigger: 'schedule', lateMs: 10_001, attempt: 2 }), row('i3', '1', { trigger: 'manual', lateMs: 99_000 })],
    workers: [worker('w1', { slots: 5 })],
    expect: ['i1 canceled TOO_LATE', 'i2 → w1', 'i3 → w1'],
    canceled: 1,
  },
  {
    name: 'a deleted task cancels its instance; a cancel that lost is left untouched and uncounted',
    tasks: [],
    claimed: [row('i1', 'gone'), row('i2', 'gone')],
    workers: [worker('w1')],
    answer: (e) => e.kind === 'cancel' && e.instance.id === 'i1',
    expect: ['i1 canceled TASK_DELETED', 'i2 untouched'],
    canceled: 1,
    deferred: 0,
  },
  {
    name: '#22 below the deferral priority an instance of a backlogged pool is held',
    tasks: [task('1')],
    claimed: [row('i1', '1')],
    workers: [worker('w1')],
    holds: { t1: HOLD },
    expect: ['i1 deferred held'],
  },
  {
    name: 'R21 broadcast: one shard per matching worker',
    tasks: [task('1', { route: 'broadcast', tags: ['x'] })],
    claimed: [row('i1', '1')],
    workers: [worker('w2', { tags: ['x'] }), worker('w1', { tags: ['x'] }), worker('w3')],
    expect: ['i1 → w1,w2'],
  },
  {
    name: 'R21 broadcast waits while any matching worker is full',
    tasks: [task('1', { route: 'broadcast' })],
    claimed: [row('i1', '1')],
    workers: [worker('w1'), worker('w2', { slots: 1, running: 1 })],
    expect: ['i1 deferred busy'],
  },
  {
    name: 'R21 a shard reservation refused (another broker filled the worker) marks it full for the rest of the batch',
    tasks: [task('1', { route: 'broadcast' }), task('2')],
    claimed: [row('i1', '1'), row('i2', '2')],
    workers: [worker('w1', { slots: 5 })],
    answer: (e) => (e.kind === 'reserveShards' ? 'w1' : true),
    expect: ['i1 deferred busy', 'i2 deferred busy'],
  },
  {
    name: 'R21 broadcast without a matching worker is R11',
    tasks: [task('1', { route: 'broadcast', tags: ['x'] })],
    claimed: [row('i1', '1')],
    workers: [worker('w1')],
    expect: ['i1 no-worker'],
  },
  {
    name: 'R8 a re-routed instance avoids the silent worker, unless it is the only one',
    tasks: [task('1'), task('2')],
    claimed: [row('i1', '1', { rerouteCount: 1, workerId: 'w1' }), row('i2', '2', { rerouteCount: 1, workerId: 'w9' })],
    workers: [worker('w1', { slots: 5 }), worker('w2', { slots: 1, running: 0 })],
    expect: ['i1 → w2', 'i2 → w1'],
  },
];

describe('claim planner (#46)', () => {
  it.each(cases)('$name', (c) => {
    const { plan } = runPlan(inputOf(c), c.answer);
    expect(plan.decisions.map(line)).toEqual(c.expect);
    if (c.canceled !== undefined) expect(plan.canceled).toBe(c.canceled);
    const deferred = plan.decisions.filter((d) => d.kind === 'deferred').length;
    expect(plan.deferred).toBe(c.deferred ?? deferred);
    // Every dispatch decision is in the plan, one entry per worker, with its own execution id.
    const planned = plan.plan.map((p) => `${p.instance.id}@${p.worker.id}`);
    const decided = plan.decisions.flatMap((d) => (d.kind === 'dispatch' ? d.workerIds.map((w) => `${d.instanceId}@${w}`) : []));
    expect(planned.sort()).toEqual(decided.sort());
    expect(new Set(plan.plan.map((p) => p.executionId)).size).toBe(plan.plan.length);
  });

  it('is pure: the inputs are left as they were, and the same input plans the same', () => {
    const c = cases.find((x) => x.name.startsWith('R9 capacity')) as Case;
    const input = inputOf(c);
    const before = JSON.stringify(input.workers);
    const first = runPlan(inputOf(c)).plan.decisions;
    runPlan(input);
    expect(JSON.stringify(input.workers)).toBe(before);
    expect(runPlan(inputOf(c)).plan.decisions).toEqual(first);
  });

  it('R11 asks for the NO_WORKER alert only past noWorkerAlertMs', () => {
    const c: Case = { name: '', tasks: [task('1', { tags: ['gpu'] })], claimed: [row('i1', '1', { waitingMs: 60_001 }), row('i2', '1', { waitingMs: 59_000 })], workers: [worker('w1')], expect: [] };
    const { plan, effects } = runPlan(inputOf(c));
    expect(effects.filter((e) => e.kind === 'alert').map((e) => (e as { instance: ClaimedInstance }).instance.id)).toEqual(['i1']);
    expect([...plan.noWorker.values()].flat()).toEqual(['i1', 'i2']);
  });

  it('round_robin takes the task cursor per routed instance and rotates', () => {
    const c: Case = { name: '', tasks: [task('1', { route: 'round_robin' })], claimed: [row('i1', '1'), row('i2', '1'), row('i3', '1')], workers: [worker('w1', { slots: 5 }), worker('w2', { slots: 5 })], expect: [] };
    const { plan, effects } = runPlan(inputOf(c));
    expect(effects.filter((e) => e.kind === 'cursor')).toHaveLength(3);
    const to = plan.decisions.map((d) => (d.kind === 'dispatch' ? d.workerIds[0] : d.kind));
    expect(to[0]).not.toBe(to[1]);
    expect(to[0]).toBe(to[2]);
  });

  it('R4 cover asks to cancel every running instance of the task, covered by the new one', () => {
    const c: Case = { name: '', tasks: [task('1', { block: 'cover' })], claimed: [row('i1', '1')], workers: [worker('w1')], active: [run('r1', 't1'), run('r2', 't1')], expect: [] };
    const { plan, effects } = runPlan(inputOf(c));
    expect(effects.filter((e) => e.kind === 'cover').map((e) => e.kind === 'cover' && `${e.run.id} by ${e.by.id}`)).toEqual(['r1 by i1', 'r2 by i1']);
    expect(plan.covered.map((r) => r.id)).toEqual(['r1', 'r2']);
  });

  it('R9 slots a worker refused at reservation leave the plan and count as deferred', () => {
    const c: Case = { name: '', tasks: [task('1')], claimed: [row('i1', '1'), row('i2', '1')], workers: [worker('w1')], expect: [] };
    const { plan } = runPlan(inputOf(c));
    dropRefused(plan, new Set([(plan.plan[1] as { executionId: string }).executionId]));
    expect(plan.plan.map((p) => p.instance.id)).toEqual(['i1']);
    expect(plan.deferred).toBe(1);
  });
});
