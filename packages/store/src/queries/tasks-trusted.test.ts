import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2';
import { DEFAULT_CATCH_UP_MAX, DEFAULT_RETRY, parseTaskDefinitionOrThrow } from '@ax/core';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { loadTasksById, TaskDefinitionCache } from './dispatch.js';
import { StoredTaskUnreadableError, TASK_COLUMNS, insertTask, listTasks, taskFromRow } from './tasks.js';

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

describe('trusted list reads (#46)', () => {
  const http = { type: 'http', url: 'http://127.0.0.1:9/x' };
  beforeAll(async () => {
    const defs = [
      { name: 'list_cron', schedule: { type: 'cron', expr: '0 2 * * *', timezone: 'Asia/Shanghai' }, exec: http, misfire: { policy: 'catch_up' } },
      { name: 'list_shell', schedule: { type: 'fixed_rate', everySeconds: 60 }, exec: { type: 'shell', command: ['echo', '{{bizDate}}'] }, tags: ['x'] },
      { name: 'list_sql', schedule: { type: 'none' }, exec: { type: 'sql', datasource: 'DB', statement: 'SELECT 1' }, block: { queue: 3 }, sla: { finishWithinSeconds: 60 } },
      { name: 'list_zz', schedule: { type: 'once', at: '2026-12-01T02:00:00Z' }, exec: http, dependencyTimeoutSeconds: 600 },
    ];
    for (const def of defs) await insertTask(db.pool, parseTaskDefinitionOrThrow(def));
  });
  const named = { names: ['list_cron', 'list_old', 'list_shell', 'list_sql', 'list_zz'] };

  it('gives the same records as the full read', async () => {
    const full = await listTasks(db.pool, { ...named, memo: false });
    expect(full).toHaveLength(4);
    const trusted = await listTasks(db.pool, { ...named, trusted: true });
    expect(trusted).toEqual(full);
    // keys in the same order too: a response lists a definition's fields as the full read did
    expect(trusted.map((t) => JSON.stringify(t.definition))).toEqual(full.map((t) => JSON.stringify(t.definition)));
    expect(await listTasks(db.pool, { q: 'list_', trusted: true })).toEqual(await listTasks(db.pool, { q: 'list_', memo: false }));
  });

  it('reads a row as the previous build wrote it (fields added since missing) with today\'s defaults (R22)', async () => {
    // The previous build's row: its exec without method, its retry without jitterSeconds, its
    // catch_up without max (fields with a default in today's schema).
    await db.pool.query(
      `INSERT INTO task (name, team, description, schedule, schedule_type, timezone, exec, params, tags, retry, misfire)
       VALUES ('list_old', 'default', 'old', '{"type":"cron","expr":"0 3 * * *"}', 'cron', 'UTC', '{"type":"http","url":"http://127.0.0.1:9/x"}',
               '{}', '[]', '{"max":2,"backoffSeconds":5,"factor":2}', '{"policy":"catch_up"}')`,
    );
    const [old] = await listTasks(db.pool, { names: ['list_old'], trusted: true });
    expect(old?.definition.exec).toEqual({ type: 'http', url: 'http://127.0.0.1:9/x', method: 'POST' });
    expect(old?.definition.retry).toEqual({ max: 2, backoffSeconds: 5, factor: 2, jitterSeconds: DEFAULT_RETRY.jitterSeconds });
    expect(old?.definition.misfire).toEqual({ policy: 'catch_up', max: DEFAULT_CATCH_UP_MAX });
    expect(old).toEqual((await listTasks(db.pool, { names: ['list_old'], memo: false }))[0]);
  });

  it('a corrupt row: a named error, or left out and reported when the list asks so', async () => {
    await db.pool.query(`UPDATE task SET exec = '{"type":"ftp","host":"h"}' WHERE name = 'list_shell'`);
    const thrown = await listTasks(db.pool, { ...named, trusted: true }).catch((err: unknown) => err);
    expect(thrown).toBeInstanceOf(StoredTaskUnreadableError);
    expect((thrown as StoredTaskUnreadableError).taskName).toBe('list_shell');
    expect((thrown as Error).message).toMatch(/^task "list_shell": its stored definition cannot be read: .*exec/);
    const reported: Array<[string, number]> = [];
    const listed = await listTasks(db.pool, { ...named, trusted: true, onUnreadable: (err, index) => reported.push([err.taskName, index]) });
    expect(listed.map((t) => t.definition.name)).toEqual(['list_cron', 'list_old', 'list_sql', 'list_zz']);
    expect(reported).toEqual([['list_shell', 2]]);
  });
});
