/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * #45, docs/teams.md "Instances and moved tasks": an instance belongs to the team its task had
 * when the instance was made. A task moved from `pay` to `ord` leaves its earlier run with `pay`:
 * every read that scopes instances (list, detail, logs of the instance and of its execution,
 * rerun batches) answers by that team, and no team sees the other's run. Re-running the earlier
 * run runs the task as it is now (`ord`'s), so a token of `pay` alone is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addToken, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let pay: string;
let ord: string;
let oldId: string;
let newId: string;
const executionId = '0190c2d4-0000-7000-8000-00000000a045';

beforeAll(async () => {
  t = await startTestApp();
  for (const name of ['pay', 'ord']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  pay = await addToken(t.pool, 'operator-pay', 'operator', ['pay']);
  ord = await addToken(t.pool, 'operator-ord', 'operator', ['ord']);
  expect((await t.call('POST', '/api/v1/tasks', { body: taskDef('mover', { team: 'pay' }) })).status).toBe(201);
  const before = await t.call('POST', '/api/v1/tasks/mover/trigger', { token: pay });
  expect(before.status).toBe(202);
  oldId = String(before.body.id);
  // The earlier run ended FAILED on a worker: one execution, the instance's current one.
  await t.pool.query(
    `INSERT INTO task_execution (execution_id, instance_id, attempt, run_no, worker_id, state, ended_at) VALUES (?, ?, 1, 1, 'w-1', 'FAILED', NOW(3))`,
    [executionId, oldId],
  );
  await t.pool.query("UPDATE task_instance SET state = 'FAILED', current_execution_id = ?, ended_at = NOW(3) WHERE id = ?", [executionId, oldId]);
  const task = await t.call('GET', '/api/v1/tasks/mover');
  const moved = await t.call('PUT', '/api/v1/tasks/mover', { body: { ...taskDef('mover', { team: 'ord' }), version: task.body.version } });
  expect([moved.status, moved.body.team]).toEqual([200, 'ord']);
  const after = await t.call('POST', '/api/v1/tasks/mover/trigger', { token: ord });
  expect(after.status).toBe(202);
  newId = String(after.body.id);
});

afterAll(async () => {
  await t?.close();
});

const ids = (res: { body: any }): string[] => res.body.items.map((i: any) => String(i.id));

describe('#45 a moved task\'s earlier runs stay with the team they were made for', () => {
  it('each run carries the team its task had when it was made', async () => {
    const [rows] = await t.pool.query<any[]>('SELECT id, team FROM task_instance ORDER BY id');
    expect(rows.map((r) => [String(r.id), r.team])).toEqual([
      [oldId, 'pay'],
      [newId, 'ord'],
    ]);
    expect(ids(await t.call('GET', '/api/v1/instances?team=pay'))).toEqual([oldId]);
    expect(ids(await t.call('GET', '/api/v1/instances?team=ord'))).toEqual([newId]);
    expect((await t.call('GET', `/api/v1/instances/${oldId}`)).body.team).toBe('pay');
  });

  it('the old team lists, opens and reads the logs of the earlier run only', async () => {
    expect(ids(await t.call('GET', '/api/v1/instances', { token: pay }))).toEqual([oldId]);
    expect(ids(await t.call('GET', '/api/v1/instances?state=FAILED', { token: pay }))).toEqual([oldId]);
    expect(ids(await t.call('GET', '/api/v1/instances?task=mover', { token: pay }))).toEqual([oldId]);
    expect(ids(await t.call('GET', '/api/v1/instances?team=ord', { token: pay }))).toEqual([]);
    const detail = await t.call('GET', `/api/v1/instances/${oldId}`, { token: pay });
    expect([detail.status, detail.body.team]).toEqual([200, 'pay']);
    expect((await t.call('GET', `/api/v1/instances/${oldId}/log`, { token: pay })).status).toBe(200);
    expect((await t.call('GET', `/api/v1/executions/${executionId}/log`, { token: pay })).status).toBe(200);
    expect((await t.call('GET', `/api/v1/instances/${newId}`, { token: pay })).status).toBe(404);
    expect((await t.call('GET', `/api/v1/instances/${newId}/log`, { token: pay })).status).toBe(404);
  });

  it('the new team sees the runs made after the move only', async () => {
    expect(ids(await t.call('GET', '/api/v1/instances', { token: ord }))).toEqual([newId]);
    expect(ids(await t.call('GET', '/api/v1/instances?task=mover', { token: ord }))).toEqual([newId]);
    expect(ids(await t.call('GET', '/api/v1/instances?state=FAILED', { token: ord }))).toEqual([]);
    expect((await t.call('GET', `/api/v1/instances/${newId}`, { token: ord })).body.team).toBe('ord');
    for (const path of [`/api/v1/instances/${oldId}`, `/api/v1/instances/${oldId}/log`, `/api/v1/executions/${executionId}/log`]) {
      expect([path, (await t.call('GET', path, { token: ord })).status]).toEqual([path, 404]);
    }
    const rerun = await t.call('POST', '/api/v1/reruns', { token: ord, body: { mode: 'instance', instanceId: oldId, reason: 'not ours' } });
    expect(rerun.status).toBe(404);
  });

  it('re-running the earlier run needs the task\'s team now too; the run stays with the old team', async () => {
    const body = { mode: 'instance', instanceId: oldId, reason: 'retry the old run' };
    const dry = await t.call('POST', '/api/v1/reruns', { token: pay, body: { ...body, dryRun: true } });
    expect([dry.status, dry.body.forbiddenTeams]).toEqual([200, ['ord']]);
    const refused = await t.call('POST', '/api/v1/reruns', { token: pay, body });
    expect([refused.status, refused.body.error.code, refused.body.error.details.teams]).toEqual([403, 'FORBIDDEN', ['ord']]);
    expect((await t.call('GET', `/api/v1/instances/${oldId}`)).body.runNo).toBe(1);

    const done = await t.call('POST', '/api/v1/reruns', { body });
    expect(done.status).toBe(202);
    const rerun = await t.call('GET', `/api/v1/instances/${oldId}`, { token: pay });
    expect([rerun.status, rerun.body.runNo, rerun.body.team]).toEqual([200, 2, 'pay']);
    const batch = String(done.body.batchId);
    expect((await t.call('GET', `/api/v1/reruns/${batch}`, { token: pay })).status).toBe(200);
    expect((await t.call('GET', `/api/v1/reruns/${batch}`, { token: ord })).status).toBe(404);
    expect(ids(await t.call('GET', '/api/v1/instances', { token: ord }))).toEqual([newId]);
  });

  it('a row without a team (written by a build before migration 0010) follows its task\'s team now', async () => {
    const [result] = await t.pool.query<any>(
      `INSERT INTO task_instance (task_id, task_name, team, expected_time, biz_date, \`trigger\`, state, due_at, params)
       SELECT id, name, NULL, '2026-01-01 00:00:00', '2026-01-01', 'schedule', 'SUCCESS', '2026-01-01 00:00:00', '{}' FROM task WHERE name = 'mover'`,
    );
    const legacyId = String(result.insertId);
    expect(ids(await t.call('GET', '/api/v1/instances', { token: ord }))).toEqual([legacyId, newId]);
    expect(ids(await t.call('GET', '/api/v1/instances?team=ord'))).toEqual([legacyId, newId]);
    expect(ids(await t.call('GET', '/api/v1/instances', { token: pay }))).toEqual([oldId]);
    expect((await t.call('GET', `/api/v1/instances/${legacyId}`, { token: pay })).status).toBe(404);
    expect((await t.call('GET', `/api/v1/instances/${legacyId}`, { token: ord })).body.team).toBe('ord');
  });
});
