/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * #20 `GET /api/v1/dag/grid` (tasks down, business dates across, the latest slot's state and its
 * current execution's duration) and the `worker` / `trigger` filters of `GET /api/v1/instances`:
 * both filtered to the token's teams, never another team's rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addToken, insertInstance, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let viewerPay: string;
const ids: Record<string, string> = {};

/** An execution of instance `id` that ran `ms` milliseconds (started → ended), current for it. */
async function runFor(id: string, ms: number, worker = 'w-grid'): Promise<void> {
  const executionId = `0190f000-0000-7000-8000-${id.padStart(12, '0')}`;
  const start = new Date('2026-11-20T03:00:00.000Z');
  await t.pool.query(
    `INSERT INTO task_execution (execution_id, instance_id, attempt, run_no, worker_id, state, acked_at, started_at, ended_at)
     VALUES (?, ?, 1, 1, ?, 'SUCCESS', ?, ?, ?)`,
    [executionId, id, worker, start, start, new Date(start.getTime() + ms)],
  );
  await t.pool.query('UPDATE task_instance SET current_execution_id = ?, worker_id = ? WHERE id = ?', [executionId, worker, id]);
}

beforeAll(async () => {
  t = await startTestApp();
  for (const name of ['pay', 'ord']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  viewerPay = await addToken(t.pool, 'viewer-pay', 'viewer', ['pay']);
  for (const [name, team] of [['g_a', 'pay'], ['g_b', 'pay'], ['g_c', 'ord'], ['g_lone', 'pay']] as const) {
    expect((await t.call('POST', '/api/v1/tasks', { body: taskDef(name, { team }) })).status).toBe(201);
  }
  expect((await t.call('POST', '/api/v1/edges', { body: { parent: 'g_a', child: 'g_b', rule: 'ALL_SUCCESS' } })).status).toBe(201);
  expect((await t.call('POST', '/api/v1/edges', { body: { parent: 'g_b', child: 'g_c', rule: 'ALL_SUCCESS' } })).status).toBe(201);
  for (const day of ['2026-11-18', '2026-11-19', '2026-11-20']) {
    for (const task of ['g_a', 'g_b', 'g_c', 'g_lone']) {
      ids[`${task}@${day}`] = await insertInstance(t.pool, { task, expected: `${day}T02:00:00.000Z`, bizDate: day, state: task === 'g_b' && day === '2026-11-19' ? 'FAILED' : 'SUCCESS' });
    }
  }
  // A second slot of g_a on 11-20: the cell shows the later one, and counts two.
  ids['g_a@2026-11-20#2'] = await insertInstance(t.pool, { task: 'g_a', expected: '2026-11-20T14:00:00.000Z', bizDate: '2026-11-20', state: 'RUNNING' });
  await runFor(ids['g_b@2026-11-20'] ?? '', 1234);
  await runFor(ids['g_c@2026-11-20'] ?? '', 4321, 'w-other');
  await t.pool.query("UPDATE task_instance SET `trigger` = 'manual' WHERE id = ?", [ids['g_a@2026-11-19']]);
});

afterAll(async () => {
  await t?.close();
});

const cell = (body: any, task: string, bizDate: string): any => body.cells.find((c: any) => c.task === task && c.bizDate === bizDate);

describe('#20 GET /api/v1/dag/grid', () => {
  it('lists the DAG tasks parents first, the latest dates oldest first, each cell with its state and duration', async () => {
    const res = await t.call('GET', '/api/v1/dag/grid?root=g_a&days=2', { token: t.tokens.viewer });
    expect(res.status).toBe(200);
    expect(res.body.tasks).toEqual(['g_a', 'g_b', 'g_c']);
    expect(res.body.bizDates).toEqual(['2026-11-19', '2026-11-20']);
    expect(res.body.cells).toHaveLength(6);
    expect(cell(res.body, 'g_b', '2026-11-19')).toMatchObject({ state: 'FAILED', instanceId: ids['g_b@2026-11-19'], durationMs: null, slots: 1 });
    expect(cell(res.body, 'g_b', '2026-11-20')).toMatchObject({ state: 'SUCCESS', instanceId: ids['g_b@2026-11-20'], durationMs: 1234 });
    expect(cell(res.body, 'g_c', '2026-11-20')).toMatchObject({ durationMs: 4321 });
    expect(cell(res.body, 'g_a', '2026-11-20')).toMatchObject({ state: 'RUNNING', instanceId: ids['g_a@2026-11-20#2'], slots: 2 });
  });

  it('defaults to 14 dates and every task with an edge; `to` pages back', async () => {
    const all = await t.call('GET', '/api/v1/dag/grid');
    expect([all.body.days, all.body.bizDates, all.body.tasks]).toEqual([14, ['2026-11-18', '2026-11-19', '2026-11-20'], ['g_a', 'g_b', 'g_c']]);
    const back = await t.call('GET', '/api/v1/dag/grid?days=1&to=2026-11-18');
    expect(back.body.bizDates).toEqual(['2026-11-18']);
    expect(back.body.cells.map((c: any) => c.instanceId).sort()).toEqual([ids['g_a@2026-11-18'], ids['g_b@2026-11-18'], ids['g_c@2026-11-18']].sort());
  });

  it("shows a team token nothing of another team's tasks", async () => {
    const res = await t.call('GET', '/api/v1/dag/grid?root=g_a', { token: viewerPay });
    expect(res.status).toBe(200);
    expect(res.body.tasks).toEqual(['g_a', 'g_b']);
    expect(res.body.cells.some((c: any) => c.task === 'g_c')).toBe(false);
    expect(res.body.cells).toHaveLength(6);
    expect((await t.call('GET', '/api/v1/dag/grid?root=g_c', { token: viewerPay })).status).toBe(404);
    const none = await addToken(t.pool, 'viewer-none', 'viewer', ['nosuch']);
    expect((await t.call('GET', '/api/v1/dag/grid', { token: none })).body).toMatchObject({ tasks: [], bizDates: [], cells: [] });
  });

  it('refuses bad parameters with 400 naming them', async () => {
    for (const [query, path] of [['days=0', 'days'], ['days=abc', 'days'], ['days=91', 'days'], ['to=yesterday', 'to']] as const) {
      const res = await t.call('GET', `/api/v1/dag/grid?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details.issues[0].path).toBe(path);
    }
  });
});

describe('#20 GET /api/v1/instances ?worker= &trigger=', () => {
  it('narrows the list to the worker and the trigger', async () => {
    const byWorker = await t.call('GET', '/api/v1/instances?worker=w-grid', { token: t.tokens.viewer });
    expect(byWorker.body.items.map((i: any) => i.id)).toEqual([ids['g_b@2026-11-20']]);
    const manual = await t.call('GET', '/api/v1/instances?trigger=manual');
    expect(manual.body.items.map((i: any) => i.id)).toEqual([ids['g_a@2026-11-19']]);
    const both = await t.call('GET', '/api/v1/instances?trigger=manual,schedule&task=g_a');
    expect(both.body.items).toHaveLength(4);
    const window = await t.call('GET', '/api/v1/instances?task=g_a&from=2026-11-19T00:00:00Z&to=2026-11-20T12:00:00Z');
    expect(window.body.items.map((i: any) => i.id).sort()).toEqual([ids['g_a@2026-11-19'], ids['g_a@2026-11-20']].sort());
  });

  it("gives a team token none of another team's rows", async () => {
    expect((await t.call('GET', '/api/v1/instances?worker=w-other', { token: viewerPay })).body).toEqual({ items: [], nextCursor: null });
    expect((await t.call('GET', '/api/v1/instances?worker=w-other')).body.items.map((i: any) => i.id)).toEqual([ids['g_c@2026-11-20']]);
    expect((await t.call('GET', '/api/v1/instances?team=ord&trigger=schedule', { token: viewerPay })).body).toEqual({ items: [], nextCursor: null });
  });

  it('refuses a bad worker or trigger with 400 naming the parameter', async () => {
    for (const [query, path] of [['trigger=cron', 'trigger'], ['trigger=manual,', 'trigger'], ['worker=%20bad', 'worker'], ['from=yesterday', 'from']] as const) {
      const res = await t.call('GET', `/api/v1/instances?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.details.issues[0].path).toBe(path);
    }
  });
});
