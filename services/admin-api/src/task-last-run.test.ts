/* eslint-disable @typescript-eslint/no-unsafe-member-access -- response bodies are untyped JSON here */
/** `lastRun` on the task list (extension): the state of each task's latest instance, read in one query per page. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertInstance, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';
import { lastRunsOf } from '@ax/store';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('GET /tasks lastRun', () => {
  it('is the latest instance of each task (state, endedAt), null for a task that never ran', async () => {
    for (const name of ['lr_a', 'lr_b', 'lr_c']) expect((await t.call('POST', '/api/v1/tasks', { body: taskDef(name) })).status).toBe(201);
    await insertInstance(t.pool, { task: 'lr_a', expected: '2026-11-01T02:00:00.000Z', bizDate: '2026-11-01', state: 'FAILED' });
    const latestA = await insertInstance(t.pool, { task: 'lr_a', expected: '2026-11-02T02:00:00.000Z', bizDate: '2026-11-02', state: 'SUCCESS' });
    // An older slot created later is the latest run: the list shows what happened last.
    await insertInstance(t.pool, { task: 'lr_b', expected: '2026-11-05T02:00:00.000Z', bizDate: '2026-11-05', state: 'SUCCESS' });
    const latestB = await insertInstance(t.pool, { task: 'lr_b', expected: '2026-10-01T02:00:00.000Z', bizDate: '2026-10-01', state: 'RUNNING' });
    await t.pool.query('UPDATE task_instance SET created_at = created_at + INTERVAL 1 SECOND WHERE id = ?', [latestB]);

    const list = await t.call('GET', '/api/v1/tasks?q=lr_', { token: t.tokens.viewer });
    expect(list.status).toBe(200);
    const byName = Object.fromEntries((list.body.items as Array<{ name: string; lastRun: unknown }>).map((i) => [i.name, i.lastRun]));
    expect(byName).toEqual({
      lr_a: { instanceId: latestA, state: 'SUCCESS', endedAt: '2026-11-02T02:00:00.000Z' },
      lr_b: { instanceId: latestB, state: 'RUNNING', endedAt: null },
      lr_c: null,
    });
  });

  it('answers for a whole page in one query, and nothing for no names', async () => {
    let queries = 0;
    const counting = { query: (...args: Parameters<typeof t.pool.query>) => ((queries += 1), t.pool.query(...args)) } as unknown as typeof t.pool;
    const runs = await lastRunsOf(counting, ['lr_a', 'lr_b', 'lr_c', 'no_such_task']);
    expect(queries).toBe(1);
    expect([...runs.keys()].sort()).toEqual(['lr_a', 'lr_b']);
    expect((await lastRunsOf(counting, [])).size).toBe(0);
    expect(queries).toBe(1);
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = (await t.call('GET', '/api/v1/openapi.json', { token: null })).body as { paths: Record<string, { get: { responses: Record<string, unknown> } }> };
    const text = JSON.stringify(doc.paths['/api/v1/tasks']?.get.responses['200']);
    expect(text).toContain('lastRun');
  });
});
