/**
 * `axctl instances get` and `list` say why a due instance waits (ADMIN-API.md "Waiting
 * instances", #45), against the real admin API; the reason is written by the store's own write
 * of the brokers' backlog scan (`writeWaitingChanges`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction, writeWaitingChanges } from '@ax/store';
import { axctlIn, insertInstance, json, startApp, taskDef, type TestApp } from './axctl.test-helper.js';

let t: TestApp;
let held = '';
let free = '';
const MESSAGE = 'no live worker of team default offers tag(s) gpu of its tags [gpu]';

beforeAll(async () => {
  t = await startApp();
  expect((await t.call('POST', '/api/v1/tasks', { body: taskDef('cli_wait', { block: 'parallel', tags: ['gpu'] }) })).status).toBe(201);
  held = await insertInstance(t.pool, { task: 'cli_wait', expected: '2026-11-01T02:00:00.000Z', bizDate: '2026-11-01', state: 'PENDING' });
  free = await insertInstance(t.pool, { task: 'cli_wait', expected: '2026-11-02T02:00:00.000Z', bizDate: '2026-11-02', state: 'PENDING' });
  await withTransaction(t.pool, (conn) => writeWaitingChanges(conn, [{ id: held, state: 'PENDING', from: null, to: 'NO_WORKER', message: MESSAGE }]));
});
afterAll(async () => {
  await t?.close();
});

describe('axctl and waiting', () => {
  it('instances get prints the reason, since when and the cause; "-" when not held; --json has the API field', async () => {
    const r = await axctlIn(t, ['instances', 'get', held]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines).toContain(`waiting:   NO_WORKER since 2026-11-01T02:00:00.000Z: ${MESSAGE}`);
    const other = await axctlIn(t, ['instances', 'get', free]);
    expect(other.lines).toContain('waiting:   -');
    const j = json<{ waiting: unknown }>(await axctlIn(t, ['instances', 'get', held, '--json']));
    expect(j.waiting).toEqual({ reason: 'NO_WORKER', since: '2026-11-01T02:00:00.000Z', message: MESSAGE });
  });

  it('instances list has a WAITING column with the reason', async () => {
    const r = await axctlIn(t, ['instances', 'list', '--task', 'cli_wait']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines[0]).toMatch(/\bSTATE\s+WAITING\b/);
    const row = (id: string) => r.lines.find((l) => l.trim().startsWith(`${id} `)) ?? '';
    expect(row(held)).toMatch(/PENDING\s+NO_WORKER\s/);
    expect(row(free)).toMatch(/PENDING\s+-\s/);
  });
});
