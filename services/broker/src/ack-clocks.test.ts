// R8: ACK deadlines start at the publish confirm, written a moment later in batches (real MariaDB).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { AckClocks } from './ack-clocks.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

/** A DISPATCHED instance of execution `executionId` whose deadline is the generous claim-time one (60 s). */
async function dispatched(executionId: string, state = 'DISPATCHED'): Promise<string> {
  const [r] = await db.pool.query<ResultSetHeader>(
    `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params, current_execution_id, ack_deadline)
     VALUES (1, ?, NOW(3), CURDATE(), 'manual', ?, NOW(3), '{}', ?, NOW(3) + INTERVAL 60 SECOND)`,
    [`t-${executionId}`, state, executionId],
  );
  return String(r.insertId);
}

async function deadlineInMs(id: string): Promise<number> {
  const [rows] = await db.pool.query<RowDataPacket[]>('SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), ack_deadline) / 1000 AS ms FROM task_instance WHERE id = ?', [id]);
  return Number(rows[0]?.ms);
}

describe('AckClocks', () => {
  it('R8 writes confirm + ACK timeout once the confirm settled, and only to rows still DISPATCHED by that execution', async () => {
    let nowMs = 1_000_000;
    const clocks = new AckClocks({ ackTimeoutMs: 5_000, settleMs: 1_000, nowMs: () => nowMs });
    const waiting = await dispatched('e-wait');
    const done = await dispatched('e-done', 'SUCCESS');
    const superseded = await dispatched('e-new');
    clocks.confirmed(
      [
        { instanceId: waiting, executionId: 'e-wait' },
        { instanceId: done, executionId: 'e-done' },
        { instanceId: superseded, executionId: 'e-old' },
      ],
      new Date(Date.now() + 3_000), // claim + 5 s, the claim 2 s ago
    );
    nowMs += 500;
    expect(await clocks.flush(db.pool)).toBe(0); // not settled yet: nothing written
    expect(await deadlineInMs(waiting)).toBeGreaterThan(50_000);
    nowMs += 700; // 1.2 s after the confirm
    const flushedAt = performance.now();
    expect(await clocks.flush(db.pool)).toBe(1);
    const ms = await deadlineInMs(waiting);
    // The deadline is NOW(3) + 3.8 s at the write and is read a moment later: it is 3.8 s less
    // that moment (a fixed "more than 3 s" failed when the two statements took 0.8 s on a loaded
    // machine). The claim's message deadline, 3 s from the real confirm, would be far below this.
    const sinceFlushMs = performance.now() - flushedAt;
    console.log(`R8 deadline written 1.2 s after the confirm: ${Math.round(ms)} ms from now (confirm + 5 s = 3.8 s), read ${Math.round(sinceFlushMs)} ms after the flush began`);
    expect(ms).toBeGreaterThan(3_800 - sinceFlushMs - 2);
    expect(ms).toBeLessThanOrEqual(3_800);
    expect(await deadlineInMs(done)).toBeGreaterThan(50_000); // moved on: untouched
    expect(await deadlineInMs(superseded)).toBeGreaterThan(50_000); // another execution's row: untouched
    expect(clocks.size).toBe(0);
  });

  it('R8 at shutdown writes every confirm, settled or not; a failed write keeps them queued', async () => {
    const clocks = new AckClocks({ ackTimeoutMs: 5_000, settleMs: 60_000 });
    const id = await dispatched('e-stop');
    clocks.confirmed([{ instanceId: id, executionId: 'e-stop' }], new Date(Date.now() + 5_000));
    const failing = { query: () => Promise.reject(new Error('connection lost')) };
    await expect(clocks.flush(failing as never, { all: true })).rejects.toThrow('connection lost');
    expect(clocks.size).toBe(1);
    expect(await clocks.flush(db.pool)).toBe(0);
    expect(await clocks.flush(db.pool, { all: true })).toBe(1);
    expect(await deadlineInMs(id)).toBeLessThanOrEqual(5_000);
  });
});
