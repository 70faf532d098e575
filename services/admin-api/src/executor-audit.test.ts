/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * HMAC writes are audited (ADMIN-API.md "Conventions"): an applied report and a granted claim
 * each leave one entry with the team of the execution's task, seen by that team's tokens only;
 * a duplicate or refused one leaves none. And the reserved token name `bootstrap-admin`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addToken, insertInstance, signedBy, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let adminA: string;
let adminB: string;
const reported = '0190a0a0-0000-7000-8000-0000000000a1';
const claimed = '0190a0a0-0000-7000-8000-0000000000a2';
const fenced = '0190a0a0-0000-7000-8000-0000000000a3';


async function entriesFor(target: string, token?: string): Promise<any[]> {
  const res = await t.call('GET', '/api/v1/audit?limit=500', token === undefined ? {} : { token });
  expect(res.status).toBe(200);
  return res.body.items.filter((e: { target: string }) => e.target === target);
}

beforeAll(async () => {
  t = await startTestApp();
  for (const name of ['a', 'b']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  adminA = await addToken(t.pool, 'admin-a', 'admin', ['a']);
  adminB = await addToken(t.pool, 'admin-b', 'admin', ['b']);
  expect((await t.call('POST', '/api/v1/tasks', { body: taskDef('a_job', { team: 'a' }) })).status).toBe(201);
  const first = await insertInstance(t.pool, { task: 'a_job', expected: '2026-08-01T00:00:00.000Z', bizDate: '2026-08-01', state: 'RUNNING', workerId: 'w1', executionId: reported });
  const second = await insertInstance(t.pool, { task: 'a_job', expected: '2026-08-02T00:00:00.000Z', bizDate: '2026-08-02', state: 'RUNNING', workerId: 'w1', executionId: claimed });
  await t.pool.query(
    `INSERT INTO task_execution (execution_id, instance_id, attempt, run_no, worker_id, state) VALUES (?, ?, 1, 1, 'w1', 'ASYNC'), (?, ?, 1, 1, 'w1', 'FAILED'), (?, ?, 2, 1, 'w1', 'RUNNING')`,
    [reported, first, fenced, second, claimed, second],
  );
});

afterAll(async () => {
  await t?.close();
});

describe('HMAC writes are audited with the team of the execution', () => {
  it('a relayed report leaves one execution.report entry (team a; none for a duplicate or a bad signature)', async () => {
    const body = JSON.stringify({ success: false, message: 'upstream said no' });
    expect((await t.call('POST', `/api/v1/executions/${reported}/report`, { token: null, raw: body, headers: signedBy('a', `/api/v1/executions/${reported}/report`, '{}') })).status).toBe(401);
    expect(await entriesFor(`execution:${reported}`)).toEqual([]);
    const first = await t.call('POST', `/api/v1/executions/${reported}/report`, { token: null, raw: body, headers: signedBy('a', `/api/v1/executions/${reported}/report`, body) });
    expect(first.body).toEqual({ accepted: true, duplicate: false });
    const again = await t.call('POST', `/api/v1/executions/${reported}/report`, { token: null, raw: body, headers: signedBy('a', `/api/v1/executions/${reported}/report`, body) });
    expect(again.body).toEqual({ duplicate: true });
    const entries = await entriesFor(`execution:${reported}`);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ action: 'execution.report', actor: { tokenId: null, name: 'executor:a' }, team: 'a', after: { outcome: 'FAILED' } });
    expect(await entriesFor(`execution:${reported}`, adminA)).toHaveLength(1);
    expect(await entriesFor(`execution:${reported}`, adminB)).toEqual([]);
  });

  it('a granted claim leaves an execution.claim entry (team a); a refused one (409) none', async () => {
    const empty = '{}';
    expect((await t.call('POST', `/api/v1/executions/${fenced}/claim`, { token: null, raw: empty, headers: signedBy('a', `/api/v1/executions/${fenced}/claim`, empty) })).status).toBe(409);
    expect(await entriesFor(`execution:${fenced}`)).toEqual([]);
    const granted = await t.call('POST', `/api/v1/executions/${claimed}/claim`, { token: null, raw: empty, headers: signedBy('a', `/api/v1/executions/${claimed}/claim`, empty) });
    expect(granted.body).toEqual({ granted: true });
    const entries = await entriesFor(`execution:${claimed}`);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ action: 'execution.claim', actor: { tokenId: null, name: 'executor:a' }, team: 'a', after: { granted: true } });
    expect(await entriesFor(`execution:${claimed}`, adminA)).toHaveLength(1);
    expect(await entriesFor(`execution:${claimed}`, adminB)).toEqual([]);
  });
});

describe('reserved token name', () => {
  it('POST /tokens refuses the name of the AX_ADMIN_TOKEN token (400 naming `name`), however it is spelled', async () => {
    for (const name of ['bootstrap-admin', ' Bootstrap-Admin ']) {
      const res = await t.call('POST', '/api/v1/tokens', { body: { name, role: 'admin' } });
      expect(res.status, name).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.details.issues.map((i: { path: string }) => i.path)).toEqual(['name']);
    }
    const [rows] = await t.pool.query<any[]>("SELECT COUNT(*) AS n FROM api_token WHERE name = 'bootstrap-admin'");
    expect(Number(rows[0].n)).toBe(0);
    expect((await t.call('POST', '/api/v1/tokens', { body: { name: 'bootstrap-admin-2', role: 'viewer' } })).status).toBe(201);
  });
});
