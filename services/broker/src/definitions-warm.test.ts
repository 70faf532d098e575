/**
 * The broker validates task definitions ahead of the claims (definitions-warm.ts): a task
 * created or edited (admin-api then publishes `<ns>:task-changed`) is in the definition cache
 * at its current version before any of its instances is claimed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replaceTask } from '@ax/store';
import { waitForResult } from '@ax/testing';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness();
});

afterAll(async () => {
  await h?.close();
});

describe('task definitions validated ahead of the claims', () => {
  it('a created task, then its edit, are cached at their version right after task-changed (the 5 s pass is the fallback)', async () => {
    const cache = h.broker.context.definitions;
    const task = await h.task('warm_me', { priority: 1 });
    await h.redis.redis.publish(h.keys.channels.taskChanged, task.definition.name);
    const created = await waitForResult(() => cache.get(task.id, task.version), { description: 'the new task cached', timeoutMs: 2_000, intervalMs: 10 });
    console.log(`[broker] a new task's definition was cached ${created.elapsedMs} ms after task-changed`);
    expect(created.value.definition.priority).toBe(1);

    const edited = await replaceTask(h.db.pool, { ...task.definition, priority: 7 }, task.version);
    await h.redis.redis.publish(h.keys.channels.taskChanged, task.definition.name);
    const seen = await waitForResult(() => cache.get(task.id, edited.version), { description: 'the edit cached', timeoutMs: 2_000, intervalMs: 10 });
    expect(seen.value.definition.priority).toBe(7);
  });
});
