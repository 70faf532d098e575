/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-return --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/** HTTP tests of every endpoint: success, 401, 403, 400 with field paths, 404 and the contract's 409s. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishRegistration } from '@ax/redis';
import { redisKeys } from '@ax/kit';
import { waitFor } from '@ax/testing';
import { API_ROUTES } from './app.js';
import { insertInstance, signedBy, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const issuePaths = (body: { error: { details: { issues: Array<{ path: string }> } } }): string[] => body.error.details.issues.map((i) => i.path);

async function count(table: string): Promise<number> {
  const [rows] = await t.pool.query<any[]>(`SELECT COUNT(*) AS n FROM ${table}`);
  return Number(rows[0].n);
}

describe('system', () => {
  it('serves healthz, readyz, metrics and the security headers without a token', async () => {
    const health = await t.call('GET', '/healthz', { token: null });
    expect(health.status).toBe(200);
    expect(health.headers.get('x-content-type-options')).toBe('nosniff');
    expect(health.headers.get('access-control-allow-origin')).toBeNull();
    const ready = await t.call('GET', '/readyz', { token: null });
    expect(ready.status).toBe(200);
    expect(ready.body.checks.map((c: { name: string }) => c.name).sort()).toEqual(['mysql', 'rabbitmq', 'redis']);
    const metrics = await t.call('GET', '/metrics', { token: null });
    expect(metrics.status).toBe(200);
    expect(String(metrics.body)).toContain('ax_admin_http_requests_total');
  });

  it('answers unknown paths with 404 NOT_FOUND in the error shape', async () => {
    const res = await t.call('GET', '/api/v1/nope');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    expect(res.body.error.details).toEqual({});
  });
});

describe('auth and tokens', () => {
  it('401 without or with an unknown token, 403 with too low a role; refusals are counted', async () => {
    expect((await t.call('GET', '/api/v1/tasks', { token: null })).status).toBe(401);
    const unknown = await t.call('GET', '/api/v1/tasks', { token: 'not-a-token-at-all' });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.code).toBe('UNAUTHENTICATED');
    const low = await t.call('POST', '/api/v1/tasks', { token: t.tokens.viewer, body: taskDef('x') });
    expect(low.status).toBe(403);
    expect(low.body.error.code).toBe('FORBIDDEN');
    const metrics = await t.call('GET', '/metrics', { token: null });
    expect(String(metrics.body)).toMatch(/ax_admin_auth_refused_total\{reason="FORBIDDEN"[^}]*\} [1-9]/);
  });

  it('creates a token (plaintext once, hash at rest) that works, and revokes it', async () => {
    expect((await t.call('POST', '/api/v1/tokens', { token: t.tokens.operator, body: { name: 'ci', role: 'viewer' } })).status).toBe(403);
    const bad = await t.call('POST', '/api/v1/tokens', { body: { name: '', role: 'root' } });
    expect(bad.status).toBe(400);
    expect(issuePaths(bad.body).sort()).toEqual(['name', 'role']);
    const created = await t.call('POST', '/api/v1/tokens', { body: { name: 'ci', role: 'viewer' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'ci', role: 'viewer' });
    const token = created.body.token as string;
    const [rows] = await t.pool.query<any[]>('SELECT token_hash FROM api_token WHERE id = ?', [created.body.id]);
    expect(rows[0].token_hash).not.toContain(token);
    expect((await t.call('GET', '/api/v1/tasks', { token })).status).toBe(200);
    expect((await t.call('DELETE', `/api/v1/tokens/${created.body.id}`, { token: t.tokens.operator })).status).toBe(403);
    expect((await t.call('DELETE', `/api/v1/tokens/${created.body.id}`)).status).toBe(204);
    expect((await t.call('GET', '/api/v1/tasks', { token })).status).toBe(401);
    expect((await t.call('DELETE', `/api/v1/tokens/${created.body.id}`)).status).toBe(404);
    expect((await t.call('DELETE', '/api/v1/tokens/999999', { token: null })).status).toBe(401);
  });
});

describe('roles on every endpoint', () => {
  it('401 without a token, 403 one role too low, on every role-protected route', async () => {
    const lower = { operator: t.tokens.viewer, admin: t.tokens.operator } as Record<string, string>;
    for (const route of API_ROUTES) {
      if (route.access !== 'viewer' && route.access !== 'operator' && route.access !== 'admin') continue;
      const path = route.path.replace(/\{[^}]+\}/g, 'x1');
      const method = route.method.toUpperCase();
      const body = route.method === 'get' ? {} : { body: {} };
      const anonymous = await t.call(method, path, { token: null, ...body });
      expect(anonymous.status, `${method} ${route.path}`).toBe(401);
      expect(anonymous.body.error.code).toBe('UNAUTHENTICATED');
      const low = lower[route.access];
      if (low !== undefined) expect((await t.call(method, path, { token: low, ...body })).status, `${method} ${route.path}`).toBe(403);
    }
  });

  it('serves the OpenAPI document without a token', async () => {
    const doc = await t.call('GET', '/api/v1/openapi.json', { token: null });
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
  });

  it('routes task names with dots and dashes', async () => {
    expect((await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('etl.daily-v2') })).status).toBe(201);
    expect((await t.call('GET', '/api/v1/tasks/etl.daily-v2', { token: t.tokens.viewer })).body.name).toBe('etl.daily-v2');
    expect((await t.call('DELETE', '/api/v1/tasks/etl.daily-v2')).status).toBe(204);
  });
});

describe('tasks', () => {
  const secretTask = taskDef('secret_job', {
    exec: { type: 'http', url: 'http://orders.internal:8080/x', headers: { 'X-Api-Key': 'literal-secret-value', 'X-Ref': { secretRef: 'ORDERS_KEY' } } },
    tags: ['etl'],
  });

  it('creates, refuses a duplicate (409 ALREADY_EXISTS) and bad input (400 with paths)', async () => {
    const before = await count('task');
    const bad = await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: { name: 'Bad Name', schedule: { type: 'cron', expr: 'nope' }, exec: { type: 'shell' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    expect(issuePaths(bad.body)).toEqual(expect.arrayContaining(['name', 'schedule.expr']));
    expect(await count('task')).toBe(before);
    const created = await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: secretTask });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'secret_job', version: 1, priority: 5, nextFireTime: null });
    expect(typeof created.body.createdAt).toBe('string');
    const dup = await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: secretTask });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('ALREADY_EXISTS');
  });

  it('shows literal header values redacted to viewers, never writes them to the audit log', async () => {
    const asViewer = await t.call('GET', '/api/v1/tasks/secret_job', { token: t.tokens.viewer });
    expect(asViewer.status).toBe(200);
    expect(asViewer.body.exec.headers).toEqual({ 'X-Api-Key': '***', 'X-Ref': { secretRef: 'ORDERS_KEY' } });
    const asOperator = await t.call('GET', '/api/v1/tasks/secret_job', { token: t.tokens.operator });
    expect(asOperator.body.exec.headers['X-Api-Key']).toBe('literal-secret-value');
    const [rows] = await t.pool.query<any[]>("SELECT COUNT(*) AS n FROM audit_log WHERE after_json LIKE '%literal-secret-value%' OR before_json LIKE '%literal-secret-value%'");
    expect(Number(rows[0].n)).toBe(0);
    expect((await t.call('GET', '/api/v1/tasks/nope', { token: t.tokens.viewer })).status).toBe(404);
    expect((await t.call('GET', '/api/v1/tasks/secret_job', { token: null })).status).toBe(401);
  });

  it('replaces with the current version, 409 VERSION_CONFLICT with a stale one, 400 without, 404 for unknown', async () => {
    const body = { ...secretTask, priority: 7, version: 1 };
    expect((await t.call('PUT', '/api/v1/tasks/secret_job', { token: t.tokens.viewer, body })).status).toBe(403);
    const ok = await t.call('PUT', '/api/v1/tasks/secret_job', { token: t.tokens.operator, body });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ version: 2, priority: 7 });
    const stale = await t.call('PUT', '/api/v1/tasks/secret_job', { token: t.tokens.operator, body });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'VERSION_CONFLICT', details: { currentVersion: 2 } });
    const missing = await t.call('PUT', '/api/v1/tasks/secret_job', { token: t.tokens.operator, body: secretTask });
    expect(missing.status).toBe(400);
    expect(issuePaths(missing.body)).toContain('version');
    const renamed = await t.call('PUT', '/api/v1/tasks/secret_job', { token: t.tokens.operator, body: { ...taskDef('other'), version: 2 } });
    expect(renamed.status).toBe(400);
    expect(issuePaths(renamed.body)).toEqual(['name']);
    expect((await t.call('PUT', '/api/v1/tasks/ghost', { token: t.tokens.operator, body: { ...taskDef('ghost'), version: 1 } })).status).toBe(404);
  });

  it('accepts a task resource read back and edited (GET → PUT round trip)', async () => {
    const read = await t.call('GET', '/api/v1/tasks/secret_job', { token: t.tokens.operator });
    const res = await t.call('PUT', '/api/v1/tasks/secret_job', { token: t.tokens.operator, body: { ...read.body, description: 'edited' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ description: 'edited', version: read.body.version + 1 });
    expect(res.body.exec.headers['X-Api-Key']).toBe('literal-secret-value');
    const redacted = await t.call('GET', '/api/v1/tasks/secret_job', { token: t.tokens.viewer });
    const again = await t.call('PUT', '/api/v1/tasks/secret_job', { token: t.tokens.operator, body: { ...redacted.body, priority: 1 } });
    expect(again.status).toBe(200);
    expect(again.body.exec.headers).toEqual({ 'X-Api-Key': 'literal-secret-value', 'X-Ref': { secretRef: 'ORDERS_KEY' } });
  });

  it('publishes <ns>:task-changed with the task name on every change', async () => {
    const sub = t.redis.redis.duplicate();
    const got: string[] = [];
    await sub.subscribe(`${t.namespace}:task-changed`);
    sub.on('message', (_c: string, m: string) => got.push(m));
    try {
      expect((await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('notified') })).status).toBe(201);
      expect((await t.call('POST', '/api/v1/tasks/notified/disable', { token: t.tokens.operator })).body.enabled).toBe(false);
      // Pub/sub delivery to this subscriber takes its time on a loaded machine: wait for both.
      await waitFor(() => got.length >= 2, { description: 'two task-changed messages' });
      expect(got).toEqual(['notified', 'notified']);
    } finally {
      await sub.quit();
    }
  });

  it('lists with filters and cursor pagination', async () => {
    for (const n of ['list_a', 'list_b', 'list_c']) {
      await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef(n, { tags: ['lst'], description: `about ${n}` }) });
    }
    const page1 = await t.call('GET', '/api/v1/tasks?tag=lst&limit=2', { token: t.tokens.viewer });
    expect(page1.status).toBe(200);
    expect(page1.body.items.map((x: { name: string }) => x.name)).toEqual(['list_a', 'list_b']);
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    const page2 = await t.call('GET', `/api/v1/tasks?tag=lst&limit=2&cursor=${page1.body.nextCursor}`, { token: t.tokens.viewer });
    expect(page2.body).toMatchObject({ items: [{ name: 'list_c' }], nextCursor: null });
    const q = await t.call('GET', '/api/v1/tasks?q=about%20list_b', { token: t.tokens.viewer });
    expect(q.body.items.map((x: { name: string }) => x.name)).toEqual(['list_b']);
    const disabled = await t.call('GET', '/api/v1/tasks?enabled=false', { token: t.tokens.viewer });
    expect(disabled.body.items.map((x: { name: string }) => x.name)).toEqual(['notified']);
    const bad = await t.call('GET', '/api/v1/tasks?limit=501&enabled=maybe', { token: t.tokens.viewer });
    expect(bad.status).toBe(400);
    expect(issuePaths(bad.body).sort()).toEqual(['enabled', 'limit']);
    expect((await t.call('GET', '/api/v1/tasks?cursor=garbage', { token: t.tokens.viewer })).status).toBe(400);
  });

  it('previews fire times', async () => {
    const res = await t.call('GET', '/api/v1/tasks/list_a/preview?count=3&after=2026-12-01T00:00:00.000Z', { token: t.tokens.viewer });
    expect(res.status).toBe(200);
    expect(res.body.fireTimes).toEqual(['2026-12-01T02:00:00.000Z', '2026-12-02T02:00:00.000Z', '2026-12-03T02:00:00.000Z']);
    expect((await t.call('GET', '/api/v1/tasks/list_a/preview', { token: t.tokens.viewer })).body.fireTimes).toHaveLength(5);
    expect((await t.call('GET', '/api/v1/tasks/list_a/preview?count=0', { token: t.tokens.viewer })).status).toBe(400);
    expect((await t.call('GET', '/api/v1/tasks/ghost/preview', { token: t.tokens.viewer })).status).toBe(404);
  });

  it('enables and disables (operator), 404 for unknown', async () => {
    expect((await t.call('POST', '/api/v1/tasks/list_a/disable', { token: t.tokens.viewer })).status).toBe(403);
    const off = await t.call('POST', '/api/v1/tasks/list_a/disable', { token: t.tokens.operator });
    expect(off.body).toMatchObject({ enabled: false, version: 2 });
    const on = await t.call('POST', '/api/v1/tasks/list_a/enable', { token: t.tokens.operator });
    expect(on.body).toMatchObject({ enabled: true, version: 3 });
    expect((await t.call('POST', '/api/v1/tasks/ghost/enable', { token: t.tokens.operator })).status).toBe(404);
  });

  it('imports YAML all or nothing, naming document and field', async () => {
    const yaml = [
      'name: list_a\nschedule: {type: cron, expr: "0 2 * * *"}\nexec: {type: shell, command: [echo, hi]}\ntags: [lst]\ndescription: about list_a',
      'name: list_b\nschedule: {type: cron, expr: "0 3 * * *"}\nexec: {type: shell, command: [echo, hi]}',
      'name: imported_new\nschedule: {type: none}\nexec: {type: shell, command: ["true"]}',
    ].join('\n---\n');
    const ok = await t.call('POST', '/api/v1/tasks/import', { token: t.tokens.operator, raw: yaml, contentType: 'application/yaml' });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ created: ['imported_new'], updated: ['list_b'], unchanged: ['list_a'] });
    const before = await count('task');
    const bad = await t.call('POST', '/api/v1/tasks/import', {
      token: t.tokens.operator,
      raw: 'name: imp_x\nschedule: {type: none}\nexec: {type: shell, command: ["true"]}\n---\nname: imp_y\nschedule: {type: none}\nexec: {type: shell, command: ["true"]}\npriority: 42\n',
      contentType: 'application/yaml',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues[0]).toMatchObject({ path: 'priority', document: 2 });
    // one line naming the document once, the field, the value and the line
    expect(bad.body.error.details.issues[0].message).toBe('document 2: priority: must be at most 9, got 42 (line 8)');
    expect(await count('task')).toBe(before);
    const json = await t.call('POST', '/api/v1/tasks/import', { token: t.tokens.operator, body: { name: 'x' } });
    expect(json.status).toBe(415);
    expect((await t.call('POST', '/api/v1/tasks/import', { token: t.tokens.viewer, raw: 'a: 1', contentType: 'application/yaml' })).status).toBe(403);
  });

  it('refuses bodies over 1 MiB (413) and non-JSON bodies (415)', async () => {
    const huge = await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, raw: JSON.stringify({ name: 'x'.repeat(1_100_000) }) });
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const text = await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, raw: 'name=x', contentType: 'text/plain' });
    expect(text.status).toBe(415);
    const broken = await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, raw: '{"name":' });
    expect(broken.status).toBe(400);
    expect(JSON.stringify(broken.body)).not.toMatch(/at |SyntaxError|sql/i);
  });
});

describe('edges and dag', () => {
  it('adds edges, refuses a cycle with the cycle in order, removes edges, shows the DAG', async () => {
    for (const n of ['d_a', 'd_b', 'd_c']) await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef(n) });
    expect((await t.call('POST', '/api/v1/edges', { token: t.tokens.viewer, body: { parent: 'd_a', child: 'd_b' } })).status).toBe(403);
    expect((await t.call('POST', '/api/v1/edges', { token: t.tokens.operator, body: { parent: 'd_a', child: 'd_b' } })).status).toBe(201);
    const bc = await t.call('POST', '/api/v1/edges', { token: t.tokens.operator, body: { parent: 'd_b', child: 'd_c', rule: 'ALL_DONE' } });
    expect(bc.body).toEqual({ parent: 'd_b', child: 'd_c', rule: 'ALL_DONE' });
    const cycle = await t.call('POST', '/api/v1/edges', { token: t.tokens.operator, body: { parent: 'd_c', child: 'd_a' } });
    expect(cycle.status).toBe(409);
    expect(cycle.body.error.code).toBe('CYCLE');
    expect(cycle.body.error.details.cycle).toEqual(['d_a', 'd_b', 'd_c', 'd_a']);
    const dup = await t.call('POST', '/api/v1/edges', { token: t.tokens.operator, body: { parent: 'd_a', child: 'd_b' } });
    expect(dup.body.error.code).toBe('ALREADY_EXISTS');
    const bad = await t.call('POST', '/api/v1/edges', { token: t.tokens.operator, body: { parent: 'd_a', rule: 'SOMETIMES' } });
    expect(issuePaths(bad.body).sort()).toEqual(['child', 'rule']);
    expect((await t.call('POST', '/api/v1/edges', { token: t.tokens.operator, body: { parent: 'd_a', child: 'ghost' } })).status).toBe(404);
    const dag = await t.call('GET', '/api/v1/dag?root=d_b', { token: t.tokens.viewer });
    expect(dag.body).toEqual({ nodes: ['d_b', 'd_c'], edges: [{ parent: 'd_b', child: 'd_c', rule: 'ALL_DONE' }] });
    const all = await t.call('GET', '/api/v1/dag', { token: t.tokens.viewer });
    expect(all.body.edges).toHaveLength(2);
    expect((await t.call('GET', '/api/v1/dag?root=ghost', { token: t.tokens.viewer })).status).toBe(404);
    expect((await t.call('DELETE', '/api/v1/edges?parent=d_b&child=d_c', { token: t.tokens.viewer })).status).toBe(403);
    expect((await t.call('DELETE', '/api/v1/edges?parent=d_b&child=d_c', { token: t.tokens.operator })).status).toBe(204);
    expect((await t.call('DELETE', '/api/v1/edges?parent=d_b&child=d_c', { token: t.tokens.operator })).status).toBe(404);
    expect((await t.call('DELETE', '/api/v1/edges?parent=d_b', { token: t.tokens.operator })).status).toBe(400);
  });

  it('two concurrent edge writes cannot both pass the cycle check (R19)', async () => {
    for (const n of ['cc_x', 'cc_y']) await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef(n) });
    const results = await Promise.all([
      t.call('POST', '/api/v1/edges', { token: t.tokens.operator, body: { parent: 'cc_x', child: 'cc_y' } }),
      t.call('POST', '/api/v1/edges', { token: t.tokens.operator, body: { parent: 'cc_y', child: 'cc_x' } }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(results.find((r) => r.status === 409)?.body.error.code).toBe('CYCLE');
  });

  it('deletes a task (admin only) with its edges; its instances stay', async () => {
    const id = await insertInstance(t.pool, { task: 'd_a', expected: '2026-11-01T02:00:00.000Z', bizDate: '2026-11-01', state: 'SUCCESS' });
    expect((await t.call('DELETE', '/api/v1/tasks/d_a', { token: t.tokens.operator })).status).toBe(403);
    expect((await t.call('DELETE', '/api/v1/tasks/d_a')).status).toBe(204);
    expect((await t.call('DELETE', '/api/v1/tasks/d_a')).status).toBe(404);
    expect((await t.call('GET', '/api/v1/dag?root=d_b', { token: t.tokens.viewer })).body.edges).toEqual([]);
    expect((await t.call('GET', `/api/v1/instances/${id}`, { token: t.tokens.viewer })).status).toBe(200);
  });
});

describe('instances, trigger, cancel', () => {
  it('triggers (202), honours Idempotency-Key, and publishes instances-ready', async () => {
    await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('trig', { params: { a: 1 } }) });
    const first = await t.call('POST', '/api/v1/tasks/trig/trigger', { token: t.tokens.operator, body: { params: { b: 2 }, bizDate: '2026-10-10' } });
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ taskName: 'trig', trigger: 'manual', state: 'PENDING', runNo: 1, bizDate: '2026-10-10', params: { a: 1, b: 2 } });
    const noBody = await t.call('POST', '/api/v1/tasks/trig/trigger', { token: t.tokens.operator });
    expect(noBody.status).toBe(202);
    expect(noBody.body.id).not.toBe(first.body.id);
    const k1 = await t.call('POST', '/api/v1/tasks/trig/trigger', { token: t.tokens.operator, headers: { 'idempotency-key': 'abc-1' } });
    const k2 = await t.call('POST', '/api/v1/tasks/trig/trigger', { token: t.tokens.operator, headers: { 'idempotency-key': 'abc-1' } });
    expect(k2.status).toBe(202);
    expect(k2.body.id).toBe(k1.body.id);
    expect((await t.call('POST', '/api/v1/tasks/trig/trigger', { token: t.tokens.viewer })).status).toBe(403);
    expect((await t.call('POST', '/api/v1/tasks/ghost/trigger', { token: t.tokens.operator })).status).toBe(404);
    const bad = await t.call('POST', '/api/v1/tasks/trig/trigger', { token: t.tokens.operator, body: { bizDate: '10/10/2026', params: [] } });
    expect(issuePaths(bad.body).sort()).toEqual(['bizDate', 'params']);
  });

  it('concurrent triggers get distinct slots (R1: +1 ms on conflict)', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => t.call('POST', '/api/v1/tasks/trig/trigger', { token: t.tokens.operator })));
    expect(results.every((r) => r.status === 202)).toBe(true);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(5);
  });

  it('lists newest first with filters and cursor, shows detail with executions and events', async () => {
    const page = await t.call('GET', '/api/v1/instances?task=trig&limit=2', { token: t.tokens.viewer });
    expect(page.status).toBe(200);
    expect(page.body.items).toHaveLength(2);
    expect(Number(page.body.items[0].id)).toBeGreaterThan(Number(page.body.items[1].id));
    const next = await t.call('GET', `/api/v1/instances?task=trig&limit=2&cursor=${page.body.nextCursor}`, { token: t.tokens.viewer });
    expect(Number(next.body.items[0].id)).toBeLessThan(Number(page.body.items[1].id));
    const byDate = await t.call('GET', '/api/v1/instances?bizDate=2026-10-10&state=PENDING', { token: t.tokens.viewer });
    expect(byDate.body.items).toHaveLength(1);
    expect((await t.call('GET', '/api/v1/instances?state=BOGUS&from=yesterday', { token: t.tokens.viewer })).status).toBe(400);
    // No task is named "trig,other": a list is refused by name, not answered as "no runs".
    const list = await t.call('GET', '/api/v1/instances?task=trig,other', { token: t.tokens.viewer });
    expect(list.status).toBe(400);
    expect(JSON.stringify(list.body)).toContain('task');
    const detail = await t.call('GET', `/api/v1/instances/${byDate.body.items[0].id}`, { token: t.tokens.viewer });
    expect(detail.body).toMatchObject({ executions: [], outputTail: null });
    expect(detail.body.events[0]).toMatchObject({ type: 'CREATED', at: expect.any(String) });
    expect((await t.call('GET', '/api/v1/instances/999999', { token: t.tokens.viewer })).status).toBe(404);
    expect((await t.call('GET', '/api/v1/instances/abc', { token: t.tokens.viewer })).status).toBe(404);
  });

  it('cancels: a running one is killed on its worker; a final one is 409 INVALID_STATE', async () => {
    const id = await insertInstance(t.pool, { task: 'trig', expected: '2026-09-01T00:00:00.000Z', bizDate: '2026-09-01', state: 'RUNNING', workerId: 'w1', executionId: '0190a0a0-0000-7000-8000-000000000001' });
    expect((await t.call('POST', `/api/v1/instances/${id}/cancel`, { token: t.tokens.viewer })).status).toBe(403);
    const res = await t.call('POST', `/api/v1/instances/${id}/cancel`, { token: t.tokens.operator });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ state: 'CANCELED', reason: 'CANCELED_BY_USER' });
    const cancel = t.published.find((p) => p.body['kind'] === 'cancel');
    // by queue name on the default exchange, as brokers send cancels (an enrolled worker's control queue is bound to nothing)
    expect(cancel).toMatchObject({ exchange: '', routingKey: `${t.namespace}.worker.w1.control`, body: { executionIds: ['0190a0a0-0000-7000-8000-000000000001'], reason: 'CANCELED_BY_USER' } });
    const again = await t.call('POST', `/api/v1/instances/${id}/cancel`, { token: t.tokens.operator });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('INVALID_STATE');
    expect((await t.call('POST', '/api/v1/instances/424242/cancel', { token: t.tokens.operator })).status).toBe(404);
  });
});

describe('operations', () => {
  it('lists workers from the registry and drains one', async () => {
    const keys = redisKeys(t.namespace);
    const now = new Date().toISOString();
    await publishRegistration(t.redis.redis, keys, { workerId: 'w9', host: 'h', tags: ['etl'], cores: 2, slots: 8, running: 1, runningExecutionIds: [], avgDurationMs5m: 12, draining: false, version: '1', startedAt: now, at: now }, 15_000);
    const list = await t.call('GET', '/api/v1/workers', { token: t.tokens.viewer });
    expect(list.body.items).toEqual([expect.objectContaining({ id: 'w9', host: 'h', cores: 2, slots: 8, running: 1, avgDurationMs: 12, lastHeartbeat: now, state: 'active' })]);
    expect((await t.call('POST', '/api/v1/workers/w9/drain', { token: t.tokens.viewer })).status).toBe(403);
    expect((await t.call('POST', '/api/v1/workers/w9/drain', { token: t.tokens.operator })).status).toBe(200);
    expect((await t.call('GET', '/api/v1/workers', { token: t.tokens.viewer })).body.items[0].state).toBe('draining');
    expect((await t.call('POST', '/api/v1/workers/ghost/drain', { token: t.tokens.operator })).status).toBe(404);
    expect((await t.call('GET', '/api/v1/workers', { token: null })).status).toBe(401);
  });

  it('pauses and resumes dispatching (admin)', async () => {
    expect((await t.call('POST', '/api/v1/dispatch/pause', { token: t.tokens.operator })).status).toBe(403);
    expect((await t.call('POST', '/api/v1/dispatch/pause')).body).toMatchObject({ paused: true });
    const [rows] = await t.pool.query<any[]>("SELECT value FROM system_flag WHERE name = 'dispatch_paused'");
    expect(JSON.parse(String(rows[0].value))).toBe(true);
    expect((await t.call('GET', '/api/v1/dispatch', { token: t.tokens.viewer })).body).toMatchObject({ paused: true });
    expect((await t.call('POST', '/api/v1/dispatch/resume')).body).toMatchObject({ paused: false });
  });

  it("shows today's stats and dead letters", async () => {
    const today = new Date();
    today.setUTCHours(0, 30, 0, 0);
    await insertInstance(t.pool, { task: 'trig', expected: today.toISOString(), bizDate: today.toISOString().slice(0, 10), state: 'FAILED' });
    const stats = await t.call('GET', '/api/v1/stats/today', { token: t.tokens.viewer });
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ failed: expect.any(Number), topFailing: expect.arrayContaining([{ task: 'trig', count: expect.any(Number) }]) });
    expect(stats.body.total).toBeGreaterThanOrEqual(stats.body.failed);
    await t.pool.query("INSERT INTO dead_letter (source_queue, reason, payload) VALUES ('q', 'bad message', '{}')");
    expect((await t.call('GET', '/api/v1/dead-letters', { token: t.tokens.viewer })).status).toBe(403);
    const dl = await t.call('GET', '/api/v1/dead-letters', { token: t.tokens.operator });
    expect(dl.body.items[0]).toMatchObject({ sourceQueue: 'q', reason: 'bad message' });
  });

  it('audits applied writes with actor, and filters by actor and time (admin only)', async () => {
    expect((await t.call('GET', '/api/v1/audit', { token: t.tokens.operator })).status).toBe(403);
    const res = await t.call('GET', '/api/v1/audit?actor=operator-user&limit=500');
    expect(res.status).toBe(200);
    const actions = new Set(res.body.items.map((e: { action: string }) => e.action));
    for (const a of ['task.create', 'task.replace', 'task.disable', 'edge.create', 'edge.delete', 'task.trigger', 'instance.cancel', 'worker.drain']) expect(actions).toContain(a);
    expect(res.body.items.every((e: { actor: { name: string; tokenId: string | null } }) => e.actor.name === 'operator-user' && e.actor.tokenId !== null)).toBe(true);
    const none = await t.call('GET', '/api/v1/audit?to=2000-01-01T00:00:00.000Z');
    expect(none.body.items).toEqual([]);
    expect((await t.call('GET', '/api/v1/audit?from=never')).status).toBe(400);
  });
});

describe('executions: report and claim (HMAC)', () => {
  const execA = '0190a0a0-0000-7000-8000-00000000000a';
  const execB = '0190a0a0-0000-7000-8000-00000000000b';
  let instanceId = '';

  beforeAll(async () => {
    instanceId = await insertInstance(t.pool, { task: 'trig', expected: '2026-08-01T00:00:00.000Z', bizDate: '2026-08-01', state: 'RUNNING', workerId: 'w1', executionId: execB });
    await t.pool.query(
      `INSERT INTO task_execution (execution_id, instance_id, attempt, run_no, worker_id, state) VALUES (?, ?, 1, 1, 'w1', 'FAILED'), (?, ?, 2, 1, 'w1', 'ASYNC')`,
      [execA, instanceId, execB, instanceId],
    );
  });

  it('relays a signed report once as a result (origin report); a repeat is a duplicate', async () => {
    const body = JSON.stringify({ success: true, data: { rows: 3 } });
    const first = await t.call('POST', `/api/v1/executions/${execB}/report`, { token: null, raw: body, headers: signedBy('default', `/api/v1/executions/${execB}/report`, body) });
    expect(first.status).toBe(200);
    expect(first.body.duplicate).toBe(false);
    const msg = t.published.find((p) => p.body['kind'] === 'result');
    expect(msg).toMatchObject({ exchange: `${t.namespace}.events`, body: { origin: 'report', workerId: 'w1', items: [{ executionId: execB, instanceId, outcome: 'SUCCESS', data: { rows: 3 } }] } });
    const again = await t.call('POST', `/api/v1/executions/${execB}/report`, { token: null, raw: body, headers: signedBy('default', `/api/v1/executions/${execB}/report`, body) });
    expect(again.body).toEqual({ duplicate: true });
  });

  it('refuses bad or stale signatures (401), unknown executions (404), bad bodies (400)', async () => {
    const body = JSON.stringify({ success: true });
    expect((await t.call('POST', `/api/v1/executions/${execB}/report`, { token: null, raw: body })).status).toBe(401);
    expect((await t.call('POST', `/api/v1/executions/${execB}/report`, { token: null, raw: body, headers: signedBy('default', `/api/v1/executions/${execB}/report`, '{}') })).status).toBe(401); // signed for another body
    const stale = String(Date.now() - 6 * 60_000);
    expect((await t.call('POST', `/api/v1/executions/${execB}/report`, { token: null, raw: body, headers: signedBy('default', `/api/v1/executions/${execB}/report`, body, { timestampMs: Number(stale) }) })).status).toBe(401);
    expect((await t.call('POST', '/api/v1/executions/nope/report', { token: null, raw: body, headers: signedBy('default', '/api/v1/executions/nope/report', body) })).status).toBe(404);
    const bad = JSON.stringify({ success: 'yes' });
    const res = await t.call('POST', `/api/v1/executions/${execB}/report`, { token: null, raw: bad, headers: signedBy('default', `/api/v1/executions/${execB}/report`, bad) });
    expect(res.status).toBe(400);
    expect(issuePaths(res.body)).toEqual(['success']);
  });

  it('R18 grants the claim to the live execution only (409 to others)', async () => {
    const empty = '{}';
    const live = await t.call('POST', `/api/v1/executions/${execB}/claim`, { token: null, raw: empty, headers: signedBy('default', `/api/v1/executions/${execB}/claim`, empty) });
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ granted: true });
    expect((await t.call('POST', `/api/v1/executions/${execB}/claim`, { token: null, raw: empty, headers: signedBy('default', `/api/v1/executions/${execB}/claim`, empty) })).status).toBe(200);
    const dead = await t.call('POST', `/api/v1/executions/${execA}/claim`, { token: null, raw: empty, headers: signedBy('default', `/api/v1/executions/${execA}/claim`, empty) });
    expect(dead.status).toBe(409);
    expect((await t.call('POST', '/api/v1/executions/nope/claim', { token: null, raw: empty, headers: signedBy('default', '/api/v1/executions/nope/claim', empty) })).status).toBe(404);
    expect((await t.call('POST', `/api/v1/executions/${execB}/claim`, { token: null, raw: empty })).status).toBe(401);
  });
});
