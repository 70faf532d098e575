/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/**
 * The team boundary of rerun batches, alerts and the dashboard figures (ADMIN-API.md "Teams"):
 * a token of team `pay` attacking team `ord`'s batch and alerts gets 404 NOT_FOUND, exactly the
 * answer for an id that does not exist, changes nothing, and lists never show them; a batch or
 * alert of no team or of several is seen only by tokens of every team.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raiseAlert } from '@ax/store';
import { addToken, insertInstance, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let viewerPay: string;
let opPay: string;
let opOrd: string;
const day = '2026-11-20';
const ids: Record<string, string> = {};
const batches: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestApp({ now: () => Date.parse(`${day}T20:00:00.000Z`) });
  for (const name of ['pay', 'ord']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  viewerPay = await addToken(t.pool, 'viewer-pay', 'viewer', ['pay']);
  opPay = await addToken(t.pool, 'op-pay', 'operator', ['pay']);
  opOrd = await addToken(t.pool, 'op-ord', 'operator', ['ord']);
  for (const [name, team] of [['pay_job', 'pay'], ['ord_job', 'ord']] as const) {
    expect((await t.call('POST', '/api/v1/tasks', { body: taskDef(name, { team }) })).status).toBe(201);
    ids[`${name}_1`] = await insertInstance(t.pool, { task: name, expected: `${day}T02:00:00.000Z`, bizDate: day, state: 'FAILED' });
    ids[`${name}_2`] = await insertInstance(t.pool, { task: name, expected: `${day}T03:00:00.000Z`, bizDate: day, state: 'FAILED' });
  }
  const pay = await t.call('POST', '/api/v1/reruns', { token: opPay, body: { mode: 'instance', instanceId: ids['pay_job_1'], reason: 'pay fix' } });
  const ord = await t.call('POST', '/api/v1/reruns', { token: opOrd, body: { mode: 'instance', instanceId: ids['ord_job_1'], reason: 'ord fix' } });
  expect([pay.status, ord.status]).toEqual([202, 202]);
  batches['pay'] = pay.body.batchId;
  batches['ord'] = ord.body.batchId;
  // A batch of every team's failures (a "*" token): of two teams, so of neither alone.
  const both = await t.call('POST', '/api/v1/reruns', { token: t.tokens.operator, body: { mode: 'failed', bizDate: day, reason: 'all' } });
  expect(both.status).toBe(202);
  expect(both.body.instances.sort()).toEqual([ids['pay_job_2'], ids['ord_job_2']].sort());
  batches['both'] = both.body.batchId;

  await raiseAlert(t.pool, { kind: 'FINAL_FAILURE', severity: 'critical', instanceId: ids['pay_job_2'], taskName: 'pay_job', message: 'pay failed' });
  await raiseAlert(t.pool, { kind: 'FINAL_FAILURE', severity: 'critical', instanceId: ids['ord_job_2'], taskName: 'ord_job', message: 'ord failed' });
  await raiseAlert(t.pool, { kind: 'DID_NOT_FIRE', severity: 'warning', subject: 'task:ord_job', taskName: 'ord_job', message: 'ord did not fire' });
  await raiseAlert(t.pool, { kind: 'LOST_WORKER', severity: 'critical', subject: 'worker:w1', workerId: 'w1', message: 'worker w1 lost' });
  // Figures of the day: the re-run instances are due now (the database's clock), not on `day`.
  await insertInstance(t.pool, { task: 'pay_job', expected: `${day}T04:00:00.000Z`, bizDate: day, state: 'SUCCESS' });
  await insertInstance(t.pool, { task: 'ord_job', expected: `${day}T04:00:00.000Z`, bizDate: day, state: 'FAILED' });
});

afterAll(async () => {
  await t?.close();
});

async function ordUntouched(): Promise<void> {
  const [rows] = await t.pool.query<any[]>('SELECT id, state, reason FROM task_instance WHERE rerun_batch_id = ? ORDER BY id', [batches['ord']]);
  expect(rows.map((r) => [String(r.id), r.state, r.reason])).toEqual([[ids['ord_job_1'], 'PENDING', null]]);
  const [audit] = await t.pool.query<any[]>("SELECT COUNT(*) AS n FROM audit_log WHERE action = 'rerun.cancel'");
  expect(Number(audit[0].n)).toBe(0);
}

describe("another team's rerun batch", () => {
  it('GET /reruns/{id} of team ord answers team pay 404, the same body as a batch that does not exist', async () => {
    const attack = await t.call('GET', `/api/v1/reruns/${batches['ord']}`, { token: viewerPay });
    const missing = await t.call('GET', '/api/v1/reruns/987654321', { token: viewerPay });
    expect(attack.status).toBe(404);
    expect(attack.body.error.code).toBe('NOT_FOUND');
    expect(missing.status).toBe(404);
    expect(attack.body.error.message.replace(batches['ord'] as string, 'X')).toBe(missing.body.error.message.replace('987654321', 'X'));
    expect((await t.call('GET', `/api/v1/reruns/${batches['both']}`, { token: viewerPay })).status).toBe(404);
  });

  it('POST /reruns/{id}/cancel of team ord by an operator of pay: 404, nothing canceled, nothing audited', async () => {
    const attack = await t.call('POST', `/api/v1/reruns/${batches['ord']}/cancel`, { token: opPay, body: { reason: 'mine now' } });
    expect(attack.status).toBe(404);
    expect(attack.body.error.code).toBe('NOT_FOUND');
    const mixed = await t.call('POST', `/api/v1/reruns/${batches['both']}/cancel`, { token: opPay });
    expect(mixed.status).toBe(404);
    await ordUntouched();
  });

  it('GET /reruns lists only the batches of the token\'s teams; a "*" token sees all', async () => {
    const list = await t.call('GET', '/api/v1/reruns', { token: viewerPay });
    expect(list.status).toBe(200);
    expect(list.body.items.map((b: any) => b.id)).toEqual([batches['pay']]);
    expect(list.body.items[0]).toMatchObject({ total: 1, counts: { PENDING: 1 } });
    const all = await t.call('GET', '/api/v1/reruns', { token: t.tokens.viewer });
    expect(all.body.items.map((b: any) => b.id)).toEqual([batches['both'], batches['ord'], batches['pay']]);
    expect(all.body.items[0]).toMatchObject({ total: 2, counts: { PENDING: 2 } });
  });

  it('its own batch: seen, and cancelable', async () => {
    expect((await t.call('GET', `/api/v1/reruns/${batches['pay']}`, { token: viewerPay })).body).toMatchObject({ id: batches['pay'], state: 'running' });
    const cancel = await t.call('POST', `/api/v1/reruns/${batches['pay']}/cancel`, { token: opPay });
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ state: 'canceled', counts: { CANCELED: 1, PENDING: 0 } });
  });
});

describe("another team's alerts", () => {
  it('GET /alerts shows team pay its own alerts only: not ord\'s, not a worker\'s', async () => {
    const mine = await t.call('GET', '/api/v1/alerts', { token: viewerPay });
    expect(mine.status).toBe(200);
    expect(mine.body.items.map((a: any) => [a.kind, a.taskName, a.team])).toEqual([['FINAL_FAILURE', 'pay_job', 'pay']]);
    for (const q of ['task=ord_job', 'kind=LOST_WORKER', 'kind=DID_NOT_FIRE', 'severity=warning']) {
      const res = await t.call('GET', `/api/v1/alerts?${q}`, { token: viewerPay });
      expect({ q, items: res.body.items }).toEqual({ q, items: [] });
    }
    const all = await t.call('GET', '/api/v1/alerts', { token: t.tokens.viewer });
    expect(all.body.items.map((a: any) => a.message)).toEqual(['worker w1 lost', 'ord did not fire', 'ord failed', 'pay failed']);
  });
});

describe("another team's figures", () => {
  it('stats/today and stats/hourly count only the token\'s teams', async () => {
    const mine = await t.call('GET', '/api/v1/stats/today', { token: viewerPay });
    expect(mine.body).toMatchObject({ day, total: 1, succeeded: 1, failed: 0, topFailing: [] });
    const all = await t.call('GET', '/api/v1/stats/today', { token: t.tokens.viewer });
    expect(all.body).toMatchObject({ day, total: 2, succeeded: 1, failed: 1, topFailing: [{ task: 'ord_job', count: 1 }] });
    const hourly = await t.call('GET', `/api/v1/stats/hourly?day=${day}`, { token: viewerPay });
    expect(hourly.body.hours.filter((h: any) => h.runs > 0)).toEqual([expect.objectContaining({ hour: `${day}T04:00:00.000Z`, runs: 1, failed: 0 })]);
  });
});
