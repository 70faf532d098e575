/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * The task fields of issue #22 through the API: `jitterSeconds`, `pauseAfterFailures` and
 * `sla` are stored and shown as sent, a GET → PUT round trip keeps them (the read-only
 * `pausedReason` included), bad values are 400 naming the field, and enabling a task paused by
 * its failures clears `pausedReason`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const issuesOf = (body: { error: { details: { issues: Array<{ path: string; message: string }> } } }): Array<{ path: string; message: string }> => body.error.details.issues;

describe('jitterSeconds, pauseAfterFailures, sla', () => {
  it('creates, shows and round-trips them; defaults are 0 / null / null', async () => {
    const fields = { jitterSeconds: 30, pauseAfterFailures: 3, sla: { startWithinSeconds: 60, finishWithinSeconds: 3_600 } };
    const created = await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('sched_fields', fields) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ ...fields, pausedReason: null });
    const plain = await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('sched_plain') });
    expect(plain.body).toMatchObject({ jitterSeconds: 0, pauseAfterFailures: null, sla: null, pausedReason: null });

    const read = await t.call('GET', '/api/v1/tasks/sched_fields', { token: t.tokens.operator });
    const put = await t.call('PUT', '/api/v1/tasks/sched_fields', { token: t.tokens.operator, body: { ...read.body, jitterSeconds: 10, sla: { finishWithinSeconds: 120 } } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ jitterSeconds: 10, pauseAfterFailures: 3, sla: { finishWithinSeconds: 120 }, version: 2 });
    expect(put.body.sla.startWithinSeconds).toBeUndefined();
  });

  it('refuses bad values with 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ jitterSeconds: -1 }, 'jitterSeconds', 'must be at least 0'],
      [{ jitterSeconds: 7_200 }, 'jitterSeconds', 'must be at most 3600'],
      [{ jitterSeconds: 60, maxLatenessSeconds: 30 }, 'jitterSeconds', 'must be less than maxLatenessSeconds (30)'],
      [{ pauseAfterFailures: 0 }, 'pauseAfterFailures', 'must be at least 1'],
      [{ sla: {} }, 'sla', 'must name startWithinSeconds, finishWithinSeconds or both'],
      [{ sla: { finishWithinSeconds: 'soon' } }, 'sla.finishWithinSeconds', 'expected a number'],
    ];
    for (const [fields, path, message] of cases) {
      const res = await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('sched_bad', fields) });
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect(issuesOf(res.body)).toEqual(expect.arrayContaining([expect.objectContaining({ path, message: expect.stringContaining(message) })]));
    }
    expect((await t.call('GET', '/api/v1/tasks/sched_bad', { token: t.tokens.viewer })).status).toBe(404);
  });

  it('shows pausedReason FAILURES on a task paused by its failures; enable clears it', async () => {
    await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('sched_paused', { pauseAfterFailures: 2 }) });
    // What the broker's conditional write leaves (store task-pause.ts, tested on real services there).
    await t.pool.query(`UPDATE task SET enabled = 0, paused_reason = 'FAILURES', version = version + 1 WHERE name = 'sched_paused'`);
    const paused = await t.call('GET', '/api/v1/tasks/sched_paused', { token: t.tokens.viewer });
    expect(paused.body).toMatchObject({ enabled: false, pausedReason: 'FAILURES' });
    const enabled = await t.call('POST', '/api/v1/tasks/sched_paused/enable', { token: t.tokens.operator });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ enabled: true, pausedReason: null });
  });
});
