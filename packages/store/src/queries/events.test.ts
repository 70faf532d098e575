// appendEvents: one INSERT for many events; the database clock when an event has no time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { appendEvents } from './events.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

async function eventsOf(instanceId: string): Promise<RowDataPacket[]> {
  const [rows] = await db.pool.query<RowDataPacket[]>(
    'SELECT type, execution_id, worker_id, message, data, TIMESTAMPDIFF(MICROSECOND, at, NOW(3)) / 1000 AS age_ms, at FROM event_log WHERE instance_id = ? ORDER BY id',
    [instanceId],
  );
  return rows;
}

describe('appendEvents', () => {
  it('without times: every row gets the database clock; with some times: those are kept, the rest get the clock', async () => {
    await appendEvents(db.pool, [
      { instanceId: '1', type: 'DISPATCHED', executionId: 'e1', workerId: 'w1', data: { attempt: 1 } },
      { instanceId: '1', type: 'SUCCEEDED', executionId: 'e1', workerId: 'w1', message: 'ok' },
    ]);
    const plain = await eventsOf('1');
    expect(plain.map((r): unknown[] => [r.type, r.execution_id, r.worker_id, r.message])).toEqual([
      ['DISPATCHED', 'e1', 'w1', null],
      ['SUCCEEDED', 'e1', 'w1', 'ok'],
    ]);
    for (const r of plain) expect(Math.abs(Number(r.age_ms))).toBeLessThan(5_000);

    const at = new Date('2026-01-02T03:04:05.678Z');
    await appendEvents(db.pool, [
      { instanceId: '2', type: 'CREATED', at },
      { instanceId: '2', type: 'DISPATCHED' },
    ]);
    const mixed = await eventsOf('2');
    expect(Number(mixed[0]?.age_ms)).toBeGreaterThan(86_400_000); // the given time, long ago
    expect(Math.abs(Number(mixed[1]?.age_ms))).toBeLessThan(5_000);
  });
});
