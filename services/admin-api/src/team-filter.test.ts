/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * The `team` filter of the task and instance lists (an extension the console and axctl use):
 * it narrows what the token sees, never widens it — a team the token does not cover lists
 * nothing, exactly like a team that does not exist.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addToken, insertInstance, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let viewerPay: string;
const day = '2026-11-20';

beforeAll(async () => {
  t = await startTestApp();
  for (const name of ['pay', 'ord']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  viewerPay = await addToken(t.pool, 'viewer-pay', 'viewer', ['pay']);
  for (const [name, team] of [['pay_job', 'pay'], ['ord_job', 'ord'], ['def_job', 'default']] as const) {
    expect((await t.call('POST', '/api/v1/tasks', { body: taskDef(name, { team }) })).status).toBe(201);
    await insertInstance(t.pool, { task: name, expected: `${day}T02:00:00.000Z`, bizDate: day, state: 'SUCCESS' });
  }
});

afterAll(async () => {
  await t?.close();
});

const names = (res: { body: any }): string[] => res.body.items.map((x: any) => x.name ?? x.taskName);

describe('#18 GET /api/v1/tasks and /api/v1/instances ?team=', () => {
  it('lists only the named team for a token of every team', async () => {
    expect(names(await t.call('GET', '/api/v1/tasks'))).toEqual(['def_job', 'ord_job', 'pay_job']);
    expect(names(await t.call('GET', '/api/v1/tasks?team=ord'))).toEqual(['ord_job']);
    expect(names(await t.call('GET', '/api/v1/tasks?team=default'))).toEqual(['def_job']);
    const inst = await t.call('GET', '/api/v1/instances?team=pay');
    expect(inst.body.items.map((i: any) => [i.taskName, i.team])).toEqual([['pay_job', 'pay']]);
    expect(names(await t.call('GET', '/api/v1/tasks?team=nosuch'))).toEqual([]);
  });

  it('never widens a team token: another team lists nothing, as a missing one does', async () => {
    expect(names(await t.call('GET', '/api/v1/tasks', { token: viewerPay }))).toEqual(['pay_job']);
    expect(names(await t.call('GET', '/api/v1/tasks?team=pay', { token: viewerPay }))).toEqual(['pay_job']);
    const other = await t.call('GET', '/api/v1/tasks?team=ord', { token: viewerPay });
    const missing = await t.call('GET', '/api/v1/tasks?team=nosuch', { token: viewerPay });
    expect([other.status, other.body]).toEqual([200, { items: [], nextCursor: null }]);
    expect([missing.status, missing.body]).toEqual([200, { items: [], nextCursor: null }]);
    expect((await t.call('GET', '/api/v1/instances?team=ord', { token: viewerPay })).body).toEqual({ items: [], nextCursor: null });
    expect(names(await t.call('GET', '/api/v1/instances?team=pay', { token: viewerPay }))).toEqual(['pay_job']);
  });

  it('refuses a malformed team name with 400 VALIDATION_FAILED naming the parameter', async () => {
    for (const path of ['/api/v1/tasks?team=Bad%20Team', '/api/v1/instances?team=Bad%20Team']) {
      const res = await t.call('GET', path);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.details.issues[0].path).toBe('team');
    }
  });

  it('is in the OpenAPI document of both lists', async () => {
    const doc = (await t.call('GET', '/api/v1/openapi.json', { token: null })).body;
    for (const path of ['/api/v1/tasks', '/api/v1/instances']) {
      expect(doc.paths[path].get.parameters.map((p: any) => p.name), path).toContain('team');
    }
  });
});
