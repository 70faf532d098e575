import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { loadTasksById, TaskDefinitionCache } from './dispatch.js';
import { TASK_COLUMNS, insertTask, taskFromRow } from './tasks.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('reading tasks for dispatch', () => {
  it('a trusted read returns the same definition as a full one, for every kind of schedule', async () => {
    const schedules = [
      { type: 'cron', expr: '*/5 * * * * *', timezone: 'Asia/Shanghai' },
      { type: 'fixed_rate', everySeconds: 30 },
      { type: 'once', at: '2026-12-01T02:00:00Z' },
      { type: 'none' },
    ];
    const ids: string[] = [];
    for (const [i, schedule] of schedules.entries()) {
      const task = await insertTask(
        db.pool,
        parseTaskDefinitionOrThrow({ name: `trusted_${i}`, schedule, exec: { type: 'http', url: 'http://127.0.0.1:9/x' }, misfire: { policy: 'catch_up', max: 3 }, retry: { max: 2 } }),
      );
      ids.push(task.id);
    }
    const [rows] = await db.pool.query<RowDataPacket[]>(`SELECT ${TASK_COLUMNS} FROM task WHERE id IN (?) ORDER BY id`, [ids]);
    for (const row of rows) expect(taskFromRow(row, { trustSchedule: true })).toEqual(taskFromRow(row));
    // The dispatcher's read (with a cache) uses it, and caches by id and version.
    const cache = new TaskDefinitionCache();
    const first = await loadTasksById(db.pool, ids, cache);
    expect([...first.values()].map((t) => t.definition.schedule.type).sort()).toEqual(['cron', 'fixed_rate', 'none', 'once']);
    const again = await loadTasksById(db.pool, ids, cache);
    for (const id of ids) expect(again.get(id)).toBe(first.get(id));
  });
});
