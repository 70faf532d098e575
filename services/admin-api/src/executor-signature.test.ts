/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * #18 item 1: reports and claims are signed v2 with the team's executor key (ADMIN-API.md
 * "HTTP executors", "Teams"). A report signed for execution X does not verify at Y's path, a
 * key of team B does not sign for team A, v1 is refused, a report for an execution that did not
 * answer 202 is 409 NOT_ASYNC, and key rotation keeps the previous version only for the grace.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveExecutorKey } from '@ax/core';
import { EXECUTOR_SECRET, addToken, insertInstance, signedBy, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let adminA: string;
let adminB: string;
const execX = '0190a0a0-0000-7000-8000-0000000000b1';
const execY = '0190a0a0-0000-7000-8000-0000000000b2';
const execShell = '0190a0a0-0000-7000-8000-0000000000b3';
const reportPath = (id: string): string => `/api/v1/executions/${id}/report`;
const ok = JSON.stringify({ success: true });

beforeAll(async () => {
  t = await startTestApp();
  for (const name of ['a', 'b']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  adminA = await addToken(t.pool, 'admin-a', 'admin', ['a']);
  adminB = await addToken(t.pool, 'admin-b', 'admin', ['b']);
  expect((await t.call('POST', '/api/v1/tasks', { body: taskDef('a_job', { team: 'a' }) })).status).toBe(201);
  const rows: Array<[string, string, string]> = [];
  for (const [n, executionId, state] of [
    [1, execX, 'ASYNC'],
    [2, execY, 'ASYNC'],
    [3, execShell, 'RUNNING'],
  ] as const) {
    const id = await insertInstance(t.pool, { task: 'a_job', expected: `2026-08-0${n}T00:00:00.000Z`, bizDate: `2026-08-0${n}`, state: 'RUNNING', workerId: 'w1', executionId });
    rows.push([executionId, id, state]);
  }
  for (const [executionId, instanceId, state] of rows) {
    await t.pool.query(`INSERT INTO task_execution (execution_id, instance_id, attempt, run_no, worker_id, state) VALUES (?, ?, 1, 1, 'w1', ?)`, [executionId, instanceId, state]);
  }
});

afterAll(async () => {
  await t?.close();
});

const report = (id: string, headers: Record<string, string>, body = ok) => t.call('POST', reportPath(id), { token: null, raw: body, headers });

describe('#18 signature v2 at /report and /claim', () => {
  it('#18.1 a report signed for execution X is refused at execution Y (401)', async () => {
    const res = await report(execY, signedBy('a', reportPath(execX), ok));
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('BAD_SIGNATURE');
  });

  it("#18.1 a report signed with team b's key is refused at team a's execution (401)", async () => {
    const res = await report(execX, signedBy('b', reportPath(execX), ok));
    expect(res.status).toBe(401);
    expect(res.body.error.details).toMatchObject({ reason: 'WRONG_TEAM' });
    // b's key presented as a's is just a wrong signature
    expect((await report(execX, signedBy('a', reportPath(execX), ok, { key: deriveExecutorKey(EXECUTOR_SECRET, 'b', 1) }))).status).toBe(401);
  });

  it('#18.1 the v1 scheme (sha256= over "<ts>.<body>" with the master secret) is refused (401)', async () => {
    const ts = String(Date.now());
    const v1 = { 'x-ax-timestamp': ts, 'x-ax-signature': `sha256=${createHmac('sha256', EXECUTOR_SECRET).update(`${ts}.${ok}`).digest('hex')}` };
    const res = await report(execX, v1);
    expect(res.status).toBe(401);
    expect(res.body.error.details).toMatchObject({ reason: 'SIGNATURE_V1' });
  });

  it('#18.1 a report for an execution that did not answer 202 is 409 NOT_ASYNC and relays nothing', async () => {
    const before = t.published.length;
    const res = await report(execShell, signedBy('a', reportPath(execShell), ok));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('NOT_ASYNC');
    expect(t.published.length).toBe(before);
    // a claim, made during the call, is still granted to that live execution
    const claimPath = `/api/v1/executions/${execShell}/claim`;
    expect((await t.call('POST', claimPath, { token: null, raw: '{}', headers: signedBy('a', claimPath, '{}') })).status).toBe(200);
    expect((await t.call('POST', claimPath, { token: null, raw: '{}', headers: signedBy('b', claimPath, '{}') })).status).toBe(401);
  });

  it('#18.1 the right report is relayed as the result of its execution', async () => {
    const res = await report(execX, signedBy('a', reportPath(execX), ok));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accepted: true, duplicate: false });
    expect(t.published.at(-1)).toMatchObject({ body: { kind: 'result', origin: 'report', items: [{ executionId: execX, outcome: 'SUCCESS' }] } });
  });
});

describe('#18 executor keys and rotation', () => {
  it("an admin of team a reads a's key; team b's admin gets 404 for it", async () => {
    const res = await t.call('GET', '/api/v1/teams/a/executor-key', { token: adminA });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ team: 'a', keyVersion: 1, key: deriveExecutorKey(EXECUTOR_SECRET, 'a', 1) });
    expect((await t.call('GET', '/api/v1/teams/a/executor-key', { token: adminB })).status).toBe(404);
    expect((await t.call('POST', '/api/v1/teams/a/executor-keys', { token: adminB })).status).toBe(404);
    expect((await t.call('GET', '/api/v1/teams/a/executor-key', { token: t.tokens.operator })).status).toBe(403);
  });

  it('after a rotation both versions verify during the grace, only the new one after it', async () => {
    const rotated = await t.call('POST', '/api/v1/teams/a/executor-keys', { token: adminA });
    expect(rotated.status).toBe(201);
    expect(rotated.body).toMatchObject({ team: 'a', keyVersion: 2, key: deriveExecutorKey(EXECUTOR_SECRET, 'a', 2) });
    expect(Date.parse(rotated.body.previousValidUntil) - Date.now()).toBeGreaterThan(86_000_000);
    const path = reportPath(execY);
    const dup = JSON.stringify({ success: true, message: 'v1' });
    expect((await report(execY, signedBy('a', path, dup, { keyVersion: 1 }), dup)).status).toBe(200);
    await t.redis.redis.del(`${t.namespace}:report:${execY}`);
    expect((await report(execY, signedBy('a', path, ok, { keyVersion: 2 }))).status).toBe(200);
    await t.redis.redis.del(`${t.namespace}:report:${execY}`);
    // the grace ends
    await t.pool.query("UPDATE team SET previous_key_valid_until = NOW(3) - INTERVAL 1 SECOND WHERE name = 'a'");
    const late = await report(execY, signedBy('a', path, ok, { keyVersion: 1 }));
    expect(late.status).toBe(401);
    expect(late.body.error.details).toMatchObject({ reason: 'KEY_VERSION' });
    expect((await report(execY, signedBy('a', path, ok, { keyVersion: 2 }))).status).toBe(200);
    const audit = await t.call('GET', '/api/v1/audit?limit=50', { token: adminA });
    expect(audit.body.items.map((e: { action: string }) => e.action)).toEqual(expect.arrayContaining(['team.executor-key.read', 'team.executor-key.rotate']));
  });
});
