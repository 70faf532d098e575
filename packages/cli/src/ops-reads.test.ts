/**
 * `axctl alerts list`, `axctl dead-letters list` and `axctl audit list` (#47: every console
 * action in axctl) against the real admin API (in-process, its own test database): alerts and
 * dead letters written through the store as the broker writes them, audit entries made by
 * real API writes; filters reach the API, tables show what it answered, --json passes it on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertDeadLetter, raiseAlert } from '@ax/store';
/* eslint-disable-next-line import-x/no-relative-packages -- test harness: tokens of one team, stored as the admin API's tests store them */
import { addToken } from '../../../services/admin-api/src/harness.test-helper.js';
import { axctlIn, json, killLeftovers, startApp, taskDef, type TestApp } from './axctl.test-helper.js';

let t: TestApp;

beforeAll(async () => {
  t = await startApp();
  expect((await t.call('POST', '/api/v1/tasks', { body: taskDef('ops_nightly') })).status).toBe(201);
  await raiseAlert(t.pool, { kind: 'FINAL_FAILURE', severity: 'critical', taskName: 'ops_nightly', instanceId: '41', message: 'instance 41 of ops_nightly FAILED' });
  await raiseAlert(t.pool, { kind: 'LOST_WORKER', severity: 'warning', workerId: 'w-gone', message: 'worker w-gone lost' });
  await insertDeadLetter(t.pool, { sourceQueue: 'ax.results', reason: 'schema: executionId missing', payload: '{"kind":"result"}', headers: { 'x-death': 1 } });
  expect((await t.call('POST', '/api/v1/tasks/ops_nightly/disable', { body: { reason: 'maintenance window' } })).status).toBe(200);
});

afterAll(async () => {
  expect(killLeftovers()).toBe(0);
  await t?.close();
});

describe('axctl alerts list', () => {
  it('lists newest first with the delivery state, and passes its filters to the API', async () => {
    const all = await axctlIn(t, ['alerts', 'list']);
    expect(all.code, all.stderr).toBe(0);
    expect(all.lines[0]).toMatch(/^\s*ID\s+AT\s+KIND\s+SEVERITY\s+TEAM\s+TASK\s+INSTANCE\s+WORKER\s+DELIVERY\s+MESSAGE$/);
    expect(all.lines.slice(1).map((l) => l.trim().split(/\s{2,}/)[2])).toEqual(['LOST_WORKER', 'FINAL_FAILURE']);
    expect(all.lines[2]).toMatch(/FINAL_FAILURE\s+critical\s+default\s+ops_nightly\s+41\s+-\s+pending\s+instance 41 of ops_nightly FAILED$/);

    const critical = await axctlIn(t, ['alerts', 'list', '--severity', 'critical', '--json']);
    expect(json<{ items: Array<{ kind: string }> }>(critical).items.map((a) => a.kind)).toEqual(['FINAL_FAILURE']);
    const byKind = await axctlIn(t, ['alerts', 'list', '--kind', 'lost_worker', '--json']);
    expect(json<{ items: Array<{ workerId: string }> }>(byKind).items.map((a) => a.workerId)).toEqual(['w-gone']);
    const byTask = await axctlIn(t, ['alerts', 'list', '--task', 'ops_nightly', '--limit', '1', '--json']);
    expect(json<{ items: unknown[]; nextCursor: string | null }>(byTask)).toMatchObject({ items: [{ taskName: 'ops_nightly' }], nextCursor: null });
    const future = await axctlIn(t, ['alerts', 'list', '--from', '2999-01-01']);
    expect(future.lines).toHaveLength(1); // the heading alone
  });

  it('a bad filter is a usage error naming the option; a team token sees its team only', async () => {
    const bad = await axctlIn(t, ['alerts', 'list', '--severity', 'loud']);
    expect([bad.code, bad.errLines]).toEqual([2, ['axctl: --severity: expected critical or warning, got "loud"']]);
    const delivery = await axctlIn(t, ['alerts', 'list', '--delivery', 'lost']);
    expect([delivery.code, delivery.errLines]).toEqual([2, ['axctl: --delivery: expected one of pending, sent, failed, not_configured, got "lost"']]);
    await t.call('POST', '/api/v1/teams', { body: { name: 'opsother' } });
    const other = await addToken(t.pool, 'ops-other-viewer', 'viewer', ['opsother']);
    const seen = await axctlIn(t, ['alerts', 'list', '--json'], { token: other });
    expect(json<{ items: unknown[] }>(seen).items).toEqual([]);
  });
});

describe('axctl dead-letters list', () => {
  it('lists the messages set aside, with queue and reason; a team token is refused (exit 1)', async () => {
    const r = await axctlIn(t, ['dead-letters', 'list']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines[0]).toMatch(/^\s*ID\s+AT\s+QUEUE\s+REASON\s+PAYLOAD$/);
    expect(r.lines[1]).toMatch(/ax\.results\s+schema: executionId missing\s+\{"kind":"result"\}$/);
    expect(json<{ items: Array<{ headers: unknown }> }>(await axctlIn(t, ['dead-letters', 'list', '--json'])).items[0]?.headers).toEqual({ 'x-death': 1 });
    const team = await addToken(t.pool, 'ops-team-operator', 'operator', ['default']);
    const refused = await axctlIn(t, ['dead-letters', 'list'], { token: team });
    expect(refused.code).toBe(1);
    expect(refused.errLines[0]).toMatch(/^axctl: dead-letters list: .*403 FORBIDDEN.*; the token must cover every team \("\*"\)$/);
  });
});

describe('axctl audit list', () => {
  it('shows who did what with the changed values, filtered by actor and time; viewers are refused', async () => {
    const r = await axctlIn(t, ['audit', 'list', '--token', t.tokens.admin]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines[0]).toMatch(/^\s*ID\s+AT\s+ACTOR\s+ACTION\s+TARGET\s+TEAM\s+REASON\s+CHANGE$/);
    const disable = r.lines.find((l) => l.includes('task.disable'));
    expect(disable).toMatch(/task\.disable\s+task:ops_nightly\s+default\s+maintenance window\s+.*enabled: true → false/);
    expect(r.lines.some((l) => /task\.create\s+task:ops_nightly/.test(l))).toBe(true);

    const actor = json<{ items: Array<{ action: string; actor: { name: string } }> }>(await axctlIn(t, ['audit', 'list', '--actor', 'nobody', '--json'], { token: t.tokens.admin }));
    expect(actor.items).toEqual([]);
    const mine = json<{ items: Array<{ action: string; actor: { name: string } }> }>(await axctlIn(t, ['audit', 'list', '--json', '--limit', '1'], { token: t.tokens.admin }));
    expect(mine.items).toHaveLength(1);
    const future = await axctlIn(t, ['audit', 'list', '--from', '2999-01-01T00:00:00Z'], { token: t.tokens.admin });
    expect(future.lines).toHaveLength(1);
    const past = json<{ items: unknown[] }>(await axctlIn(t, ['audit', 'list', '--to', '2000-01-01', '--json'], { token: t.tokens.admin }));
    expect(past.items).toEqual([]);

    const viewer = await axctlIn(t, ['audit', 'list'], { token: t.tokens.viewer });
    expect(viewer.code).toBe(1);
    expect(viewer.errLines[0]).toMatch(/403 FORBIDDEN.*; the token needs a higher role$/);
  });
});
