import { describe, expect, it } from 'vitest';
import { MESSAGE_VERSION, type AckMessage, type ResultMessage } from '@ax/core';
import { TransactionTimeoutError } from '@ax/store';
import { EventBatcher, mergeMessages, type BatchedMessage } from './event-batch.js';

const ack = (workerId: string, ...ids: string[]): AckMessage => ({
  v: MESSAGE_VERSION,
  kind: 'ack',
  workerId,
  items: ids.map((executionId) => ({ executionId, instanceId: '1', at: '2026-11-29T00:00:00.000Z' })),
});

describe('R10 events applied in batches', () => {
  it('merges messages of one worker (and origin), keeping the order of their items', () => {
    const merged = mergeMessages([ack('w1', 'a'), ack('w2', 'b'), ack('w1', 'c')]);
    expect(merged.map((m) => [m.workerId, m.items.map((i) => i.executionId)])).toEqual([
      ['w1', ['a', 'c']],
      ['w2', ['b']],
    ]);
    const report = { v: MESSAGE_VERSION, kind: 'result', workerId: 'w1', origin: 'report', items: [] } as unknown as ResultMessage;
    const fromWorker = { v: MESSAGE_VERSION, kind: 'result', workerId: 'w1', items: [] } as unknown as ResultMessage;
    expect(mergeMessages([report, fromWorker])).toHaveLength(2); // a relayed report is not a worker's own result
  });

  it('applies the messages submitted in one tick in one call and resolves each after it', async () => {
    const calls: BatchedMessage[][] = [];
    const batcher = new EventBatcher(async (messages) => {
      calls.push([...messages]);
    });
    await Promise.all([batcher.submit(ack('w1', 'a')), batcher.submit(ack('w1', 'b')), batcher.submit(ack('w2', 'c'))]);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.map((m) => m.items.length)).toEqual([2, 1]);
  });

  it('keeps one transaction in flight per kind: what arrives meanwhile forms the next batch (group commit)', async () => {
    const calls: string[][] = [];
    let finishFirst: () => void = () => undefined;
    const firstDone = new Promise<void>((resolve) => {
      finishFirst = resolve;
    });
    const batcher = new EventBatcher(async (messages) => {
      calls.push(messages.flatMap((m) => m.items.map((i) => i.executionId)));
      if (calls.length === 1) await firstDone;
    });
    const first = batcher.submit(ack('w1', 'a'));
    await new Promise((resolve) => setImmediate(resolve));
    const later = [batcher.submit(ack('w1', 'b')), batcher.submit(ack('w2', 'c'))];
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toEqual([['a']]); // b and c wait for the transaction in flight
    finishFirst();
    await Promise.all([first, ...later]);
    expect(calls).toEqual([['a'], ['b', 'c']]);
  });

  it('a retryable error rejects the whole batch (each message is requeued)', async () => {
    const deadlock = Object.assign(new Error('Deadlock found when trying to get lock'), { errno: 1213, sqlState: '40001', code: 'ER_LOCK_DEADLOCK' });
    let calls = 0;
    const batcher = new EventBatcher(async () => {
      calls += 1;
      throw deadlock;
    });
    const results = await Promise.allSettled([batcher.submit(ack('w1', 'a')), batcher.submit(ack('w1', 'b'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toBe(1);
  });

  it('any other error is isolated: the other messages of the batch still apply, only the failing one rejects', async () => {
    const applied: string[] = [];
    const batcher = new EventBatcher(async (messages) => {
      const ids = messages.flatMap((m) => m.items.map((i) => i.executionId));
      if (ids.includes('poison')) throw new Error('a bug');
      applied.push(...ids);
    });
    const results = await Promise.allSettled([batcher.submit(ack('w1', 'a')), batcher.submit(ack('w2', 'poison')), batcher.submit(ack('w3', 'c'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(applied).toEqual(['a', 'c']);
  });

  it('a transaction timeout (one row locked by a stray transaction) is re-applied one by one: the free messages commit, only the stuck one is requeued', async () => {
    const singles: string[] = [];
    const batcher = new EventBatcher(async (messages) => {
      const ids = messages.flatMap((m) => m.items.map((i) => i.executionId));
      if (messages.length === 1) singles.push(ids.join(','));
      if (ids.includes('stuck')) throw new TransactionTimeoutError(500);
    });
    const outcomes = await Promise.allSettled([batcher.submit(ack('w1', 'stuck')), batcher.submit(ack('w2', 'free')), batcher.submit(ack('w3', 'also-free'))]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect((outcomes[0] as PromiseRejectedResult).reason).toBeInstanceOf(TransactionTimeoutError);
    expect(singles).toEqual(['stuck', 'free', 'also-free']);
  });

  it('when the store itself hangs (two single timeouts in a row) the rest of the batch is requeued untried', async () => {
    let calls = 0;
    const batcher = new EventBatcher(async () => {
      calls += 1;
      throw new TransactionTimeoutError(500);
    });
    const outcomes = await Promise.allSettled(['a', 'b', 'c', 'd'].map((id, i) => batcher.submit(ack(`w${i}`, id))));
    expect(outcomes.every((o) => o.status === 'rejected')).toBe(true);
    expect(calls).toBe(3); // the batch, then two singles
  });
});
