/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * What an operator sees and undoes (issue #47, ADMIN-API.md "Workers" and `GET /status`):
 * undrain; a drain that ends with the drained worker process; a team's operator draining its
 * team's own worker but not a shared one; the pause with since, by and reason; the status of the
 * token's teams (workers live and draining, backlog, late runs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATE_AFTER_SECONDS } from '@ax/core';
import { redisKeys } from '@ax/kit';
import { publishRegistration, type WorkerRegistration } from '@ax/redis';
import { addToken, insertInstance, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let opA: string;
let viewerB: string;

function entry(workerId: string, startedAt: string, teams?: string[]): WorkerRegistration {
  const now = new Date().toISOString();
  return {
    workerId, host: 'h', tags: [], cores: 2, slots: 8, running: 0, runningExecutionIds: [], avgDurationMs5m: 0, draining: false, version: '1', startedAt, at: now,
    ...(teams === undefined ? {} : { teams }),
  };
}

const register = (w: WorkerRegistration): Promise<void> => publishRegistration(t.redis.redis, redisKeys(t.namespace), w, 60_000);
const stateOf = async (id: string): Promise<string | undefined> => (await t.call('GET', '/api/v1/workers')).body.items.find((w: any) => w.id === id)?.state;

beforeAll(async () => {
  t = await startTestApp();
  for (const name of ['a', 'b']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  opA = await addToken(t.pool, 'op-a', 'operator', ['a']);
  viewerB = await addToken(t.pool, 'viewer-b', 'viewer', ['b']);
});

afterAll(async () => {
  await t.close();
});

describe('drain and undrain (ADMIN-API "Workers")', () => {
  it('undrain routes work to a drained worker again; both are audited', async () => {
    await register(entry('w-undrain', '2026-12-07T10:00:00.000Z'));
    expect((await t.call('POST', '/api/v1/workers/w-undrain/drain', { token: t.tokens.operator })).body).toEqual({ id: 'w-undrain', state: 'draining' });
    expect(await stateOf('w-undrain')).toBe('draining');
    const undrained = await t.call('POST', '/api/v1/workers/w-undrain/undrain', { token: t.tokens.operator });
    expect(undrained.status).toBe(200);
    expect(undrained.body).toEqual({ id: 'w-undrain', state: 'active' });
    expect(await stateOf('w-undrain')).toBe('active');
    expect((await t.call('POST', '/api/v1/workers/w-undrain/undrain', { token: t.tokens.viewer })).status).toBe(403);
    expect((await t.call('POST', '/api/v1/workers/ghost/undrain', { token: t.tokens.operator })).status).toBe(404);
    const audit = await t.call('GET', '/api/v1/audit?limit=50');
    const actions = audit.body.items.filter((e: any) => e.target === 'worker:w-undrain').map((e: any) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['worker.drain', 'worker.undrain']));
  });

  it('a drain ends with the drained process: the worker started again under the same id is active', async () => {
    await register(entry('w-restart', '2026-12-07T10:00:00.000Z'));
    expect((await t.call('POST', '/api/v1/workers/w-restart/drain', { token: t.tokens.operator })).status).toBe(200);
    expect(await stateOf('w-restart')).toBe('draining');
    // "drain, then restart" (docs/runbook.md): the new process registers with its own start time.
    await register(entry('w-restart', '2026-12-07T10:05:00.000Z'));
    expect(await stateOf('w-restart')).toBe('active');
  });

  it("a team's operator drains its team's own worker, not a shared one nor another team's", async () => {
    await register(entry('w-shared', '2026-12-07T10:00:00.000Z'));
    await register(entry('w-of-a', '2026-12-07T10:00:00.000Z', ['a']));
    await register(entry('w-of-b', '2026-12-07T10:00:00.000Z', ['b']));
    expect((await t.call('POST', '/api/v1/workers/w-of-a/drain', { token: opA })).status).toBe(200);
    expect((await t.call('POST', '/api/v1/workers/w-of-a/undrain', { token: opA })).status).toBe(200);
    const shared = await t.call('POST', '/api/v1/workers/w-shared/drain', { token: opA });
    expect(shared.status).toBe(403);
    expect(shared.body.error.message).toContain('every team');
    // Another team's worker is not seen at all: the same 404 as no worker.
    expect((await t.call('POST', '/api/v1/workers/w-of-b/drain', { token: opA })).status).toBe(404);
    expect(await stateOf('w-of-b')).toBe('active');
  });
});

describe('the pause says since, by and why', () => {
  it('pause with a reason: GET /dispatch and GET /status show it; resume clears the reason', async () => {
    const paused = await t.call('POST', '/api/v1/dispatch/pause', { body: { reason: 'MySQL maintenance until 02:00' } });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ paused: true, reason: 'MySQL maintenance until 02:00', by: expect.any(String), since: expect.any(String) });
    const since = paused.body.since;
    // Pausing again keeps since, and replaces the reason.
    const again = await t.call('POST', '/api/v1/dispatch/pause', { body: { reason: 'still' } });
    expect(again.body).toMatchObject({ paused: true, reason: 'still', since });
    expect((await t.call('GET', '/api/v1/dispatch', { token: t.tokens.viewer })).body).toMatchObject({ paused: true, reason: 'still', since });
    expect((await t.call('GET', '/api/v1/status', { token: viewerB })).body.dispatch).toMatchObject({ paused: true, reason: 'still' });
    const bad = await t.call('POST', '/api/v1/dispatch/pause', { body: { reason: '' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues[0].path).toBe('reason');
    const resumed = await t.call('POST', '/api/v1/dispatch/resume');
    expect(resumed.body.paused).toBe(false);
    expect(resumed.body.reason).toBeUndefined();
    const audit = await t.call('GET', '/api/v1/audit?limit=50');
    expect(audit.body.items.find((e: any) => e.action === 'dispatch.pause')?.after).toMatchObject({ paused: true, reason: 'still' });
  });
});

describe('GET /status, for the token\'s teams', () => {
  it('counts live and draining workers, the backlog with its oldest due age, and late runs', async () => {
    expect((await t.call('POST', '/api/v1/tasks', { token: opA, body: taskDef('a_status', { team: 'a' }) })).status).toBe(201);
    const now = Date.now();
    const at = (msAgo: number): string => new Date(now - msAgo).toISOString();
    const today = new Date(now).toISOString().slice(0, 10);
    const held = [
      await insertInstance(t.pool, { task: 'a_status', expected: at(5_000), bizDate: today, state: 'PENDING' }),
      await insertInstance(t.pool, { task: 'a_status', expected: at((LATE_AFTER_SECONDS + 120) * 1_000), bizDate: today, state: 'PENDING' }),
    ];
    // a PENDING row the backlog scan has not found held: not counted
    await insertInstance(t.pool, { task: 'a_status', expected: at(1_000), bizDate: today, state: 'PENDING' });
    await t.pool.query("UPDATE task_instance SET team = 'a' WHERE task_name = 'a_status'");
    await t.pool.query("UPDATE task_instance SET waiting_reason = 'NO_WORKER', waiting_since = due_at WHERE id IN (?)", [held]);

    const mine = await t.call('GET', '/api/v1/status', { token: opA });
    expect(mine.status).toBe(200);
    expect(mine.body.backlog.waiting).toBe(2);
    expect(mine.body.backlog.oldestDueSeconds).toBeGreaterThanOrEqual(LATE_AFTER_SECONDS + 120);
    expect(mine.body.late).toBe(1);
    // Team b sees none of team a's backlog, nor team a's own worker.
    const other = await t.call('GET', '/api/v1/status', { token: viewerB });
    expect(other.body).toMatchObject({ backlog: { waiting: 0, oldestDueSeconds: 0 }, late: 0 });

    const all = await t.call('GET', '/api/v1/status');
    const listed = (await t.call('GET', '/api/v1/workers')).body.items;
    expect(all.body.workers).toEqual({ live: listed.length, draining: listed.filter((w: any) => w.state === 'draining').length });
    const seenByB = (await t.call('GET', '/api/v1/workers', { token: viewerB })).body.items;
    expect(other.body.workers.live).toBe(seenByB.length);
    expect(seenByB.map((w: any) => w.id)).not.toContain('w-of-a');
    expect((await t.call('GET', '/api/v1/status', { token: null })).status).toBe(401);
  });
});
