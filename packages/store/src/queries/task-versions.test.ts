/**
 * Task versions in the store (#47, migration 0015): the saves the system makes (a calendar
 * change, a pause by pauseAfterFailures) keep their version too, with no actor; every instance
 * insert path writes the version it was created from, and a rerun the version it runs.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { withTransaction } from '../pool.js';
import { putCalendar } from './calendars.js';
import { createSlotInstances } from './instances-create.js';
import { insertManualInstance } from './instances-manual.js';
import { getInstance } from './instances-read.js';
import { rerunInstance } from './reruns.js';
import { pauseTaskAfterFailures } from './task-pause.js';
import { listTaskVersions } from './task-versions.js';
import { getTask, insertTask, replaceTask } from './tasks.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const def = (name: string, extra: Record<string, unknown> = {}) =>
  parseTaskDefinitionOrThrow({ name, schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] }, block: 'parallel', ...extra });

async function versionsOf(name: string): Promise<Array<[number, string | null, boolean]>> {
  const task = await getTask(db.pool, name);
  if (task === null) throw new Error(`no task ${name}`);
  return (await listTaskVersions(db.pool, task, { limit: 10 })).map((v) => [v.version, v.actor, v.definition.enabled]);
}

describe('saves by the system', () => {
  it('a calendar change bumps the version of its tasks and keeps it, without an actor', async () => {
    await putCalendar(db.pool, 'tv_cal', { team: 'default', timezone: 'UTC', dates: [] });
    await insertTask(db.pool, def('tv_cal_task', { calendar: 'tv_cal' }), { actor: 'alice' });
    await withTransaction(db.pool, (c) => putCalendar(c, 'tv_cal', { team: 'default', timezone: 'UTC', dates: ['2026-12-25'] }));
    expect(await versionsOf('tv_cal_task')).toEqual([
      [2, null, true],
      [1, 'alice', true],
    ]);
  });

  it('a pause by pauseAfterFailures keeps the disabled definition, without an actor', async () => {
    const task = await insertTask(db.pool, def('tv_pause', { pauseAfterFailures: 1 }), { actor: 'alice' });
    const [inserted] = await db.pool.query<ResultSetHeader>(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params, ended_at)
       VALUES (?, 'tv_pause', NOW(3), CURDATE(), 'manual', 'FAILED', NOW(3), '{}', NOW(3))`,
      [task.id],
    );
    const paused = await withTransaction(db.pool, (c) => pauseTaskAfterFailures(c, String(inserted.insertId)));
    expect(paused).toMatchObject({ taskName: 'tv_pause' });
    expect(await versionsOf('tv_pause')).toEqual([
      [2, null, false],
      [1, 'alice', true],
    ]);
  });
});

describe('the version an instance was created from', () => {
  it('slots, manual triggers and reruns write it', async () => {
    const v1 = await insertTask(db.pool, def('tv_inst'));
    const slots = await withTransaction(db.pool, (c) =>
      createSlotInstances(c, [
        { taskId: v1.id, taskName: 'tv_inst', version: v1.version, expectedMs: Date.parse('2026-02-01T00:00:00Z'), bizDate: '2026-02-01', trigger: 'schedule', state: 'PENDING', maxAttempts: 1, serial: false },
      ]),
    );
    const slot = [...slots.values()][0];
    if (slot?.kind !== 'created') throw new Error(`slot not created: ${JSON.stringify(slot)}`);
    expect((await getInstance(db.pool, slot.instanceId))?.taskVersion).toBe(1);

    const v2 = await replaceTask(db.pool, { ...v1.definition, description: 'two' }, v1.version);
    const manual = await insertManualInstance(db.pool, { taskId: v2.id, taskName: 'tv_inst', requestedAt: new Date('2026-02-02T00:00:00Z'), bizDate: '2026-02-02', params: {}, priority: 5, maxAttempts: 1, trigger: 'manual' });
    expect((await getInstance(db.pool, manual!.id))?.taskVersion).toBe(2);

    await db.pool.query("UPDATE task_instance SET state = 'SUCCESS', ended_at = NOW(3) WHERE id = ?", [slot.instanceId]);
    const [batch] = await db.pool.query<ResultSetHeader>("INSERT INTO rerun_batch (mode, reason, actor, request) VALUES ('instance', 'r', 'alice', '{}')");
    const rerun = await rerunInstance(db.pool, { id: slot.instanceId, from: 'SUCCESS', to: 'PENDING', maxAttempts: 1, batchId: String(batch.insertId), dueAfterMs: 0, actor: 'alice', reason: 'r' });
    expect(rerun).toBe(true);
    expect((await getInstance(db.pool, slot.instanceId))?.taskVersion).toBe(2);
    const [rows] = await db.pool.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM task_instance WHERE task_name = ? AND task_version IS NULL', ['tv_inst']);
    expect(Number(rows[0]?.n)).toBe(0);
  });
});
