/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/**
 * Reading and stopping rerun batches (ADMIN-API.md `GET /reruns`, `/reruns/{batchId}`,
 * `POST /reruns/{batchId}/cancel`): counts by state that match the batch's instances as the
 * database holds them, progress, state running → canceled / done, the cancel audited and
 * leaving started instances to finish; the list newest first, paged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INSTANCE_STATES } from '@ax/core';
import { insertInstance, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let backfill: string;
let single: string;
let singleInstance: string;

const rerun = (body: Record<string, unknown>) => t.call('POST', '/api/v1/reruns', { token: t.tokens.operator, body });

/** The batch's instances by state, straight from the table, all states present. */
async function countsInDb(batchId: string): Promise<Record<string, number>> {
  const [rows] = await t.pool.query<any[]>('SELECT state, COUNT(*) AS n FROM task_instance WHERE rerun_batch_id = ? GROUP BY state', [batchId]);
  const out: Record<string, number> = Object.fromEntries(INSTANCE_STATES.map((s) => [s, 0]));
  for (const r of rows) out[r.state] = Number(r.n);
  return out;
}

async function setState(batchId: string, n: number, from: string, to: string): Promise<string[]> {
  const [rows] = await t.pool.query<any[]>('SELECT id FROM task_instance WHERE rerun_batch_id = ? AND state = ? ORDER BY id LIMIT ?', [batchId, from, n]);
  const changed = rows.map((r) => String(r.id));
  await t.pool.query(`UPDATE task_instance SET state = ?, ended_at = IF(? IN ('SUCCESS', 'FAILED'), NOW(3), NULL) WHERE id IN (?)`, [to, to, changed]);
  return changed;
}

beforeAll(async () => {
  t = await startTestApp();
  await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('bf', { schedule: { type: 'cron', expr: '0 0,12 * * *' } }) });
  await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('one') });
  const res = await rerun({ mode: 'backfill', task: 'bf', from: '2026-11-01', to: '2026-11-03', concurrency: 2, reason: 'history' });
  expect(res.status).toBe(202);
  expect(res.body.instances).toHaveLength(6);
  backfill = res.body.batchId;
  singleInstance = await insertInstance(t.pool, { task: 'one', expected: '2026-11-01T02:00:00.000Z', bizDate: '2026-11-01', state: 'FAILED' });
  const one = await rerun({ mode: 'instance', instanceId: singleInstance, reason: 'flaky' });
  expect(one.status).toBe(202);
  single = one.body.batchId;
});

afterAll(async () => {
  await t?.close();
});

describe('GET /api/v1/reruns/{batchId}', () => {
  it('a new backfill: 6 PENDING, running, progress 0, with its request', async () => {
    const res = await t.call('GET', `/api/v1/reruns/${backfill}`, { token: t.tokens.viewer });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: backfill,
      mode: 'backfill',
      state: 'running',
      reason: 'history',
      actor: 'operator-user',
      total: 6,
      finished: 0,
      progress: 0,
      concurrency: 2,
      canceledAt: null,
      request: { task: 'bf', from: '2026-11-01', to: '2026-11-03' },
    });
    expect(res.body.counts).toEqual(await countsInDb(backfill));
    expect(res.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('counts follow the instances as they run', async () => {
    await setState(backfill, 2, 'PENDING', 'SUCCESS');
    await setState(backfill, 1, 'PENDING', 'FAILED');
    await setState(backfill, 1, 'PENDING', 'RUNNING');
    const res = await t.call('GET', `/api/v1/reruns/${backfill}`, { token: t.tokens.viewer });
    const db = await countsInDb(backfill);
    expect(db).toMatchObject({ SUCCESS: 2, FAILED: 1, RUNNING: 1, PENDING: 2 });
    expect(res.body).toMatchObject({ state: 'running', total: 6, finished: 3, progress: 0.5, counts: db });
  });

  it('its instances (extension GET …/instances): those the counts are of, oldest first, paged', async () => {
    const res = await t.call('GET', `/api/v1/reruns/${backfill}/instances`, { token: t.tokens.viewer });
    expect(res.status).toBe(200);
    const [rows] = await t.pool.query<any[]>('SELECT id, state FROM task_instance WHERE rerun_batch_id = ? ORDER BY id', [backfill]);
    expect(res.body.items.map((i: any) => [i.id, i.state, i.rerunBatchId])).toEqual(rows.map((r) => [String(r.id), r.state, backfill]));
    expect(res.body.nextCursor).toBeNull();
    const byState: Record<string, number> = Object.fromEntries(INSTANCE_STATES.map((s) => [s, 0]));
    for (const i of res.body.items) byState[i.state] = (byState[i.state] ?? 0) + 1;
    expect((await t.call('GET', `/api/v1/reruns/${backfill}`, { token: t.tokens.viewer })).body.counts).toEqual(byState);
    const first = await t.call('GET', `/api/v1/reruns/${backfill}/instances?limit=4`, { token: t.tokens.viewer });
    const second = await t.call('GET', `/api/v1/reruns/${backfill}/instances?limit=4&cursor=${first.body.nextCursor}`, { token: t.tokens.viewer });
    expect([...first.body.items, ...second.body.items].map((i: any) => i.id)).toEqual(rows.map((r) => String(r.id)));
    expect(second.body.nextCursor).toBeNull();
    expect((await t.call('GET', '/api/v1/reruns/987654/instances', { token: t.tokens.viewer })).status).toBe(404);
    expect((await t.call('GET', `/api/v1/reruns/${backfill}/instances?cursor=nope`, { token: t.tokens.viewer })).status).toBe(400);
  });

  it('404 for an unknown or malformed id', async () => {
    for (const id of ['987654', 'abc', '1;DROP']) {
      const res = await t.call('GET', `/api/v1/reruns/${encodeURIComponent(id)}`, { token: t.tokens.viewer });
      expect({ id, status: res.status, code: res.body.error?.code }).toEqual({ id, status: 404, code: 'NOT_FOUND' });
    }
  });
});

describe('POST /api/v1/reruns/{batchId}/cancel', () => {
  it('viewers may not; 404 unknown', async () => {
    expect((await t.call('POST', `/api/v1/reruns/${backfill}/cancel`, { token: t.tokens.viewer })).status).toBe(403);
    expect((await t.call('POST', '/api/v1/reruns/987654/cancel', { token: t.tokens.operator })).status).toBe(404);
    expect((await t.call('GET', `/api/v1/reruns/${backfill}`, { token: t.tokens.viewer })).body.state).toBe('running');
  });

  it('cancels what has not started (CANCELED_BY_USER), lets the running one finish, and is audited', async () => {
    const [pending] = await t.pool.query<any[]>("SELECT id FROM task_instance WHERE rerun_batch_id = ? AND state = 'PENDING' ORDER BY id", [backfill]);
    const res = await t.call('POST', `/api/v1/reruns/${backfill}/cancel`, { token: t.tokens.operator, body: { reason: 'wrong range' } });
    expect(res.status).toBe(200);
    const db = await countsInDb(backfill);
    expect(db).toMatchObject({ SUCCESS: 2, FAILED: 1, RUNNING: 1, PENDING: 0, CANCELED: 2 });
    expect(res.body).toMatchObject({ id: backfill, state: 'canceled', canceledBy: 'operator-user', total: 6, finished: 5, counts: db });
    expect(res.body.canceledAt).toEqual(expect.any(String));
    expect(res.body.canceled).toEqual(pending.map((r) => String(r.id)));
    const [rows] = await t.pool.query<any[]>('SELECT id, state, reason FROM task_instance WHERE id IN (?) ORDER BY id', [pending.map((r) => r.id)]);
    expect(rows.map((r) => [r.state, r.reason])).toEqual([
      ['CANCELED', 'CANCELED_BY_USER'],
      ['CANCELED', 'CANCELED_BY_USER'],
    ]);
    const detail = await t.call('GET', `/api/v1/instances/${pending[0].id}`, { token: t.tokens.viewer });
    expect(detail.body.events.at(-1)).toMatchObject({ type: 'CANCELED', data: { reason: 'CANCELED_BY_USER', from: 'PENDING' } });
    const audit = await t.call('GET', '/api/v1/audit?actor=operator-user');
    expect(audit.body.items[0]).toMatchObject({
      action: 'rerun.cancel',
      target: `rerun:${backfill}`,
      reason: 'wrong range',
      after: { state: 'canceled', canceled: pending.map((r) => String(r.id)) },
    });
    // stays canceled once the running instance finishes
    await setState(backfill, 1, 'RUNNING', 'SUCCESS');
    const later = await t.call('GET', `/api/v1/reruns/${backfill}`, { token: t.tokens.viewer });
    expect(later.body).toMatchObject({ state: 'canceled', finished: 6, progress: 1, counts: await countsInDb(backfill) });
  });

  it('409 INVALID_STATE for a canceled or a done batch; nothing more audited', async () => {
    const again = await t.call('POST', `/api/v1/reruns/${backfill}/cancel`, { token: t.tokens.operator });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('INVALID_STATE');
    await t.pool.query("UPDATE task_instance SET state = 'SUCCESS', ended_at = NOW(3) WHERE id = ?", [singleInstance]);
    const done = await t.call('GET', `/api/v1/reruns/${single}`, { token: t.tokens.viewer });
    expect(done.body).toMatchObject({ mode: 'instance', state: 'done', total: 1, counts: { SUCCESS: 1 }, progress: 1 });
    const res = await t.call('POST', `/api/v1/reruns/${single}/cancel`, { token: t.tokens.operator });
    expect(res.status).toBe(409);
    const [n] = await t.pool.query<any[]>("SELECT COUNT(*) AS n FROM audit_log WHERE action = 'rerun.cancel'");
    expect(Number(n[0].n)).toBe(1);
  });

  it('a dag batch: WAITING downstream instances are canceled too', async () => {
    for (const n of ['d_a', 'd_b']) await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef(n) });
    await t.call('POST', '/api/v1/edges', { token: t.tokens.operator, body: { parent: 'd_a', child: 'd_b' } });
    const a = await insertInstance(t.pool, { task: 'd_a', expected: '2026-11-05T02:00:00.000Z', bizDate: '2026-11-05', state: 'SUCCESS' });
    const b = await insertInstance(t.pool, { task: 'd_b', expected: '2026-11-05T02:00:00.000Z', bizDate: '2026-11-05', state: 'FAILED' });
    const res = await rerun({ mode: 'dag', root: 'd_a', bizDate: '2026-11-05', reason: 'fix' });
    expect(res.body.instances).toEqual([a, b]);
    expect((await t.call('GET', `/api/v1/reruns/${res.body.batchId}`, { token: t.tokens.viewer })).body.counts).toMatchObject({ PENDING: 1, WAITING: 1 });
    const cancel = await t.call('POST', `/api/v1/reruns/${res.body.batchId}/cancel`, { token: t.tokens.operator });
    expect(cancel.body).toMatchObject({ state: 'canceled', counts: { CANCELED: 2, PENDING: 0, WAITING: 0 } });
  });
});

describe('GET /api/v1/reruns', () => {
  it('newest first, paged by cursor, filtered by mode; each item as the detail', async () => {
    const all = await t.call('GET', '/api/v1/reruns', { token: t.tokens.viewer });
    expect(all.status).toBe(200);
    const idsSeen = all.body.items.map((b: any) => b.id);
    expect(idsSeen).toHaveLength(3);
    expect([...idsSeen].sort((x: string, y: string) => Number(y) - Number(x))).toEqual(idsSeen);
    expect(all.body.nextCursor).toBeNull();
    const detail = await t.call('GET', `/api/v1/reruns/${backfill}`, { token: t.tokens.viewer });
    expect(all.body.items.find((b: any) => b.id === backfill)).toEqual(detail.body);
    const first = await t.call('GET', '/api/v1/reruns?limit=2', { token: t.tokens.viewer });
    expect(first.body.items.map((b: any) => b.id)).toEqual(idsSeen.slice(0, 2));
    const second = await t.call('GET', `/api/v1/reruns?limit=2&cursor=${first.body.nextCursor}`, { token: t.tokens.viewer });
    expect(second.body).toEqual({ items: [expect.objectContaining({ id: idsSeen[2] })], nextCursor: null });
    const backfills = await t.call('GET', '/api/v1/reruns?mode=backfill', { token: t.tokens.viewer });
    expect(backfills.body.items.map((b: any) => b.id)).toEqual([backfill]);
    expect((await t.call('GET', '/api/v1/reruns?mode=everything', { token: t.tokens.viewer })).status).toBe(400);
    expect((await t.call('GET', '/api/v1/reruns?cursor=nope', { token: t.tokens.viewer })).status).toBe(400);
  });
});

describe('OpenAPI document (#20 additions)', () => {
  it('documents the batch and alert endpoints with their roles, and the new instance and execution time fields', async () => {
    const doc = (await t.call('GET', '/api/v1/openapi.json', { token: null })).body;
    const access = (method: string, path: string): unknown => doc.paths[path]?.[method]?.['x-ax-access'];
    expect([
      access('get', '/api/v1/reruns'),
      access('get', '/api/v1/reruns/{batchId}'),
      access('post', '/api/v1/reruns/{batchId}/cancel'),
      access('get', '/api/v1/alerts'),
    ]).toEqual(['viewer', 'viewer', 'operator', 'viewer']);
    const batch = doc.paths['/api/v1/reruns/{batchId}'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(batch.properties)).toEqual(expect.arrayContaining(['id', 'mode', 'state', 'reason', 'actor', 'createdAt', 'total', 'counts', 'progress']));
    expect(Object.keys(batch.properties.counts.properties)).toEqual([...INSTANCE_STATES]);
    const alerts = doc.paths['/api/v1/alerts'].get;
    expect(alerts.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['kind', 'task', 'from', 'to', 'limit', 'cursor']));
    const alert = alerts.responses['200'].content['application/json'].schema.properties.items.items;
    expect(alert.properties.delivery.enum).toEqual(['pending', 'sent', 'failed', 'not_configured']);
    expect(alert.required).toEqual(expect.arrayContaining(['kind', 'severity', 'message', 'at', 'delivery', 'attempts']));
    const instance = doc.paths['/api/v1/instances/{id}'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(instance.properties)).toEqual(expect.arrayContaining(['startedAt', 'endedAt', 'durationMs']));
  });
});
