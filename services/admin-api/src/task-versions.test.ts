/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/**
 * Task versions (#47, ADMIN-API.md): every save keeps its definition (who, when), the list is
 * newest first and paged, one version reads alone, a rollback saves an old definition as a new
 * version (audited `task.rollback`), viewers see stored secrets redacted and a rollback restores
 * the stored value, another team's task is not found, and instances name their version.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TASK_VERSIONS_KEPT } from '@ax/store';
import { addToken, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

async function create(def: Record<string, unknown>, token = t.tokens.operator): Promise<any> {
  const res = await t.call('POST', '/api/v1/tasks', { token, body: def });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function replace(name: string, changes: Record<string, unknown>, token = t.tokens.operator): Promise<any> {
  const current = (await t.call('GET', `/api/v1/tasks/${name}`, { token })).body;
  const res = await t.call('PUT', `/api/v1/tasks/${name}`, { token, body: { ...current, ...changes } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const versions = async (name: string, token = t.tokens.viewer, query = ''): Promise<any> => t.call('GET', `/api/v1/tasks/${name}/versions${query}`, { token });

describe('GET /tasks/{name}/versions', () => {
  it('lists every save newest first with version, at, actor and the definition; reads one; 404 for an unknown version', async () => {
    await create(taskDef('ver_list', { description: 'one' }));
    await replace('ver_list', { description: 'two' });
    await t.call('POST', '/api/v1/tasks/ver_list/disable', { token: t.tokens.operator });
    await t.call('POST', '/api/v1/tasks/ver_list/disable', { token: t.tokens.operator }); // a no-op: no version
    const res = await versions('ver_list');
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.items.map((v: any) => [v.version, v.actor, v.definition.description, v.definition.enabled])).toEqual([
      [3, 'operator-user', 'two', false],
      [2, 'operator-user', 'two', true],
      [1, 'operator-user', 'one', true],
    ]);
    expect(Date.parse(res.body.items[0].at)).toBeGreaterThanOrEqual(Date.parse(res.body.items[2].at));
    const one = await t.call('GET', '/api/v1/tasks/ver_list/versions/1', { token: t.tokens.viewer });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ version: 1, actor: 'operator-user', definition: { name: 'ver_list', description: 'one' } });
    expect((await t.call('GET', '/api/v1/tasks/ver_list/versions/9', { token: t.tokens.viewer })).status).toBe(404);
    const bad = await t.call('GET', '/api/v1/tasks/ver_list/versions/x', { token: t.tokens.viewer });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('task version');
  });

  it('pages with limit and cursor', async () => {
    await create(taskDef('ver_page'));
    for (const d of ['a', 'b', 'c']) await replace('ver_page', { description: d });
    const first = await versions('ver_page', t.tokens.viewer, '?limit=3');
    expect(first.body.items.map((v: any) => v.version)).toEqual([4, 3, 2]);
    const second = await versions('ver_page', t.tokens.viewer, `?limit=3&cursor=${first.body.nextCursor as string}`);
    expect(second.body).toMatchObject({ nextCursor: null });
    expect(second.body.items.map((v: any) => v.version)).toEqual([1]);
    expect((await versions('ver_page', t.tokens.viewer, '?cursor=bogus')).status).toBe(400);
  });

  it('a task saved before versions were recorded shows its current definition, and its next save keeps it', async () => {
    await create(taskDef('ver_old', { description: 'before 0015' }));
    await t.pool.query("DELETE tv FROM task_version tv JOIN task t ON t.id = tv.task_id WHERE t.name = 'ver_old'");
    const listed = await versions('ver_old');
    expect(listed.body.items.map((v: any) => [v.version, v.actor, v.definition.description])).toEqual([[1, null, 'before 0015']]);
    await replace('ver_old', { description: 'after' });
    const after = await versions('ver_old');
    expect(after.body.items.map((v: any) => [v.version, v.actor, v.definition.description])).toEqual([
      [2, 'operator-user', 'after'],
      [1, null, 'before 0015'],
    ]);
  });

  it(`keeps the newest ${TASK_VERSIONS_KEPT} versions of a task`, async () => {
    const created = await create(taskDef('ver_keep'));
    const [rows] = await t.pool.query<any[]>('SELECT id FROM task WHERE name = ?', [created.name]);
    const id = rows[0].id;
    // Older versions straight in the table (a hundred saves through the API would be slow), then one save prunes.
    const old = Array.from({ length: TASK_VERSIONS_KEPT + 5 }, (_, i) => i + 2);
    await t.pool.query('UPDATE task SET version = ? WHERE id = ?', [old.at(-1), id]);
    await t.pool.query('INSERT INTO task_version (task_id, version, definition, actor) VALUES ?', [
      old.map((v) => [id, v, JSON.stringify(taskDef('ver_keep')), 'seed']),
    ]);
    await replace('ver_keep', { description: 'newest' });
    const [kept] = await t.pool.query<any[]>('SELECT MIN(version) AS lo, MAX(version) AS hi, COUNT(*) AS n FROM task_version WHERE task_id = ?', [id]);
    expect([Number(kept[0].n), Number(kept[0].hi), Number(kept[0].lo)]).toEqual([TASK_VERSIONS_KEPT, old.at(-1)! + 1, old.at(-1)! + 2 - TASK_VERSIONS_KEPT]);
  });
});

describe('POST /tasks/{name}/rollback', () => {
  it('saves the old definition as a new version, audited task.rollback with the versions and the reason', async () => {
    await create(taskDef('ver_back', { description: 'good', priority: 5 }));
    await replace('ver_back', { description: 'bad', priority: 9 });
    const res = await t.call('POST', '/api/v1/tasks/ver_back/rollback', { token: t.tokens.operator, body: { version: 1, reason: 'bad deploy' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ name: 'ver_back', version: 3, description: 'good', priority: 5 });
    const listed = await versions('ver_back');
    expect(listed.body.items.map((v: any) => [v.version, v.definition.description])).toEqual([[3, 'good'], [2, 'bad'], [1, 'good']]);
    const audit = await t.call('GET', '/api/v1/audit?actor=operator-user', { token: t.tokens.admin });
    const entry = audit.body.items.find((e: any) => e.action === 'task.rollback' && e.target === 'task:ver_back');
    expect(entry).toMatchObject({ reason: 'bad deploy', before: { version: 2, description: 'bad' }, after: { version: 3, rolledBackTo: 1, description: 'good' } });
  });

  it('to the current definition: 200 with the task unchanged, no new version, nothing audited', async () => {
    await create(taskDef('ver_same'));
    const res = await t.call('POST', '/api/v1/tasks/ver_same/rollback', { token: t.tokens.operator, body: { version: 1 } });
    expect(res.status).toBe(200);
    expect(res.body.version).toBe(1);
    expect((await versions('ver_same')).body.items).toHaveLength(1);
    const audit = await t.call('GET', '/api/v1/audit?actor=operator-user', { token: t.tokens.admin });
    expect(audit.body.items.some((e: any) => e.action === 'task.rollback' && e.target === 'task:ver_same')).toBe(false);
  });

  it('404 for a version not kept, 400 without a version, 403 for a viewer', async () => {
    await create(taskDef('ver_err'));
    expect((await t.call('POST', '/api/v1/tasks/ver_err/rollback', { token: t.tokens.operator, body: { version: 7 } })).status).toBe(404);
    const missing = await t.call('POST', '/api/v1/tasks/ver_err/rollback', { token: t.tokens.operator, body: {} });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toContain('version');
    expect((await t.call('POST', '/api/v1/tasks/ver_err/rollback', { token: t.tokens.viewer, body: { version: 1 } })).status).toBe(403);
  });
});

describe('secrets in versions', () => {
  const env = (secret: string): Record<string, unknown> => ({ exec: { type: 'shell', command: ['run.sh'], env: { DB_PASSWORD: secret, KEY: { secretRef: 'K' } } } });

  it('viewers see stored values as "***", operators as stored; a rollback restores the stored value, not "***"', async () => {
    await create(taskDef('ver_secret', env('secret-v1')));
    await replace('ver_secret', env('secret-v2'));
    const viewer = await versions('ver_secret');
    expect(viewer.body.items.map((v: any) => v.definition.exec.env)).toEqual([
      { DB_PASSWORD: '***', KEY: { secretRef: 'K' } },
      { DB_PASSWORD: '***', KEY: { secretRef: 'K' } },
    ]);
    expect((await t.call('GET', '/api/v1/tasks/ver_secret/versions/1', { token: t.tokens.viewer })).body.definition.exec.env.DB_PASSWORD).toBe('***');
    const operator = await versions('ver_secret', t.tokens.operator);
    expect(operator.body.items[1].definition.exec.env.DB_PASSWORD).toBe('secret-v1');

    expect((await t.call('POST', '/api/v1/tasks/ver_secret/rollback', { token: t.tokens.operator, body: { version: 1 } })).status).toBe(200);
    const [rows] = await t.pool.query<any[]>("SELECT exec FROM task WHERE name = 'ver_secret'");
    const exec = typeof rows[0].exec === 'string' ? JSON.parse(rows[0].exec) : rows[0].exec;
    expect(exec.env).toEqual({ DB_PASSWORD: 'secret-v1', KEY: { secretRef: 'K' } });
  });
});

describe('team isolation', () => {
  it("another team's task, its versions and its rollback answer 404", async () => {
    await t.call('POST', '/api/v1/teams', { token: t.tokens.admin, body: { name: 'vera' } });
    await t.call('POST', '/api/v1/teams', { token: t.tokens.admin, body: { name: 'verb' } });
    const a = await addToken(t.pool, 'ver-a-op', 'operator', ['vera']);
    const b = await addToken(t.pool, 'ver-b-op', 'operator', ['verb']);
    await create(taskDef('ver_team_a', { team: 'vera' }), a);
    await replace('ver_team_a', { description: 'x' }, a);
    expect((await versions('ver_team_a', a)).body.items).toHaveLength(2);
    for (const call of [
      versions('ver_team_a', b),
      t.call('GET', '/api/v1/tasks/ver_team_a/versions/1', { token: b }),
      t.call('POST', '/api/v1/tasks/ver_team_a/rollback', { token: b, body: { version: 1 } }),
    ]) {
      const res = await call;
      expect(res.status).toBe(404);
      expect(JSON.stringify(res.body)).not.toContain('"x"');
    }
    expect((await t.call('GET', '/api/v1/tasks/ver_team_a', { token: a })).body.version).toBe(2);
  });

  it("a task moved to another team keeps its history, but the old team's versions stay hidden from the new team's tokens", async () => {
    await t.call('POST', '/api/v1/teams', { token: t.tokens.admin, body: { name: 'verc' } });
    await t.call('POST', '/api/v1/teams', { token: t.tokens.admin, body: { name: 'verd' } });
    const d = await addToken(t.pool, 'ver-d-op', 'operator', ['verd']);
    await create(taskDef('ver_moved', { team: 'verc', exec: { type: 'shell', command: ['run.sh'], env: { TOKEN: 'team-c-secret' } } }));
    await replace('ver_moved', { team: 'verd', exec: { type: 'shell', command: ['run.sh'] } });
    const seen = await versions('ver_moved', d);
    expect(seen.body.items.map((v: any) => [v.version, v.definition.team])).toEqual([[2, 'verd']]);
    expect(JSON.stringify(seen.body)).not.toContain('team-c-secret');
    expect((await t.call('GET', '/api/v1/tasks/ver_moved/versions/1', { token: d })).status).toBe(404);
    expect((await t.call('POST', '/api/v1/tasks/ver_moved/rollback', { token: d, body: { version: 1 } })).status).toBe(404);
    expect((await versions('ver_moved', t.tokens.admin)).body.items.map((v: any) => v.version)).toEqual([2, 1]);
  });
});

describe('instances name the version they were created from', () => {
  it('a trigger at version 2 shows taskVersion 2', async () => {
    await create(taskDef('ver_inst'));
    await replace('ver_inst', { description: 'v2' });
    const res = await t.call('POST', '/api/v1/tasks/ver_inst/trigger', { token: t.tokens.operator, body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.taskVersion).toBe(2);
    expect((await t.call('GET', `/api/v1/instances/${res.body.id as string}`, { token: t.tokens.viewer })).body.taskVersion).toBe(2);
  });
});
