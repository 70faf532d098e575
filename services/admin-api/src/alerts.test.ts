/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/**
 * `GET /api/v1/alerts` (ADMIN-API.md): the alert body (kind, severity, task, instance, worker,
 * reason, message, at) plus its delivery state (`pending`, `sent`, `failed`, `not_configured`:
 * from the broker's records per route, `alert_delivery`), attempts and routes; newest first;
 * filters kind, task, from, to (and the extensions severity, delivery), paged by cursor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raiseAlert } from '@ax/store';
import { insertInstance, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let instanceId: string;
const day = '2026-11-15';

async function alertId(message: string): Promise<string> {
  const [rows] = await t.pool.query<any[]>('SELECT id FROM alert_log WHERE message = ?', [message]);
  return String(rows[0].id);
}

beforeAll(async () => {
  t = await startTestApp();
  await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('al_job') });
  await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('al_other') });
  instanceId = await insertInstance(t.pool, { task: 'al_job', expected: `${day}T01:00:00.000Z`, bizDate: day, state: 'FAILED' });
  const raised: Array<[Parameters<typeof raiseAlert>[1], string]> = [
    [{ kind: 'FINAL_FAILURE', severity: 'critical', instanceId, taskName: 'al_job', message: 'm1 final failure' }, '01:00:05.000'],
    [{ kind: 'SLA_MISSED', severity: 'warning', instanceId, taskName: 'al_job', reason: 'FINISH', message: 'm2 sla' }, '02:00:00.000'],
    [{ kind: 'DID_NOT_FIRE', severity: 'warning', subject: 'task:al_other', taskName: 'al_other', message: 'm3 did not fire' }, '03:00:00.000'],
    [{ kind: 'LOST_WORKER', severity: 'critical', subject: 'worker:w9', workerId: 'w9', message: 'm4 lost worker' }, '04:00:00.000'],
    [{ kind: 'FINAL_FAILURE', severity: 'critical', subject: 'task:al_other:x', taskName: 'al_other', message: 'm5 final failure' }, '05:00:00.000'],
    // raised last (the newest id: lists go by id), dated first
    [{ kind: 'NO_WORKER', severity: 'critical', subject: 'global', message: 'm6 nowhere to go' }, '00:30:00.000'],
  ];
  for (const [alert, time] of raised) {
    expect(await raiseAlert(t.pool, alert)).toBe(true);
    await t.pool.query('UPDATE alert_log SET at = ? WHERE message = ?', [new Date(`${day}T${time}Z`), alert.message]);
  }
  // m1 sent to the platform webhook; m2 failed twice there; m6 had no route at all; the rest pending.
  await t.pool.query("UPDATE alert_log SET delivered_at = ? WHERE message IN ('m1 final failure', 'm6 nowhere to go')", [new Date(`${day}T01:00:06.000Z`)]);
  const record = 'INSERT INTO alert_delivery (alert_id, route, target, format, state, attempts, last_error, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)';
  await t.pool.query(record, [await alertId('m1 final failure'), 'platform', 'https://ops.example', 'generic', 'sent', 1, null, new Date(`${day}T01:00:06.000Z`)]);
  await t.pool.query(record, [await alertId('m2 sla'), 'platform', 'https://ops.example', 'generic', 'failed', 2, 'webhook answered HTTP 503', new Date(`${day}T02:00:10.000Z`)]);
  await t.pool.query(record, [await alertId('m6 nowhere to go'), 'none', '', 'generic', 'not_configured', 0, null, new Date(`${day}T00:30:01.000Z`)]);
});

afterAll(async () => {
  await t?.close();
});

const messages = (res: any): string[] => res.body.items.map((a: any) => a.message);
const get = (q = '') => t.call('GET', `/api/v1/alerts${q}`, { token: t.tokens.viewer });

describe('GET /api/v1/alerts', () => {
  it('newest first, as the alert body plus delivery and attempts', async () => {
    const res = await get();
    expect(res.status).toBe(200);
    expect(messages(res)).toEqual(['m6 nowhere to go', 'm5 final failure', 'm4 lost worker', 'm3 did not fire', 'm2 sla', 'm1 final failure']);
    expect(res.body.nextCursor).toBeNull();
    const byMessage = new Map(res.body.items.map((a: any) => [a.message, a]));
    expect(byMessage.get('m1 final failure')).toEqual({
      id: await alertId('m1 final failure'),
      kind: 'FINAL_FAILURE',
      severity: 'critical',
      team: 'default',
      taskName: 'al_job',
      instanceId,
      message: 'm1 final failure',
      at: `${day}T01:00:05.000Z`,
      delivery: 'sent',
      attempts: 1,
      routes: [{ route: 'platform', target: 'https://ops.example', format: 'generic', state: 'sent', attempts: 1, lastError: null, at: `${day}T01:00:06.000Z` }],
      deliveredAt: `${day}T01:00:06.000Z`,
    });
    expect(byMessage.get('m2 sla')).toMatchObject({
      kind: 'SLA_MISSED',
      severity: 'warning',
      reason: 'FINISH',
      delivery: 'failed',
      attempts: 2,
      routes: [{ route: 'platform', state: 'failed', attempts: 2, lastError: 'webhook answered HTTP 503' }],
      deliveredAt: null,
    });
    // No webhook and no team route: it was only logged, and the API does not claim it was sent.
    expect(byMessage.get('m6 nowhere to go')).toMatchObject({ delivery: 'not_configured', attempts: 0, routes: [] });
    expect(byMessage.get('m4 lost worker')).toEqual({
      id: await alertId('m4 lost worker'),
      kind: 'LOST_WORKER',
      severity: 'critical',
      workerId: 'w9',
      message: 'm4 lost worker',
      at: `${day}T04:00:00.000Z`,
      delivery: 'pending',
      attempts: 0,
      routes: [],
      deliveredAt: null,
    });
  });

  it('filters: kind (one or a list), task, from/to, severity, delivery', async () => {
    expect(messages(await get('?kind=FINAL_FAILURE'))).toEqual(['m5 final failure', 'm1 final failure']);
    expect(messages(await get('?kind=SLA_MISSED,LOST_WORKER'))).toEqual(['m4 lost worker', 'm2 sla']);
    expect(messages(await get('?task=al_other'))).toEqual(['m5 final failure', 'm3 did not fire']);
    expect(messages(await get(`?from=${day}T02:00:00.000Z&to=${day}T04:00:00.000Z`))).toEqual(['m3 did not fire', 'm2 sla']);
    expect(messages(await get('?severity=warning'))).toEqual(['m3 did not fire', 'm2 sla']);
    expect(messages(await get('?delivery=not_configured'))).toEqual(['m6 nowhere to go']);
    expect(messages(await get('?delivery=sent'))).toEqual(['m1 final failure']);
    expect(messages(await get('?delivery=failed'))).toEqual(['m2 sla']);
    expect(messages(await get('?delivery=pending'))).toEqual(['m5 final failure', 'm4 lost worker', 'm3 did not fire']);
    expect(messages(await get('?kind=FINAL_FAILURE&task=al_job&delivery=sent'))).toEqual(['m1 final failure']);
    expect(messages(await get('?kind=BACKLOG'))).toEqual([]);
  });

  it('pages by cursor, with and without a delivery filter', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await get(`?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...messages(res));
      cursor = res.body.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual(['m6 nowhere to go', 'm5 final failure', 'm4 lost worker', 'm3 did not fire', 'm2 sla', 'm1 final failure']);
    const pending: string[] = [];
    cursor = null;
    do {
      const res: any = await get(`?delivery=pending&limit=1${cursor === null ? '' : `&cursor=${cursor}`}`);
      pending.push(...messages(res));
      cursor = res.body.nextCursor;
    } while (cursor !== null);
    expect(pending).toEqual(['m5 final failure', 'm4 lost worker', 'm3 did not fire']);
  });

  it('400 for bad filters; 401 without a token', async () => {
    for (const q of ['?kind=final_failure', '?from=yesterday', '?delivery=lost', '?severity=info', '?limit=0', '?cursor=nope', '?task=Bad Name']) {
      const res = await get(q);
      expect({ q, status: res.status, code: res.body.error?.code }).toEqual({ q, status: 400, code: 'VALIDATION_FAILED' });
    }
    expect((await t.call('GET', '/api/v1/alerts', { token: null })).status).toBe(401);
  });
});
