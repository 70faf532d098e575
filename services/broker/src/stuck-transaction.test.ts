/**
 * A broker transaction that never answers (a half-open MySQL connection, a stalled server, a
 * row lock held by a transaction that went astray) is given up after `transactionTimeoutMs`
 * (`AX_DB_TRANSACTION_TIMEOUT_MS`): its connection is dropped and its messages requeued. One
 * broker consumes the events queue at a time, so without the limit one stuck statement would
 * hold every result of every worker behind it (here: until InnoDB's 50 s lock wait timeout).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

const TIMEOUT_MS = 500;
let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness({ transactionTimeoutMs: TIMEOUT_MS });
});

afterAll(async () => {
  await h?.close();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('AX_DB_TRANSACTION_TIMEOUT_MS: a stuck transaction does not hold the events queue', () => {
  it('a result blocked by a row lock is requeued, not lost; results behind it are applied meanwhile', async () => {
    const peer = await h.peer('w-stuck-tx', [], 4);
    // Two tasks: a task's own instances may wait for each other (R4), which is not the point here.
    const blockedId = await h.instance(await h.task('stuck_tx_a'));
    const freeId = await h.instance(await h.task('stuck_tx_b'));
    const items = await peer.waitDispatches(2);
    await peer.ack(items);
    await h.waitState(blockedId, 'RUNNING');
    await h.waitState(freeId, 'RUNNING');
    const blockedItem = items.find((i) => i.instanceId === blockedId)!;
    const freeItem = items.find((i) => i.instanceId === freeId)!;

    // Another session locks the instance row and sits on it, as a transaction gone astray would.
    const blocker = await h.db.pool.getConnection();
    try {
      await blocker.beginTransaction();
      await blocker.query('SELECT id FROM task_instance WHERE id = ? FOR UPDATE', [blockedId]);
      await peer.result([blockedItem], 'SUCCESS');
      await sleep(3 * TIMEOUT_MS); // the broker gives up on it at least once meanwhile
      expect((await h.row(blockedId)).state).toBe('RUNNING');

      const sentAt = Date.now();
      await peer.result([freeItem], 'SUCCESS');
      await h.waitState(freeId, 'SUCCESS', 20 * TIMEOUT_MS);
      console.log(`a result behind the stuck one applied after ${Date.now() - sentAt} ms (transaction limit ${TIMEOUT_MS} ms; InnoDB would wait 50,000)`);
      expect((await h.row(blockedId)).state).toBe('RUNNING');
    } finally {
      await blocker.rollback();
      blocker.release();
    }

    const releasedAt = Date.now();
    await h.waitState(blockedId, 'SUCCESS', 20 * TIMEOUT_MS);
    console.log(`the blocked result applied ${Date.now() - releasedAt} ms after the lock was released`);
    expect(await h.events(blockedId)).toEqual(['CREATED', 'DISPATCHED', 'ACKED', 'SUCCEEDED']);
    const [dead] = await h.db.pool.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM dead_letter');
    expect(Number(dead[0]?.n)).toBe(0);
  });
});
