import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Outbox } from './outbox.js';
import { dispatchItem } from './testing/fixtures.js';

describe('Outbox', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('R12 a redelivered execution id is known and not recorded again', () => {
    const outbox = new Outbox({ file: ':memory:' });
    const item = dispatchItem({ executionId: 'e1' });
    expect(outbox.recordDispatch(item, 1)).toBe(true);
    expect(outbox.recordDispatch(item, 2)).toBe(false);
    expect(outbox.recordDispatches([item, dispatchItem({ executionId: 'e2' })], 3).map((i) => i.executionId)).toEqual(['e2']);
    expect(outbox.dispatch('e1')?.state).toBe('received');
    outbox.close();
  });

  it('keeps of an item what a restart reads back, not the whole item', () => {
    const outbox = new Outbox({ file: ':memory:' });
    const item = dispatchItem({ executionId: 'e1', instanceId: '7', taskName: 'order_stat', traceId: 't-1', attempt: 2 });
    outbox.recordDispatch(item, 1);
    expect(outbox.dispatch('e1')?.item).toStrictEqual({ executionId: 'e1', instanceId: '7', taskName: 'order_stat', traceId: 't-1', attempt: 2 });
    outbox.close();
  });

  it('R12 survives a reopen: the WAL file keeps dispatches, process groups and unconfirmed items', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-outbox-'));
    dirs.push(dir);
    const file = path.join(dir, 'sub', 'outbox.db');
    const first = new Outbox({ file });
    first.recordDispatch(dispatchItem({ executionId: 'e1' }), 1);
    first.setState('e1', 'running', 2);
    first.setProcess('e1', 4242, '123456', 2);
    first.enqueue('ack', 'e1', { executionId: 'e1', instanceId: '1', at: 'x' }, 2);
    first.close();
    const second = new Outbox({ file });
    expect(second.recordDispatch(dispatchItem({ executionId: 'e1' }), 3)).toBe(false);
    const running = second.dispatchesIn('running');
    expect(running).toHaveLength(1);
    expect(running[0]).toMatchObject({ executionId: 'e1', pgid: 4242, procStart: '123456', accepted: false });
    expect(second.due(10, 100).map((r) => r.kind)).toEqual(['ack']);
    second.close();
  });

  it('keeps one item per kind and execution, and replays only the unconfirmed ones when due', () => {
    const outbox = new Outbox({ file: ':memory:' });
    expect(outbox.enqueue('result', 'e1', { outcome: 'SUCCESS' }, 1)).toBe(true);
    expect(outbox.enqueue('result', 'e1', { outcome: 'FAILED' }, 1)).toBe(false);
    outbox.enqueue('ack', 'e1', {}, 1);
    outbox.enqueue('result', 'e2', {}, 1);
    const due = outbox.due(5, 10);
    expect(due.map((r) => `${r.kind}:${r.executionId}`)).toEqual(['result:e1', 'ack:e1', 'result:e2']);
    expect(due[0]?.item).toEqual({ outcome: 'SUCCESS' });
    expect(outbox.unconfirmedResultIds().sort()).toEqual(['e1', 'e2']);
    outbox.confirm([due[0]!.id, due[1]!.id], 6);
    outbox.retryLater([due[2]!.id], 100);
    expect(outbox.due(50, 10)).toEqual([]);
    expect(outbox.nextDueMs()).toBe(100);
    expect(outbox.due(100, 10)).toMatchObject([{ executionId: 'e2', attempts: 1 }]);
    expect(outbox.unconfirmedResultIds()).toEqual(['e2']);
    expect(outbox.confirmedCounts()).toEqual({ ack: 1, refusal: 0, result: 1 });
    outbox.close();
  });

  it('finish writes the final state and the result together and clears the process group', () => {
    const outbox = new Outbox({ file: ':memory:' });
    outbox.recordDispatch(dispatchItem({ executionId: 'e1' }), 1);
    outbox.setProcess('e1', 99, '5', 1);
    expect(outbox.finish('e1', 'done', 'result', { outcome: 'SUCCESS' }, 2)).toBe(true);
    expect(outbox.dispatch('e1')).toMatchObject({ state: 'done', pgid: null, procStart: null });
    expect(outbox.unconfirmedCount()).toBe(1);
    outbox.close();
  });

  it('prunes confirmed items and finished dispatches, never an unconfirmed result', () => {
    const outbox = new Outbox({ file: ':memory:' });
    outbox.recordDispatch(dispatchItem({ executionId: 'e1' }), 1);
    outbox.recordDispatch(dispatchItem({ executionId: 'e2' }), 1);
    outbox.finish('e1', 'done', 'result', {}, 1);
    outbox.finish('e2', 'done', 'result', {}, 1);
    const [first] = outbox.due(1, 10);
    outbox.confirm([first!.id], 2);
    expect(outbox.prune(10)).toEqual({ outgoing: 1, dispatch: 1 });
    expect(outbox.dispatch('e1')).toBeUndefined();
    expect(outbox.dispatch('e2')?.state).toBe('done');
    outbox.close();
  });
});
