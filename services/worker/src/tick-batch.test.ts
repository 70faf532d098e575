import { describe, expect, it } from 'vitest';
import { TickBatch } from './tick-batch.js';

describe('TickBatch', () => {
  it('writes every entry added in one tick in one call, and resolves each after the write', async () => {
    const calls: number[][] = [];
    const batch = new TickBatch<number>((entries) => calls.push([...entries]));
    const done = [batch.add(1), batch.add(2), batch.add(3)];
    expect(calls).toEqual([]); // nothing written synchronously
    await Promise.all(done);
    expect(calls).toEqual([[1, 2, 3]]);
    await batch.add(4);
    expect(calls).toEqual([[1, 2, 3], [4]]);
  });

  it('rejects every entry of a batch whose write failed, and later batches still run', async () => {
    let fail = true;
    const written: number[] = [];
    const batch = new TickBatch<number>((entries) => {
      if (fail) throw new Error('disk full');
      written.push(...entries);
    });
    const results = await Promise.allSettled([batch.add(1), batch.add(2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await batch.add(3);
    expect(written).toEqual([3]);
  });
});
