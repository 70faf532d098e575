import { describe, expect, it } from 'vitest';
import { backfillBody, backfillProblem, batchTarget, daysBefore, finishedOf, isMoving, progressText, segmentsOf } from './progress';

describe('segmentsOf', () => {
  it('orders finished states first, drops empty ones, shares add up to 100', () => {
    const segments = segmentsOf({ WAITING: 0, PENDING: 2, RUNNING: 1, SUCCESS: 4, FAILED: 1, CANCELED: 0, DISPATCHED: 0, RETRY_WAIT: 0 });
    expect(segments.map((s) => [s.state, s.count])).toEqual([
      ['SUCCESS', 4],
      ['FAILED', 1],
      ['RUNNING', 1],
      ['PENDING', 2],
    ]);
    expect(segments.map((s) => s.percent)).toEqual([50, 12.5, 12.5, 25]);
  });

  it('no instances: no segments', () => {
    expect(segmentsOf({})).toEqual([]);
    expect(segmentsOf({ SUCCESS: 0 })).toEqual([]);
  });
});

describe('progress', () => {
  it('counts final states as finished', () => {
    expect(finishedOf({ SUCCESS: 3, FAILED: 1, CANCELED: 2, RUNNING: 5 })).toBe(6);
    expect(progressText({ total: 7, counts: { SUCCESS: 5, RUNNING: 2 } as never })).toBe('5 / 7 finished');
  });

  it('polls while running, and while a canceled batch still has instances running', () => {
    expect(isMoving({ state: 'running', total: 2, counts: { SUCCESS: 2 } })).toBe(true);
    expect(isMoving({ state: 'done', total: 2, counts: { SUCCESS: 2 } })).toBe(false);
    expect(isMoving({ state: 'canceled', total: 3, counts: { CANCELED: 2, RUNNING: 1 } })).toBe(true);
    expect(isMoving({ state: 'canceled', total: 3, counts: { CANCELED: 2, SUCCESS: 1 } })).toBe(false);
  });

  it('names what a batch re-ran', () => {
    expect(batchTarget({ mode: 'backfill', request: { task: 'etl', from: '2026-11-01', to: '2026-11-07' } })).toBe('etl 2026-11-01 … 2026-11-07');
    expect(batchTarget({ mode: 'instance', request: { instanceId: '42' } })).toBe('instance #42');
    expect(batchTarget({ mode: 'failed', request: { bizDate: '2026-11-01' } })).toBe('failed, 2026-11-01');
    expect(batchTarget({ mode: 'dag', request: {} })).toBe('? and downstream, ?');
  });
});

describe('backfill choices', () => {
  const ok = { from: '2026-11-01', to: '2026-11-07', concurrency: '2', reason: 'history' };

  it('accepts a range, concurrency and reason, and builds the request', () => {
    expect(backfillProblem(ok)).toBeNull();
    expect(backfillBody('etl', { ...ok, reason: ' history ' }, true)).toEqual({ mode: 'backfill', task: 'etl', from: '2026-11-01', to: '2026-11-07', concurrency: 2, reason: 'history', dryRun: true });
  });

  it('names the first problem', () => {
    expect(backfillProblem({ ...ok, from: '' })).toMatch(/^From/);
    expect(backfillProblem({ ...ok, to: '2026-13-45' })).toMatch(/^To:/);
    expect(backfillProblem({ ...ok, to: '2026-10-31' })).toBe('To must not be before From.');
    expect(backfillProblem({ ...ok, concurrency: '0' })).toMatch(/^Concurrency/);
    expect(backfillProblem({ ...ok, concurrency: '1.5' })).toMatch(/^Concurrency/);
    expect(backfillProblem({ ...ok, reason: '  ' })).toMatch(/reason/);
  });

  it('counts days back across a month', () => {
    expect(daysBefore('2026-12-01', 7)).toBe('2026-11-24');
  });
});
