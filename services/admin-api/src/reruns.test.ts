/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/** Reruns of every mode, dry runs, and the forceDownstream role check, on a DAG of 4 tasks over 2 business dates. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertInstance, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
const D1 = '2026-11-01';
const D2 = '2026-11-02';
const ids: Record<string, string> = {};

async function state(id: string): Promise<{ state: string; runNo: number; trigger: string; rerunBatchId: string | null }> {
  const res = await t.call('GET', `/api/v1/instances/${id}`, { token: t.tokens.viewer });
  return { state: res.body.state, runNo: res.body.runNo, trigger: res.body.trigger, rerunBatchId: res.body.rerunBatchId };
}

async function counts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ['task_instance', 'rerun_batch', 'event_log', 'audit_log']) {
    const [rows] = await t.pool.query<any[]>(`SELECT COUNT(*) AS n FROM ${table}`);
    out[table] = Number(rows[0].n);
  }
  const [states] = await t.pool.query<any[]>('SELECT GROUP_CONCAT(CONCAT(id, state, run_no) ORDER BY id) AS s FROM task_instance');
  out['states'] = String(states[0].s).length;
  return out;
}

const rerun = (body: Record<string, unknown>, token?: string) => t.call('POST', '/api/v1/reruns', { token: token ?? t.tokens.operator, body });

beforeAll(async () => {
  t = await startTestApp();
  // r_a → r_b → r_d, r_a → r_c → r_d
  for (const n of ['r_a', 'r_b', 'r_c', 'r_d']) await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef(n) });
  for (const [parent, child] of [['r_a', 'r_b'], ['r_a', 'r_c'], ['r_b', 'r_d'], ['r_c', 'r_d']]) {
    await t.call('POST', '/api/v1/edges', { token: t.tokens.operator, body: { parent, child } });
  }
  const day1: Record<string, string> = { r_a: 'SUCCESS', r_b: 'SUCCESS', r_c: 'FAILED', r_d: 'CANCELED' };
  const day2: Record<string, string> = { r_a: 'SUCCESS', r_b: 'FAILED', r_c: 'SUCCESS', r_d: 'CANCELED' };
  for (const [task, s] of Object.entries(day1)) ids[`${task}@1`] = await insertInstance(t.pool, { task, expected: `${D1}T02:00:00.000Z`, bizDate: D1, state: s });
  for (const [task, s] of Object.entries(day2)) ids[`${task}@2`] = await insertInstance(t.pool, { task, expected: `${D2}T02:00:00.000Z`, bizDate: D2, state: s });
});
afterAll(async () => {
  await t?.close();
});

describe('validation and roles', () => {
  it('requires a reason and a known mode; 401/403', async () => {
    const noReason = await rerun({ mode: 'instance', instanceId: ids['r_c@1'] });
    expect(noReason.status).toBe(400);
    expect(noReason.body.error.details.issues.map((i: { path: string }) => i.path)).toEqual(['reason']);
    expect((await rerun({ mode: 'everything', reason: 'x' })).status).toBe(400);
    expect((await rerun({ mode: 'backfill', task: 'r_a', from: D2, to: D1, reason: 'x' })).status).toBe(400);
    expect((await rerun({ mode: 'instance', instanceId: ids['r_c@1'], reason: 'x' }, t.tokens.viewer)).status).toBe(403);
    expect((await t.call('POST', '/api/v1/reruns', { token: null, body: { mode: 'instance', instanceId: '1', reason: 'x' } })).status).toBe(401);
    const force = await rerun({ mode: 'dag', root: 'r_a', bizDate: D1, reason: 'x', forceDownstream: true });
    expect(force.status).toBe(403);
  });
});

describe('dag', () => {
  it('dry run lists the root PENDING and failed/canceled downstream WAITING, writes nothing', async () => {
    const before = await counts();
    const dry = await rerun({ mode: 'dag', root: 'r_a', bizDate: D1, reason: 'fix', dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body.instances.map((i: { id: string; state: string }) => [i.id, i.state])).toEqual([
      [ids['r_a@1'], 'PENDING'],
      [ids['r_c@1'], 'WAITING'],
      [ids['r_d@1'], 'WAITING'],
    ]);
    expect(await counts()).toEqual(before);
  });

  it('re-runs root PENDING, downstream WAITING (R20), run_no + 1, leaves succeeded downstream and the other date alone', async () => {
    const res = await rerun({ mode: 'dag', root: 'r_a', bizDate: D1, reason: 'upstream data fixed' });
    expect(res.status).toBe(202);
    expect(res.body.instances).toEqual([ids['r_a@1'], ids['r_c@1'], ids['r_d@1']]);
    expect(await state(ids['r_a@1'] as string)).toMatchObject({ state: 'PENDING', runNo: 2, trigger: 'rerun', rerunBatchId: res.body.batchId });
    expect((await state(ids['r_c@1'] as string)).state).toBe('WAITING');
    expect((await state(ids['r_d@1'] as string)).state).toBe('WAITING');
    expect(await state(ids['r_b@1'] as string)).toMatchObject({ state: 'SUCCESS', runNo: 1 });
    expect((await state(ids['r_a@2'] as string)).state).toBe('SUCCESS');
    const detail = await t.call('GET', `/api/v1/instances/${ids['r_a@1']}`, { token: t.tokens.viewer });
    expect(detail.body.events.at(-1)).toMatchObject({ type: 'RERUN_REQUESTED' });
    const audit = await t.call('GET', '/api/v1/audit?actor=operator-user');
    expect(audit.body.items[0]).toMatchObject({ action: 'rerun.dag', reason: 'upstream data fixed', target: `dag:r_a@${D1}` });
  });

  it('409 INVALID_STATE when the root is not final; 404 for an unknown root or date', async () => {
    const res = await rerun({ mode: 'dag', root: 'r_a', bizDate: D1, reason: 'again' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('INVALID_STATE');
    expect((await rerun({ mode: 'dag', root: 'ghost', bizDate: D1, reason: 'x' })).status).toBe(404);
    expect((await rerun({ mode: 'dag', root: 'r_a', bizDate: '2020-01-01', reason: 'x' })).status).toBe(404);
  });
});

describe('failed', () => {
  it('dry run then re-runs only FAILED/CANCELED of the date, in dependency order', async () => {
    const before = await counts();
    const dry = await rerun({ mode: 'failed', bizDate: D2, reason: 'retry failures', dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body.instances.map((i: { id: string; state: string }) => [i.id, i.state])).toEqual([
      [ids['r_b@2'], 'PENDING'],
      [ids['r_d@2'], 'WAITING'],
    ]);
    expect(await counts()).toEqual(before);
    const res = await rerun({ mode: 'failed', bizDate: D2, reason: 'retry failures' });
    expect(res.status).toBe(202);
    expect(res.body.instances.sort()).toEqual([ids['r_b@2'], ids['r_d@2']].sort());
    expect(await state(ids['r_b@2'] as string)).toMatchObject({ state: 'PENDING', runNo: 2 });
    expect((await state(ids['r_d@2'] as string)).state).toBe('WAITING');
    expect((await state(ids['r_c@2'] as string)).state).toBe('SUCCESS');
  });
});

describe('forceDownstream (admin)', () => {
  it('re-runs succeeded downstream instances too, skipping those not final', async () => {
    const dry = await rerun({ mode: 'dag', root: 'r_a', bizDate: D2, reason: 'full refresh', forceDownstream: true, dryRun: true }, t.tokens.admin);
    expect(dry.body.instances.map((i: { id: string }) => i.id)).toEqual([ids['r_a@2'], ids['r_c@2']]);
    const res = await rerun({ mode: 'dag', root: 'r_a', bizDate: D2, reason: 'full refresh', forceDownstream: true }, t.tokens.admin);
    expect(res.status).toBe(202);
    expect((await state(ids['r_c@2'] as string)).state).toBe('WAITING');
    expect((await state(ids['r_a@2'] as string)).state).toBe('PENDING');
  });
});

describe('instance', () => {
  it('re-runs one final instance with a fresh run number; 409 for a non-final one; 404 unknown; dry run writes nothing', async () => {
    const id = await insertInstance(t.pool, { task: 'r_b', expected: '2026-10-01T02:00:00.000Z', bizDate: '2026-10-01', state: 'FAILED' });
    const before = await counts();
    const dry = await rerun({ mode: 'instance', instanceId: id, reason: 'flaky', dryRun: true });
    expect(dry.body.instances).toEqual([expect.objectContaining({ id, action: 'rerun', state: 'PENDING', runNo: 2 })]);
    expect(await counts()).toEqual(before);
    const res = await rerun({ mode: 'instance', instanceId: id, reason: 'flaky' });
    expect(res.status).toBe(202);
    expect(res.body.instances).toEqual([id]);
    expect(await state(id)).toMatchObject({ state: 'PENDING', runNo: 2 });
    const again = await rerun({ mode: 'instance', instanceId: id, reason: 'flaky' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('INVALID_STATE');
    expect((await rerun({ mode: 'instance', instanceId: '987654', reason: 'x' })).status).toBe(404);
  });
});

describe('backfill', () => {
  it('creates missing slots at real slot times, re-runs final ones, skips running ones, stores concurrency', async () => {
    await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('r_bf', { schedule: { type: 'cron', expr: '0 0,12 * * *' } }) });
    const done = await insertInstance(t.pool, { task: 'r_bf', expected: '2026-11-01T00:00:00.000Z', bizDate: D1, state: 'SUCCESS' });
    const running = await insertInstance(t.pool, { task: 'r_bf', expected: '2026-11-01T12:00:00.000Z', bizDate: D1, state: 'RUNNING' });
    const before = await counts();
    const dry = await rerun({ mode: 'backfill', task: 'r_bf', from: D1, to: D2, concurrency: 2, reason: 'history', dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body.instances).toEqual([
      expect.objectContaining({ action: 'rerun', id: done, expectedTime: '2026-11-01T00:00:00.000Z' }),
      expect.objectContaining({ action: 'create', taskName: 'r_bf', expectedTime: '2026-11-02T00:00:00.000Z', bizDate: D2 }),
      expect.objectContaining({ action: 'create', taskName: 'r_bf', expectedTime: '2026-11-02T12:00:00.000Z', bizDate: D2 }),
    ]);
    expect(await counts()).toEqual(before);
    const res = await rerun({ mode: 'backfill', task: 'r_bf', from: D1, to: D2, concurrency: 2, reason: 'history' });
    expect(res.status).toBe(202);
    expect(res.body.instances).toHaveLength(3);
    expect(res.body.instances[0]).toBe(done);
    expect(await state(done)).toMatchObject({ state: 'PENDING', runNo: 2 });
    expect((await state(running)).state).toBe('RUNNING');
    const created = await t.call('GET', `/api/v1/instances/${res.body.instances[2]}`, { token: t.tokens.viewer });
    expect(created.body).toMatchObject({ expectedTime: '2026-11-02T12:00:00.000Z', trigger: 'rerun', state: 'PENDING', runNo: 1, bizDate: D2 });
    const [rows] = await t.pool.query<any[]>('SELECT mode, concurrency, reason FROM rerun_batch WHERE id = ?', [res.body.batchId]);
    expect(rows[0]).toMatchObject({ mode: 'backfill', concurrency: 2, reason: 'history' });
    expect((await rerun({ mode: 'backfill', task: 'ghost', from: D1, to: D2, reason: 'x' })).status).toBe(404);
  });
});

describe('clocks', () => {
  it("R6/R7 a rerun's due_at is the database's NOW(3), not admin-api's clock (a process clock 30 days ahead changes nothing)", async () => {
    const skewed = await startTestApp({ now: () => Date.now() + 30 * 86_400_000 });
    try {
      await skewed.call('POST', '/api/v1/tasks', { token: skewed.tokens.operator, body: taskDef('r_clock', { schedule: { type: 'cron', expr: '0 0,12 * * *' } }) });
      const done = await insertInstance(skewed.pool, { task: 'r_clock', expected: `${D1}T00:00:00.000Z`, bizDate: D1, state: 'FAILED' });
      const again = await skewed.call('POST', '/api/v1/reruns', { token: skewed.tokens.operator, body: { mode: 'instance', instanceId: done, reason: 'clock' } });
      expect(again.status).toBe(202);
      const backfill = await skewed.call('POST', '/api/v1/reruns', { token: skewed.tokens.operator, body: { mode: 'backfill', task: 'r_clock', from: D1, to: D1, reason: 'clock' } });
      expect(backfill.status).toBe(202);
      expect(backfill.body.instances).toHaveLength(1); // the 12:00 slot; the 00:00 one is PENDING already
      const [rows] = await skewed.pool.query<any[]>(
        "SELECT id, TIMESTAMPDIFF(MICROSECOND, NOW(3), due_at) DIV 1000 AS ahead_ms FROM task_instance WHERE task_name = 'r_clock' ORDER BY id",
      );
      expect(rows.map((r: { id: unknown }) => String(r.id))).toEqual([done, backfill.body.instances[0]]);
      for (const r of rows) {
        // written a moment ago on the database clock: due now, not in 30 days
        expect(Number(r.ahead_ms)).toBeLessThanOrEqual(1_000);
        expect(Number(r.ahead_ms)).toBeGreaterThan(-60_000);
      }
    } finally {
      await skewed.close();
    }
  });
});
