import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { withTransaction } from '../pool.js';
import {
  advanceWatermarks,
  createSlotInstances,
  existingSlotTimes,
  recordMisfireDecision,
  slotKey,
  type SlotToCreate,
} from './instances-create.js';
import {
  TaskExistsError,
  TaskVersionConflictError,
  deleteTask,
  disableTask,
  enableTask,
  getTask,
  insertTask,
  listTasks,
  replaceTask,
} from './tasks.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

const def = (name: string, extra: Record<string, unknown> = {}) =>
  parseTaskDefinitionOrThrow({
    name,
    schedule: { type: 'cron', expr: '0 2 * * *', timezone: 'Asia/Shanghai' },
    exec: { type: 'shell', command: ['echo', '{{bizDate}}'] },
    params: { a: 1 },
    tags: ['etl'],
    retry: { max: 2 },
    ...extra,
  });

const slot = (t: { id: string; definition: { name: string }; version: number }, ms: number, extra: Partial<SlotToCreate> = {}): SlotToCreate => ({
  taskId: t.id,
  taskName: t.definition.name,
  version: t.version,
  expectedMs: ms,
  bizDate: '2026-01-01',
  trigger: 'schedule',
  state: 'PENDING',
  maxAttempts: 3,
  serial: false,
  ...extra,
});

describe('tasks queries', () => {
  it('round-trips a definition, lists, replaces with optimistic version, enables, deletes', async () => {
    const created = await insertTask(db.pool, def('t-one'));
    expect(created.version).toBe(1);
    expect(created.definition).toEqual(def('t-one'));
    await expect(insertTask(db.pool, def('t-one'))).rejects.toBeInstanceOf(TaskExistsError);
    const replaced = await replaceTask(db.pool, def('t-one', { priority: 9 }), 1);
    expect(replaced.version).toBe(2);
    expect(replaced.definition.priority).toBe(9);
    await expect(replaceTask(db.pool, def('t-one'), 1)).rejects.toBeInstanceOf(TaskVersionConflictError);
    expect((await disableTask(db.pool, 't-one'))?.definition.enabled).toBe(false);
    expect((await disableTask(db.pool, 't-one'))?.version).toBe(3); // no-op switch keeps the version
    expect((await enableTask(db.pool, 't-one'))?.version).toBe(4);
    await insertTask(db.pool, def('t-two', { tags: ['other'] }));
    expect((await listTasks(db.pool, { tag: 'etl' })).map((t) => t.definition.name)).toEqual(['t-one']);
    expect((await listTasks(db.pool, { q: 'two' })).map((t) => t.definition.name)).toEqual(['t-two']);
    expect(await deleteTask(db.pool, 't-two')).toBe(true);
    expect(await getTask(db.pool, 't-two')).toBeNull();
  });

  it('parses without the memo when asked (memo: false): a fresh, unfrozen definition each read, equal to the memo\'s', async () => {
    await insertTask(db.pool, def('t-memo'));
    const [memoA] = await listTasks(db.pool, { names: ['t-memo'] });
    const [memoB] = await listTasks(db.pool, { names: ['t-memo'] });
    const [ownA] = await listTasks(db.pool, { names: ['t-memo'], memo: false });
    const [ownB] = await listTasks(db.pool, { names: ['t-memo'], memo: false });
    expect(memoB?.definition).toBe(memoA?.definition);
    expect(Object.isFrozen(memoA?.definition)).toBe(true);
    expect(ownA?.definition).not.toBe(ownB?.definition);
    expect(ownA?.definition).not.toBe(memoA?.definition);
    expect(Object.isFrozen(ownA?.definition)).toBe(false);
    expect(ownA?.definition).toEqual(memoA?.definition);
  });
});

describe('instances-create', () => {
  it('R3: inserts only slots of the current version of an enabled task; repeats are no-ops', async () => {
    const t = await insertTask(db.pool, def('ic-a', { block: 'parallel' }));
    const t0 = Date.UTC(2026, 0, 1, 0, 0, 0);
    const first = await withTransaction(db.pool, (c) => createSlotInstances(c, [slot(t, t0), slot(t, t0 + 1000)]));
    expect([...first.values()].map((o) => o.kind)).toEqual(['created', 'created']);
    const again = await withTransaction(db.pool, (c) => createSlotInstances(c, [slot(t, t0), slot(t, t0 + 2000)]));
    expect(again.get(slotKey('ic-a', t0))?.kind).toBe('existed');
    expect(again.get(slotKey('ic-a', t0 + 2000))?.kind).toBe('created');
    const stale = await withTransaction(db.pool, (c) => createSlotInstances(c, [slot({ ...t, version: 0 }, t0 + 3000)]));
    expect(stale.get(slotKey('ic-a', t0 + 3000))?.kind).toBe('refused');
    await disableTask(db.pool, 'ic-a');
    const disabled = await withTransaction(db.pool, (c) => createSlotInstances(c, [slot({ ...t, version: 2 }, t0 + 4000)]));
    expect(disabled.get(slotKey('ic-a', t0 + 4000))?.kind).toBe('refused');
    const times = await existingSlotTimes(db.pool, [{ taskName: 'ic-a', afterMs: t0 - 1, untilMs: t0 + 10_000 }]);
    expect(times.get('ic-a')).toEqual([t0, t0 + 1000, t0 + 2000]);
    const [rows] = await db.pool.query<Array<RowDataPacket & { n: string }>>(
      "SELECT COUNT(*) AS n FROM event_log e JOIN task_instance i ON i.id = e.instance_id WHERE i.task_name = 'ic-a' AND e.type = 'CREATED'",
    );
    expect(Number(rows[0]?.n)).toBe(3);
    const [inst] = await db.pool.query<RowDataPacket[]>(
      "SELECT state, attempt, max_attempts, run_no, `trigger`, params, priority, due_at, expected_time FROM task_instance WHERE task_name = 'ic-a' ORDER BY expected_time LIMIT 1",
    );
    expect(inst[0]).toMatchObject({ state: 'PENDING', attempt: 1, max_attempts: 3, run_no: 1, trigger: 'schedule', priority: 5 });
    expect(JSON.parse(String(inst[0]?.['params']))).toEqual({ a: 1 });
  });

  it('R4: a serial slot is coalesced while an instance waits; watermarks only move forward', async () => {
    const t = await insertTask(db.pool, def('ic-serial'));
    const t0 = Date.UTC(2026, 0, 2);
    const out = await withTransaction(db.pool, (c) =>
      createSlotInstances(c, [slot(t, t0, { serial: true }), slot(t, t0 + 1000, { serial: true })]),
    );
    expect(out.get(slotKey('ic-serial', t0))?.kind).toBe('created');
    expect(out.get(slotKey('ic-serial', t0 + 1000))?.kind).toBe('coalesced');
    const later = await withTransaction(db.pool, (c) => createSlotInstances(c, [slot(t, t0 + 2000, { serial: true })]));
    expect(later.get(slotKey('ic-serial', t0 + 2000))?.kind).toBe('coalesced');
    let row = await getTask(db.pool, 'ic-serial');
    expect(row?.coalescedCount).toBe(2);
    expect(row?.lastFireTime?.getTime()).toBe(t0 + 2000);
    await advanceWatermarks(db.pool, [{ taskId: t.id, toMs: t0, nextFireMs: t0 + 5000 }]);
    row = await getTask(db.pool, 'ic-serial');
    expect(row?.lastFireTime?.getTime()).toBe(t0 + 2000);
    expect(row?.nextFireTime?.getTime()).toBe(t0 + 5000);
    expect(await recordMisfireDecision(db.pool, { taskId: t.id, fromMs: t0, toMs: t0 + 9000, skipped: 1, coalesced: 0 })).toBe(false);
    expect(await recordMisfireDecision(db.pool, { taskId: t.id, fromMs: t0 + 2000, toMs: t0 + 9000, skipped: 1, coalesced: 0 })).toBe(true);
    expect((await getTask(db.pool, 'ic-serial'))?.skippedCount).toBe(1);
  });

  it('R4: two schedulers creating slots of one serial task at once leave exactly one waiting instance (FOR UPDATE)', async () => {
    const t = await insertTask(db.pool, def('ic-race'));
    const t0 = Date.UTC(2026, 0, 3);
    const [a, b] = await Promise.all([
      withTransaction(db.pool, (c) => createSlotInstances(c, [slot(t, t0, { serial: true })])),
      withTransaction(db.pool, (c) => createSlotInstances(c, [slot(t, t0 + 1000, { serial: true })])),
    ]);
    const kinds = [a.get(slotKey('ic-race', t0))?.kind, b.get(slotKey('ic-race', t0 + 1000))?.kind].sort();
    expect(kinds).toEqual(['coalesced', 'created']);
    expect((await getTask(db.pool, 'ic-race'))?.coalescedCount).toBe(1);
    // R3 comes first: a stale serial slot is refused, not coalesced.
    const stale = await withTransaction(db.pool, (c) => createSlotInstances(c, [slot({ ...t, version: 0 }, t0 + 2000, { serial: true })]));
    expect(stale.get(slotKey('ic-race', t0 + 2000))?.kind).toBe('refused');
  });
});
