/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/**
 * ADMIN-API.md "Secrets": an exported task shows literal secret values (`exec.env` of shell
 * tasks, `exec.headers` of http tasks) as `"***"`; importing or PUTting `"***"` back keeps the
 * stored value. A `"***"` with no stored literal value behind it is refused (400, the field).
 * The stored value is read from the `task` row itself, not from the API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** The fields of a task resource that are not part of a definition (an export leaves them out). */
const RESOURCE_ONLY = ['version', 'createdAt', 'updatedAt', 'nextFireTime', 'lastFireTime', 'skippedCount', 'coalescedCount', 'pausedReason', 'calendarSkippedCount', 'managedBy'];

const shellTask = (name: string): Record<string, unknown> =>
  taskDef(name, { exec: { type: 'shell', command: ['run.sh'], env: { DB_PASSWORD: 'env-secret-1', API_KEY: { secretRef: 'ORDERS_KEY' }, MODE: 'full' } } });
const httpTask = (name: string): Record<string, unknown> =>
  taskDef(name, { exec: { type: 'http', url: 'http://orders.internal:8080/x', headers: { Authorization: 'Bearer header-secret-1', 'X-Ref': { secretRef: 'ORDERS_KEY' } } } });

/** The stored `exec` of a task, straight from its row. */
async function storedExec(name: string): Promise<any> {
  const [rows] = await t.pool.query<any[]>('SELECT exec FROM task WHERE name = ?', [name]);
  const exec = rows[0]?.exec;
  return typeof exec === 'string' ? JSON.parse(exec) : exec;
}

async function storedVersion(name: string): Promise<number | undefined> {
  const [rows] = await t.pool.query<any[]>('SELECT version FROM task WHERE name = ?', [name]);
  return rows[0] === undefined ? undefined : Number(rows[0].version);
}

async function create(def: Record<string, unknown>): Promise<void> {
  const res = await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: def });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

/** The export of a task: its definition with literal secret values shown as `"***"`. */
async function exported(name: string): Promise<Record<string, unknown>> {
  const res = await t.call('GET', `/api/v1/tasks/${name}`, { token: t.tokens.viewer });
  expect(res.status).toBe(200);
  return Object.fromEntries(Object.entries(res.body as Record<string, unknown>).filter(([k]) => !RESOURCE_ONLY.includes(k)));
}

const importYaml = (yaml: string): ReturnType<TestApp['call']> =>
  t.call('POST', '/api/v1/tasks/import', { token: t.tokens.operator, raw: yaml, contentType: 'application/yaml' });

const issues = (body: any): Array<{ path: string; message: string }> => body.error.details.issues as Array<{ path: string; message: string }>;

describe('an exported task imported back keeps its stored secrets', () => {
  it('exports literal env and header values as "***" (what the import gets back)', async () => {
    await create(shellTask('sec_export_shell'));
    await create(httpTask('sec_export_http'));
    expect(((await exported('sec_export_shell')).exec as any).env).toEqual({ DB_PASSWORD: '***', API_KEY: { secretRef: 'ORDERS_KEY' }, MODE: '***' });
    expect(((await exported('sec_export_http')).exec as any).headers).toEqual({ Authorization: '***', 'X-Ref': { secretRef: 'ORDERS_KEY' } });
  });

  it('an edited export imported as YAML keeps the stored env and header values, not "***"', async () => {
    await create(shellTask('sec_yaml_shell'));
    await create(httpTask('sec_yaml_http'));
    const docs = [await exported('sec_yaml_shell'), await exported('sec_yaml_http')].map((d) => stringify({ ...d, description: 'edited' }));
    expect(docs.join('')).toContain('"***"');
    const res = await importYaml(docs.join('---\n'));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ created: [], updated: ['sec_yaml_shell', 'sec_yaml_http'], unchanged: [] });
    expect((await storedExec('sec_yaml_shell')).env).toEqual({ DB_PASSWORD: 'env-secret-1', API_KEY: { secretRef: 'ORDERS_KEY' }, MODE: 'full' });
    expect((await storedExec('sec_yaml_http')).headers).toEqual({ Authorization: 'Bearer header-secret-1', 'X-Ref': { secretRef: 'ORDERS_KEY' } });
  });

  it('an edited export imported as JSON text keeps the stored env and header values, not "***"', async () => {
    await create(shellTask('sec_json_shell'));
    await create(httpTask('sec_json_http'));
    for (const name of ['sec_json_shell', 'sec_json_http']) {
      const res = await importYaml(JSON.stringify({ ...(await exported(name)), priority: 8 }));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.updated).toEqual([name]);
    }
    expect((await storedExec('sec_json_shell')).env).toEqual({ DB_PASSWORD: 'env-secret-1', API_KEY: { secretRef: 'ORDERS_KEY' }, MODE: 'full' });
    expect((await storedExec('sec_json_http')).headers).toEqual({ Authorization: 'Bearer header-secret-1', 'X-Ref': { secretRef: 'ORDERS_KEY' } });
  });

  it('an untouched export imported back is unchanged: no new version, secrets as stored', async () => {
    await create(shellTask('sec_same'));
    const res = await importYaml(stringify(await exported('sec_same')));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ created: [], updated: [], unchanged: ['sec_same'] });
    expect(await storedVersion('sec_same')).toBe(1);
    expect((await storedExec('sec_same')).env.DB_PASSWORD).toBe('env-secret-1');
  });

  it('a new value next to a "***" is taken, the "***" keeps the stored one', async () => {
    await create(shellTask('sec_mixed'));
    const doc = await exported('sec_mixed');
    const exec = doc.exec as { env: Record<string, unknown> };
    const res = await importYaml(stringify({ ...doc, exec: { ...exec, env: { ...exec.env, MODE: 'delta', EXTRA: 'new-literal' } } }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await storedExec('sec_mixed')).env).toEqual({ DB_PASSWORD: 'env-secret-1', API_KEY: { secretRef: 'ORDERS_KEY' }, MODE: 'delta', EXTRA: 'new-literal' });
  });
});

describe('an exported task PUT back keeps its stored secrets', () => {
  it('a PUT of the redacted resource keeps the stored env and header values, not "***"', async () => {
    await create(shellTask('sec_put_shell'));
    await create(httpTask('sec_put_http'));
    for (const name of ['sec_put_shell', 'sec_put_http']) {
      const redacted = await t.call('GET', `/api/v1/tasks/${name}`, { token: t.tokens.viewer });
      const res = await t.call('PUT', `/api/v1/tasks/${name}`, { token: t.tokens.operator, body: { ...redacted.body, description: 'edited' } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    expect((await storedExec('sec_put_shell')).env).toEqual({ DB_PASSWORD: 'env-secret-1', API_KEY: { secretRef: 'ORDERS_KEY' }, MODE: 'full' });
    expect((await storedExec('sec_put_http')).headers).toEqual({ Authorization: 'Bearer header-secret-1', 'X-Ref': { secretRef: 'ORDERS_KEY' } });
  });
});

describe('a "***" with no stored value behind it is refused, naming the field', () => {
  const masked = (name: string): Record<string, unknown> => taskDef(name, { exec: { type: 'shell', command: ['run.sh'], env: { DB_PASSWORD: '***' } } });

  it('creating a new task with "***" answers 400 naming exec.env.DB_PASSWORD and stores nothing', async () => {
    const res = await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: masked('sec_new_post') });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(issues(res.body).map((i) => i.path)).toEqual(['exec.env.DB_PASSWORD']);
    expect(issues(res.body)[0]?.message).toMatch(/^exec\.env\.DB_PASSWORD: /);
    expect(await storedVersion('sec_new_post')).toBeUndefined();
  });

  it('importing a new task with "***" answers 400 naming the field and the task; the whole import is refused', async () => {
    await create(shellTask('sec_new_import_peer'));
    const peer = stringify({ ...(await exported('sec_new_import_peer')), description: 'edited' });
    const header = stringify(taskDef('sec_new_import_http', { exec: { type: 'http', url: 'http://orders.internal:8080/x', headers: { 'X-Api-Key': '***' } } }));
    const res = await importYaml([peer, stringify(masked('sec_new_import')), header].join('---\n'));
    expect(res.status).toBe(400);
    expect(issues(res.body).map((i) => i.path)).toEqual(['exec.env.DB_PASSWORD', 'exec.headers.X-Api-Key']);
    expect(issues(res.body)[0]?.message).toContain('"sec_new_import"');
    expect(issues(res.body)[1]?.message).toContain('"sec_new_import_http"');
    expect(await storedVersion('sec_new_import')).toBeUndefined();
    expect(await storedVersion('sec_new_import_http')).toBeUndefined();
    expect(await storedVersion('sec_new_import_peer')).toBe(1);
  });

  it('a "***" for a key the stored task lacks, or holds as a secretRef, answers 400 by PUT and by import; the row is untouched', async () => {
    await create(shellTask('sec_no_literal'));
    const doc = await exported('sec_no_literal');
    const exec = doc.exec as { env: Record<string, unknown> };
    const bad = { ...doc, exec: { ...exec, env: { ...exec.env, API_KEY: '***', NEW_ONE: '***' } } };
    const put = await t.call('PUT', '/api/v1/tasks/sec_no_literal', { token: t.tokens.operator, body: { ...bad, version: 1 } });
    expect(put.status).toBe(400);
    expect(issues(put.body).map((i) => i.path)).toEqual(['exec.env.API_KEY', 'exec.env.NEW_ONE']);
    const imported = await importYaml(stringify(bad));
    expect(imported.status).toBe(400);
    expect(issues(imported.body).map((i) => i.path)).toEqual(['exec.env.API_KEY', 'exec.env.NEW_ONE']);
    expect(await storedVersion('sec_no_literal')).toBe(1);
    expect((await storedExec('sec_no_literal')).env).toEqual({ DB_PASSWORD: 'env-secret-1', API_KEY: { secretRef: 'ORDERS_KEY' }, MODE: 'full' });
  });

  it('a "***" header on a task stored as shell (the exec type changed) answers 400 naming the header', async () => {
    await create(shellTask('sec_type_changed'));
    const body = { ...httpTask('sec_type_changed'), exec: { type: 'http', url: 'http://orders.internal:8080/x', headers: { Authorization: '***' } }, version: 1 };
    const put = await t.call('PUT', '/api/v1/tasks/sec_type_changed', { token: t.tokens.operator, body });
    expect(put.status).toBe(400);
    expect(issues(put.body).map((i) => i.path)).toEqual(['exec.headers.Authorization']);
    expect((await storedExec('sec_type_changed')).type).toBe('shell');
  });
});
