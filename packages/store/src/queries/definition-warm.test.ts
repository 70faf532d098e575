import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { warmTaskDefinitions } from './definition-warm.js';
import { loadTasksById, TaskDefinitionCache } from './dispatch.js';
import { disableTask, insertTask, replaceTask } from './tasks.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const definition = (name: string, priority = 0) =>
  parseTaskDefinitionOrThrow({ name, schedule: { type: 'cron', expr: '0 2 * * *' }, exec: { type: 'http', url: 'http://127.0.0.1:9/x' }, priority });

describe('warming the definition cache ahead of the claims', () => {
  it('loads every enabled task once, a new version after an edit, never a disabled one; a claim then finds them cached', async () => {
    const a = await insertTask(db.pool, definition('warm_a'));
    const b = await insertTask(db.pool, definition('warm_b'));
    const off = await insertTask(db.pool, definition('warm_off'));
    await disableTask(db.pool, 'warm_off');
    const cache = new TaskDefinitionCache();

    expect(await warmTaskDefinitions(db.pool, cache)).toEqual({ loaded: 2, overCapacity: false });
    expect(cache.get(a.id, a.version)?.definition.name).toBe('warm_a');
    expect(cache.get(b.id, b.version)?.definition.name).toBe('warm_b');
    expect(cache.get(off.id, off.version)).toBeUndefined();
    expect(await warmTaskDefinitions(db.pool, cache)).toEqual({ loaded: 0, overCapacity: false });

    const edited = await replaceTask(db.pool, definition('warm_a', 5), a.version);
    expect(await warmTaskDefinitions(db.pool, cache)).toEqual({ loaded: 1, overCapacity: false });
    expect(cache.get(a.id, edited.version)?.definition.priority).toBe(5);

    // The claim's read returns the very records the warming validated.
    const claimed = await loadTasksById(db.pool, [a.id, b.id], cache);
    expect(claimed.get(a.id)).toBe(cache.get(a.id, edited.version));
    expect(claimed.get(b.id)).toBe(cache.get(b.id, b.version));
  });

  it('an edit replaces the cached version: a cache exactly as large as the enabled tasks keeps them all', async () => {
    // Enabled now: warm_a (edited above) and warm_c.
    const exact = new TaskDefinitionCache(2);
    const c = await insertTask(db.pool, definition('warm_c'));
    await disableTask(db.pool, 'warm_b');
    expect(await warmTaskDefinitions(db.pool, exact)).toEqual({ loaded: 2, overCapacity: false });
    const edited = await replaceTask(db.pool, definition('warm_c', 3), c.version);
    expect(await warmTaskDefinitions(db.pool, exact)).toEqual({ loaded: 1, overCapacity: false });
    expect(exact.size).toBe(2);
    expect(exact.get(c.id, edited.version)?.definition.priority).toBe(3);
    expect(exact.get(c.id, c.version)).toBeUndefined(); // replaced, not kept beside the new one
    // warm_a stayed cached (with one entry per id@version the edit's entry made the cache start
    // over, and every pass after an edit reloaded the rest): a further pass loads nothing.
    expect(await warmTaskDefinitions(db.pool, exact)).toEqual({ loaded: 0, overCapacity: false });
  });

  it('more enabled tasks than the cache holds: loads none (filling it would only make it start over)', async () => {
    const small = new TaskDefinitionCache(1);
    expect(await warmTaskDefinitions(db.pool, small)).toEqual({ loaded: 0, overCapacity: true });
  });
});
