/* eslint-disable @typescript-eslint/no-unsafe-member-access -- response bodies are untyped JSON here */
/**
 * `waiting` on the instance resource (ADMIN-API.md "Waiting instances", #45): detail and lists
 * show the reason the brokers' backlog scan stored (written here through the store's own write,
 * `writeWaitingChanges`, as the scan does), and null for an instance that is not held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction, writeWaitingChanges } from '@ax/store';
import { insertInstance, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let held = '';
let free = '';
let done = '';

beforeAll(async () => {
  t = await startTestApp();
  expect((await t.call('POST', '/api/v1/tasks', { body: taskDef('wait_serial', { block: 'serial' }) })).status).toBe(201);
  held = await insertInstance(t.pool, { task: 'wait_serial', expected: '2026-11-01T02:00:00.000Z', bizDate: '2026-11-01', state: 'PENDING' });
  free = await insertInstance(t.pool, { task: 'wait_serial', expected: '2026-11-02T02:00:00.000Z', bizDate: '2026-11-02', state: 'PENDING' });
  done = await insertInstance(t.pool, { task: 'wait_serial', expected: '2026-11-03T02:00:00.000Z', bizDate: '2026-11-03', state: 'PENDING' });
  const message = 'task wait_serial (block serial) already has instance 7 RUNNING on worker w1';
  await withTransaction(t.pool, (conn) =>
    writeWaitingChanges(conn, [
      { id: held, state: 'PENDING', from: null, to: 'SERIAL_BUSY', message },
      { id: done, state: 'PENDING', from: null, to: 'NO_WORKER', message: 'no live worker serves team default' },
    ]),
  );
  // `done` was dispatched and finished since: the reason left on it is not shown
  await t.pool.query(`UPDATE task_instance SET state = 'SUCCESS', ended_at = NOW(3) WHERE id = ?`, [done]);
});
afterAll(async () => {
  await t?.close();
});

describe('instance resource: waiting', () => {
  it('detail: reason, since (its due time for its first reason) and the sentence; one WAITING event', async () => {
    const r = await t.call('GET', `/api/v1/instances/${held}`, { token: t.tokens.viewer });
    expect(r.status).toBe(200);
    expect(r.body.waiting).toEqual({ reason: 'SERIAL_BUSY', since: '2026-11-01T02:00:00.000Z', message: 'task wait_serial (block serial) already has instance 7 RUNNING on worker w1' });
    const events = (r.body.events as Array<{ type: string; data?: Record<string, unknown> }>).filter((e) => e.type === 'WAITING');
    expect(events.map((e) => [e.type, e.data?.reason])).toEqual([['WAITING', 'SERIAL_BUSY']]);
  });

  it('null when not held, and for a row that moved on', async () => {
    expect((await t.call('GET', `/api/v1/instances/${free}`, { token: t.tokens.viewer })).body.waiting).toBeNull();
    expect((await t.call('GET', `/api/v1/instances/${done}`, { token: t.tokens.viewer })).body.waiting).toBeNull();
  });

  it('list: each item carries it', async () => {
    const r = await t.call('GET', '/api/v1/instances?task=wait_serial', { token: t.tokens.viewer });
    expect(r.status).toBe(200);
    const byId = new Map((r.body.items as Array<{ id: string; waiting: unknown }>).map((i) => [i.id, i.waiting]));
    expect(byId.get(held)).toMatchObject({ reason: 'SERIAL_BUSY' });
    expect(byId.get(free)).toBeNull();
    expect(byId.get(done)).toBeNull();
  });

  it('the OpenAPI document declares it with the reasons of the contract', async () => {
    const doc = (await t.call('GET', '/api/v1/openapi.json')).body as { paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: unknown }> }> } }> };
    const waiting = JSON.stringify(doc.paths['/api/v1/instances/{id}']?.get.responses['200']?.content['application/json']?.schema);
    for (const reason of ['SERIAL_BUSY', 'QUEUE_POSITION', 'BATCH_CONCURRENCY', 'TEAM_LIMIT', 'NO_WORKER', 'BACKLOG_HOLD', 'RATE_LIMIT', 'DISPATCH_PAUSED', 'UPSTREAM']) expect(waiting).toContain(reason);
  });
});
