import { describe, expect, it } from 'vitest';
import type { WorkerSnapshot } from '../routing/worker-snapshot.js';
import { classifyWaiting, type WaitingFacts } from './classify.js';
import { WAITING_REASONS, isWaitingReason } from './reasons.js';

const worker = (over: Partial<WorkerSnapshot> = {}): WorkerSnapshot => ({ id: 'w1', tags: ['etl'], cores: 4, slots: 2, running: 0, avgDurationMs5m: 0, draining: false, ...over });

/** A startable instance of a serial task of team `data`, due for a minute. */
const facts = (over: Partial<WaitingFacts> = {}): WaitingFacts => ({
  instanceId: '10',
  state: 'PENDING',
  team: 'data',
  priority: 5,
  expectedTimeMs: Date.UTC(2026, 11, 1, 2),
  dueForMs: 60_000,
  dispatchPaused: false,
  task: { name: 'order_stat', block: 'serial', tags: ['etl'] },
  running: [],
  workers: [worker()],
  graceMs: 1_000,
  ...over,
});

describe('classifyWaiting (R23: every held instance says why)', () => {
  it('a startable instance with a free slot is not held', () => {
    expect(classifyWaiting(facts())).toBeNull();
  });

  it('UPSTREAM: a WAITING instance waits for its parents', () => {
    expect(classifyWaiting(facts({ state: 'WAITING', dispatchPaused: true }))?.reason).toBe('UPSTREAM');
  });

  it('DISPATCH_PAUSED: the global pause holds everything that is due', () => {
    const v = classifyWaiting(facts({ dispatchPaused: true, running: [{ id: '9', state: 'RUNNING', workerId: 'w1' }] }));
    expect(v?.reason).toBe('DISPATCH_PAUSED');
    expect(v?.message).toContain('paused');
  });

  it('a deleted task is not held (the claim cancels it)', () => {
    expect(classifyWaiting(facts({ task: undefined }))).toBeNull();
  });

  it('BACKLOG_HOLD names the pool and the priority line', () => {
    const v = classifyWaiting(facts({ priority: 2, backlogHold: { pool: 'etl', belowPriority: 5 } }));
    expect(v?.reason).toBe('BACKLOG_HOLD');
    expect(v?.message).toContain('priority 2 is below 5');
    expect(v?.message).toContain('pool etl');
  });

  it('SERIAL_BUSY names the running instance and its worker', () => {
    const v = classifyWaiting(facts({ running: [{ id: '9', state: 'RUNNING', workerId: 'w7' }] }));
    expect(v).toEqual({ reason: 'SERIAL_BUSY', message: 'task order_stat (block serial) already has instance 9 RUNNING on worker w7' });
  });

  it('SERIAL_BUSY also for a busy {queue} task; parallel tasks are never held by a sibling', () => {
    const running = [{ id: '9', state: 'DISPATCHED' as const, workerId: null }];
    expect(classifyWaiting(facts({ task: { name: 'q', block: { queue: 3 }, tags: ['etl'] }, running }))?.message).toBe('task q (block queue of 3) already has instance 9 DISPATCHED');
    expect(classifyWaiting(facts({ task: { name: 'p', block: 'parallel', tags: ['etl'] }, running }))).toBeNull();
  });

  it('QUEUE_POSITION: a {queue} slot behind the earliest waiting one', () => {
    const head = { expectedTimeMs: Date.UTC(2026, 11, 1, 1), instanceId: '8' };
    const v = classifyWaiting(facts({ task: { name: 'q', block: { queue: 3 }, tags: ['etl'] }, queueHead: head }));
    expect(v).toEqual({ reason: 'QUEUE_POSITION', message: 'task q runs its slots in order: instance 8 goes first' });
    // the head itself is startable
    expect(classifyWaiting(facts({ task: { name: 'q', block: { queue: 3 }, tags: ['etl'] }, queueHead: { ...head, expectedTimeMs: Date.UTC(2026, 11, 1, 2) } }))).toBeNull();
  });

  it('BATCH_CONCURRENCY names the batch and its n/m', () => {
    expect(classifyWaiting(facts({ batch: { id: '4', concurrency: 2, active: 2 } }))).toEqual({ reason: 'BATCH_CONCURRENCY', message: 'rerun batch 4 runs 2 of its concurrency 2' });
    expect(classifyWaiting(facts({ batch: { id: '4', concurrency: 2, active: 1 } }))).toBeNull();
    expect(classifyWaiting(facts({ batch: { id: '4', concurrency: null, active: 9 } }))).toBeNull();
  });

  it('TEAM_LIMIT says n/m of the team', () => {
    const v = classifyWaiting(facts({ teamLimit: { maxRunning: 3, active: 3 } }));
    expect(v).toEqual({ reason: 'TEAM_LIMIT', message: 'team data has 3/3 instances DISPATCHED or RUNNING (its maxRunning)' });
    expect(classifyWaiting(facts({ teamLimit: { maxRunning: 3, active: 2 } }))).toBeNull();
  });

  it('NO_WORKER names the tags no worker of the team offers, or the team nobody serves', () => {
    const gpu = facts({ task: { name: 't', block: 'parallel', tags: ['etl', 'gpu'] } });
    expect(classifyWaiting(gpu)).toEqual({ reason: 'NO_WORKER', message: 'no live worker of team data offers tag(s) gpu of its tags [etl, gpu]' });
    const none = classifyWaiting(facts({ workers: [worker({ teams: ['web'] }), worker({ id: 'w2', draining: true })] }));
    expect(none).toEqual({ reason: 'NO_WORKER', message: 'no live worker serves team data (1 draining)' });
    const apart = classifyWaiting(facts({ task: { name: 't', block: 'parallel', tags: ['a', 'b'] }, workers: [worker({ tags: ['a'] }), worker({ id: 'w2', tags: ['b'] })] }));
    expect(apart?.message).toBe('no live worker of team data carries all of its tags [a, b] together');
  });

  it('NO_WORKER is reported at once (no grace): waiting for a worker is never "in flight"', () => {
    expect(classifyWaiting(facts({ dueForMs: 0, workers: [] }))?.reason).toBe('NO_WORKER');
  });

  it('QUEUE_POSITION when every slot that could take it is taken, once past the grace', () => {
    const full = { workers: [worker({ running: 2 }), worker({ id: 'w2', running: 2, teams: ['data'] })] };
    expect(classifyWaiting(facts({ ...full, dueForMs: 500 }))).toBeNull();
    expect(classifyWaiting(facts(full))).toEqual({ reason: 'QUEUE_POSITION', message: 'waits its turn for a slot: all 4 slots of the 2 worker(s) that can take it (w1, w2) are taken' });
  });

  it('RATE_LIMIT when a dispatch rate is set and it could start but did not', () => {
    expect(classifyWaiting(facts({ dispatchRatePerSecond: 5 }))?.reason).toBe('RATE_LIMIT');
    expect(classifyWaiting(facts({ dispatchRatePerSecond: 5, dueForMs: 10 }))).toBeNull();
  });

  it('the first hold wins, in the order the claim checks them', () => {
    const all = facts({
      running: [{ id: '9', state: 'RUNNING', workerId: 'w1' }],
      batch: { id: '4', concurrency: 1, active: 1 },
      teamLimit: { maxRunning: 1, active: 1 },
      workers: [],
    });
    expect(classifyWaiting(all)?.reason).toBe('SERIAL_BUSY');
    expect(classifyWaiting({ ...all, running: [] })?.reason).toBe('BATCH_CONCURRENCY');
    expect(classifyWaiting({ ...all, running: [], batch: undefined })?.reason).toBe('TEAM_LIMIT');
    expect(classifyWaiting({ ...all, running: [], batch: undefined, teamLimit: undefined })?.reason).toBe('NO_WORKER');
  });

  it('the enum is the contract, and stored values are checked', () => {
    expect(WAITING_REASONS).toEqual(['SERIAL_BUSY', 'QUEUE_POSITION', 'BATCH_CONCURRENCY', 'TEAM_LIMIT', 'NO_WORKER', 'BACKLOG_HOLD', 'RATE_LIMIT', 'DISPATCH_PAUSED', 'UPSTREAM']);
    expect(isWaitingReason('TEAM_LIMIT')).toBe(true);
    expect(isWaitingReason('team_limit')).toBe(false);
  });
});
