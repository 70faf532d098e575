/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/**
 * #44 "Isolation": each test tries one attack of a team on another (named in its title) through
 * the admin API and checks that it is refused or tells nothing (docs/teams.md "Threat model").
 * Teams `a` and `b`, a token of each; the worker and scheduler halves are in
 * worker/src/executors/http-team-allow.test.ts and scheduler/src/dag-teams.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { deriveExecutorKey } from '@ax/core';
import { EXECUTOR_SECRET, addToken, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let opA: string;
let opB: string;
let viewerA: string;

beforeAll(async () => {
  t = await startTestApp();
  for (const name of ['a', 'b']) {
    const res = await t.call('POST', '/api/v1/teams', { body: { name } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  opA = await addToken(t.pool, 'iso-op-a', 'operator', ['a']);
  opB = await addToken(t.pool, 'iso-op-b', 'operator', ['b']);
  viewerA = await addToken(t.pool, 'iso-viewer-a', 'viewer', ['a']);
});

afterAll(async () => {
  await t.close();
});

const httpTask = (name: string, exec: Record<string, unknown>, team = 'a'): Record<string, unknown> =>
  taskDef(name, { team, exec: { type: 'http', url: 'http://orders.a.internal:8080/run', ...exec } });

describe('#44 HTTP: a task reaches another team\'s virtual host', () => {
  it('attack: exec.headers.Host (any spelling) is refused at create, PUT and YAML import, naming the header', async () => {
    for (const name of ['Host', 'host', 'HOST', 'hOsT']) {
      const res = await t.call('POST', '/api/v1/tasks', { token: opA, body: httpTask('iso_host', { headers: { [name]: 'payments.b.internal' } }) });
      expect(res.status, name).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.details.issues).toEqual([expect.objectContaining({ path: `exec.headers.${name}`, message: expect.stringContaining(`header "${name}" cannot be set by a task`) })]);
    }
    expect((await t.call('POST', '/api/v1/tasks', { token: opA, body: httpTask('iso_host', { headers: { 'X-Trace': '1' } }) })).status).toBe(201);
    const put = await t.call('PUT', '/api/v1/tasks/iso_host', { token: opA, body: { ...httpTask('iso_host', { headers: { HOST: 'payments.b.internal' } }), version: 1 } });
    expect(put.status).toBe(400);
    expect(JSON.stringify(put.body.error.details.issues)).toContain('header \\"HOST\\" cannot be set by a task');
    const yaml = stringify(httpTask('iso_host_yaml', { headers: { Host: 'payments.b.internal' } }));
    const imported = await t.call('POST', '/api/v1/tasks/import', { token: opA, raw: yaml, contentType: 'application/yaml' });
    expect(imported.status).toBe(400);
    expect(JSON.stringify(imported.body.error.details.issues)).toContain('header \\"Host\\" cannot be set by a task');
    expect((await t.call('GET', '/api/v1/tasks/iso_host_yaml', { token: opA })).status).toBe(404);
  });

  it('attack: a task of a team with httpAllow names a host outside it (create, PUT, import); the list is validated, read back and settable', async () => {
    const bad = await t.call('PATCH', '/api/v1/teams/a', { body: { httpAllow: ['orders.a.internal', 'http://x/'] } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error.details.issues)).toContain('is not an AX_HTTP_EXECUTOR_ALLOW entry');
    expect((await t.call('PATCH', '/api/v1/teams/a', { body: { httpAllow: [] } })).status).toBe(400);
    const set = await t.call('PATCH', '/api/v1/teams/a', { body: { httpAllow: ['orders.a.internal:8080', '*.a.example'] } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.httpAllow).toEqual(['orders.a.internal:8080', '*.a.example']);
    expect((await t.call('GET', '/api/v1/teams', { token: opA })).body.items).toEqual([expect.objectContaining({ name: 'a', httpAllow: ['orders.a.internal:8080', '*.a.example'] })]);
    // a team b does not narrow: its tasks may name any host (the global list decides on the worker)
    expect((await t.call('POST', '/api/v1/tasks', { token: opB, body: httpTask('iso_b_any', { url: 'http://payments.b.internal/run' }, 'b') })).status).toBe(201);

    const outside = await t.call('POST', '/api/v1/tasks', { token: opA, body: httpTask('iso_allow', { url: 'http://payments.b.internal/run' }) });
    expect(outside.status).toBe(400);
    expect(outside.body.error.details.issues).toEqual([{ path: 'exec.url', message: 'exec.url: host payments.b.internal is not in the httpAllow of team "a"' }]);
    expect((await t.call('POST', '/api/v1/tasks', { token: opA, body: httpTask('iso_allow', { url: 'http://orders.a.internal:9090/run' }) })).status).toBe(400);
    expect((await t.call('POST', '/api/v1/tasks', { token: opA, body: httpTask('iso_allow', {}) })).status).toBe(201);
    expect((await t.call('POST', '/api/v1/tasks', { token: opA, body: httpTask('iso_allow2', { url: 'https://api.a.example/x' }) })).status).toBe(201);
    const put = await t.call('PUT', '/api/v1/tasks/iso_allow', { token: opA, body: { ...httpTask('iso_allow', { url: 'http://payments.b.internal/run' }), version: 1 } });
    expect(put.status).toBe(400);
    const yaml = stringify(httpTask('iso_allow_yaml', { url: 'http://payments.b.internal/run' }));
    const imported = await t.call('POST', '/api/v1/tasks/import', { token: opA, raw: yaml, contentType: 'application/yaml' });
    expect(imported.status).toBe(400);
    expect(JSON.stringify(imported.body.error.details.issues)).toContain('document 1: exec.url: host payments.b.internal is not in the httpAllow of team');
    // only a "*" admin sets a team's list; null removes the narrowing
    expect((await t.call('PATCH', '/api/v1/teams/a', { token: opA, body: { httpAllow: null } })).status).toBe(403);
    const cleared = await t.call('PATCH', '/api/v1/teams/a', { body: { httpAllow: null } });
    expect(cleared.body.httpAllow).toBeNull();
  });
});

describe('#44 an unsigned /report probe tells whether a team exists', () => {
  it('attack: the same answer for a real team and an unknown one, whatever key version, before the signature is checked', async () => {
    const path = '/api/v1/executions/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/report';
    const probe = async (team: string, keyVersion: string): Promise<{ status: number; body: unknown }> => {
      const res = await t.call('POST', path, {
        token: null,
        raw: '{"success":true}',
        headers: { 'x-ax-team': team, 'x-ax-key-version': keyVersion, 'x-ax-timestamp': String(Date.now()), 'x-ax-signature': `v2=${'0'.repeat(64)}` },
      });
      return { status: res.status, body: res.body };
    };
    const real = await probe('a', '7');
    expect(real.status).toBe(401);
    for (const [team, version] of [['no-such-team', '7'], ['a', '1'], ['no-such-team', '1'], ['b', '2']] as const) {
      expect(await probe(team, version), `${team} v${version}`).toEqual(real);
    }
    expect(real.body).toMatchObject({ error: { code: 'BAD_SIGNATURE', details: { reason: 'BAD_SIGNATURE' } } });
  });
});

describe('#44 a 409 CYCLE names tasks of another team', () => {
  it('attack: closing a cycle through b\'s tasks names only a\'s tasks (POST /edges and dependsOn)', async () => {
    for (const [name, team] of [['cy_a1', 'a'], ['cy_a2', 'a'], ['cy_b_secret', 'b']] as const) {
      expect((await t.call('POST', '/api/v1/tasks', { body: taskDef(name, { team }) })).status).toBe(201);
    }
    // a "*" admin joined the teams: cy_a1 → cy_b_secret → cy_a2
    expect((await t.call('POST', '/api/v1/edges', { body: { parent: 'cy_a1', child: 'cy_b_secret' } })).status).toBe(201);
    expect((await t.call('POST', '/api/v1/edges', { body: { parent: 'cy_b_secret', child: 'cy_a2' } })).status).toBe(201);
    const edge = await t.call('POST', '/api/v1/edges', { token: opA, body: { parent: 'cy_a2', child: 'cy_a1' } });
    expect(edge.status).toBe(409);
    expect(edge.body.error.code).toBe('CYCLE');
    expect(JSON.stringify(edge.body)).not.toContain('cy_b_secret');
    expect(edge.body.error.details.cycle).toEqual(['cy_a1', 'cy_a2', 'cy_a1']); // cy_a1 → (hidden) → cy_a2 → cy_a1
    const current = await t.call('GET', '/api/v1/tasks/cy_a1', { token: opA });
    const put = await t.call('PUT', '/api/v1/tasks/cy_a1', { token: opA, body: { ...taskDef('cy_a1', { team: 'a' }), dependsOn: [{ task: 'cy_a2' }], version: current.body.version } });
    expect(put.status).toBe(409);
    expect(put.body.error.code).toBe('CYCLE');
    expect(JSON.stringify(put.body)).not.toContain('cy_b_secret');
    // the "*" admin sees the whole cycle
    const full = await t.call('POST', '/api/v1/edges', { body: { parent: 'cy_a2', child: 'cy_a1' } });
    expect(full.body.error.details.cycle).toContain('cy_b_secret');
  });
});

describe('#44 cross-team edges are recorded with the teams that allowed them', () => {
  it('an edge written by a token covering the child\'s team records both tasks\' teams; a dependsOn written again records them anew', async () => {
    for (const [name, team] of [['ed_a', 'a'], ['ed_b', 'b']] as const) {
      expect((await t.call('POST', '/api/v1/tasks', { body: taskDef(name, { team, schedule: { type: 'none' } }) })).status).toBe(201);
    }
    expect((await t.call('POST', '/api/v1/edges', { body: { parent: 'ed_a', child: 'ed_b' } })).status).toBe(201);
    const teams = async (): Promise<unknown> => {
      const [rows] = await t.pool.query<any[]>("SELECT parent_team, child_team FROM task_edge WHERE parent_task = 'ed_a' AND child_task = 'ed_b'");
      return rows[0];
    };
    expect(await teams()).toEqual({ parent_team: 'a', child_team: 'b' });
    // moved by SQL behind the API's back: the record no longer matches (the scheduler then creates nothing)
    await t.pool.query("UPDATE task_edge SET parent_team = NULL, child_team = NULL WHERE child_task = 'ed_b'");
    const current = await t.call('GET', '/api/v1/tasks/ed_b');
    const put = await t.call('PUT', '/api/v1/tasks/ed_b', { body: { ...taskDef('ed_b', { team: 'b', schedule: { type: 'none' } }), dependsOn: [{ task: 'ed_a' }], version: current.body.version } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(await teams()).toEqual({ parent_team: 'a', child_team: 'b' });
  });
});

describe('#44 a deleted and re-created team', () => {
  it('attack: gets the deleted team\'s key again, and old tokens naming it act for the new team', async () => {
    expect((await t.call('POST', '/api/v1/teams', { body: { name: 'gone' } })).status).toBe(201);
    const onlyGone = await addToken(t.pool, 'iso-gone-admin', 'admin', ['gone']);
    const goneAndA = await addToken(t.pool, 'iso-gone-a-op', 'operator', ['gone', 'a']);
    const oldKey = await t.call('GET', '/api/v1/teams/gone/executor-key', { token: onlyGone });
    expect(oldKey.body).toMatchObject({ keyVersion: 1 });
    expect((await t.call('POST', '/api/v1/teams/gone/executor-keys', { token: onlyGone })).body.keyVersion).toBe(2);

    expect((await t.call('DELETE', '/api/v1/teams/gone')).status).toBe(204);
    const again = await t.call('POST', '/api/v1/teams', { body: { name: 'gone' } });
    expect(again.status).toBe(201);
    expect(again.body.keyVersion).toBe(3);
    const newKey = await t.call('GET', '/api/v1/teams/gone/executor-key');
    expect(newKey.body.key).toBe(deriveExecutorKey(EXECUTOR_SECRET, 'gone', 3));
    expect(newKey.body.key).not.toBe(oldKey.body.key);
    expect(newKey.body).not.toHaveProperty('previousValidUntil');

    // the token of the old team alone is revoked; the one of two teams keeps the other only
    expect((await t.call('GET', '/api/v1/teams/gone/executor-key', { token: onlyGone })).status).toBe(401);
    expect((await t.call('GET', '/api/v1/teams', { token: goneAndA })).body.items.map((x: any) => x.name)).toEqual(['a']);
    expect((await t.call('POST', '/api/v1/tasks', { token: goneAndA, body: taskDef('iso_in_new_gone', { team: 'gone' }) })).status).toBe(404);
    const audit = await t.call('GET', '/api/v1/audit?limit=500');
    expect(JSON.stringify(audit.body)).toContain('tokensRevoked');
  });
});

describe('#44 secrets in plugin config and URL user-info', () => {
  it('attack: a viewer reads a plugin\'s config and the password of an http URL; the redacted form PUT back keeps the stored values', async () => {
    const plugin = taskDef('iso_plugin', { team: 'a', exec: { type: 'plugin', name: 'archive_files', config: { password: 's3cret-pw', nested: { tokens: ['tok-1'] }, retries: 3, dryRun: false } } });
    expect((await t.call('POST', '/api/v1/tasks', { token: opA, body: plugin })).status).toBe(201);
    await t.call('PATCH', '/api/v1/teams/a', { body: { httpAllow: null } });
    const http = httpTask('iso_userinfo', { url: 'http://svc-user:url-pw@orders.a.internal:8080/run' });
    expect((await t.call('POST', '/api/v1/tasks', { token: opA, body: http })).status).toBe(201);

    const seen = await t.call('GET', '/api/v1/tasks/iso_plugin', { token: viewerA });
    expect(seen.body.exec.config).toEqual({ password: '***', nested: { tokens: ['***'] }, retries: 3, dryRun: false });
    const list = await t.call('GET', '/api/v1/tasks?limit=500', { token: viewerA });
    expect(JSON.stringify(list.body)).not.toContain('s3cret-pw');
    expect(JSON.stringify(list.body)).not.toContain('url-pw');
    expect(JSON.stringify(list.body)).not.toContain('svc-user');
    const url = await t.call('GET', '/api/v1/tasks/iso_userinfo', { token: viewerA });
    expect(url.body.exec.url).toBe('http://***:***@orders.a.internal:8080/run');
    const audit = await t.call('GET', '/api/v1/audit?limit=500');
    expect(JSON.stringify(audit.body)).not.toContain('s3cret-pw');
    expect(JSON.stringify(audit.body)).not.toContain('url-pw');

    // what a viewer saw, PUT back by an operator, keeps the stored secrets
    const back = await t.call('PUT', '/api/v1/tasks/iso_plugin', { token: opA, body: { ...seen.body, description: 'edited' } });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(back.body.exec.config).toEqual({ password: 's3cret-pw', nested: { tokens: ['tok-1'] }, retries: 3, dryRun: false });
    const urlBack = await t.call('PUT', '/api/v1/tasks/iso_userinfo', { token: opA, body: { ...url.body, description: 'edited' } });
    expect(urlBack.status, JSON.stringify(urlBack.body)).toBe(200);
    expect(urlBack.body.exec.url).toBe('http://svc-user:url-pw@orders.a.internal:8080/run');
    // a mask with nothing stored behind it is refused
    const fresh = await t.call('POST', '/api/v1/tasks', { token: opA, body: { ...plugin, name: 'iso_plugin2', exec: { type: 'plugin', name: 'archive_files', config: { password: '***' } } } });
    expect(fresh.status).toBe(400);
    expect(fresh.body.error.details.issues).toEqual([expect.objectContaining({ path: 'exec.config.password' })]);
  });
});
