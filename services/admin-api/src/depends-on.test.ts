/* eslint-disable @typescript-eslint/no-unsafe-member-access -- response bodies are untyped JSON here */
/** `dependsOn` in task writes (ADMIN-API.md "Task definition"): edges written with the task, all or nothing. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addToken, startTestApp, type TestApp } from './harness.test-helper.js';

let t: TestApp;
const job = (name: string, extra = ''): string => `name: ${name}\nschedule: {type: none}\nexec: {type: shell, command: [echo, ${name}]}\n${extra}`;
const importYaml = (yaml: string, query = '', token?: string): ReturnType<TestApp['call']> =>
  t.call('POST', `/api/v1/tasks/import${query}`, { raw: yaml, contentType: 'application/yaml', ...(token === undefined ? {} : { token }) });
const edges = async (): Promise<string[]> => ((await t.call('GET', '/api/v1/dag')).body.edges as Array<{ parent: string; child: string; rule: string }>).map((e) => `${e.parent}>${e.child}:${e.rule}`).sort();

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('dependsOn', () => {
  it('import writes the edges with the tasks; the resource shows dependsOn; a changed file changes them', async () => {
    const first = await importYaml(`${job('d_a')}---\n${job('d_b', 'dependsOn: [{task: d_a}]\n')}---\n${job('d_c', 'dependsOn: [{task: d_a}, {task: d_b, rule: ALL_DONE}]\n')}`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ created: ['d_a', 'd_b', 'd_c'], deleted: [], dryRun: false });
    expect(await edges()).toEqual(['d_a>d_b:ALL_SUCCESS', 'd_a>d_c:ALL_SUCCESS', 'd_b>d_c:ALL_DONE']);
    expect((await t.call('GET', '/api/v1/tasks/d_c')).body.dependsOn).toEqual([{ task: 'd_a', rule: 'ALL_SUCCESS' }, { task: 'd_b', rule: 'ALL_DONE' }]);
    const second = await importYaml(`${job('d_c', 'dependsOn: [{task: d_b}]\n')}`);
    expect(second.body).toMatchObject({ updated: ['d_c'], unchanged: [], edges: { removed: [{ parent: 'd_a', child: 'd_c' }], changed: [{ parent: 'd_b', child: 'd_c', rule: 'ALL_SUCCESS' }] } });
    expect(await edges()).toEqual(['d_a>d_b:ALL_SUCCESS', 'd_b>d_c:ALL_SUCCESS']);
  });

  it('a cycle is refused with the cycle named and nothing written; a missing parent names the field', async () => {
    const cycle = await importYaml(`${job('d_x', 'dependsOn: [{task: d_y}]\n')}---\n${job('d_y', 'dependsOn: [{task: d_x}]\n')}`);
    expect(cycle.status).toBe(409);
    expect(cycle.body.error).toMatchObject({ code: 'CYCLE', message: 'dependsOn: cycle d_y → d_x → d_y', details: { cycle: ['d_y', 'd_x', 'd_y'] } });
    expect((await t.call('GET', '/api/v1/tasks/d_x')).status).toBe(404);
    const viaStored = await t.call('PUT', '/api/v1/tasks/d_a', { body: { ...(await t.call('GET', '/api/v1/tasks/d_a')).body, dependsOn: [{ task: 'd_c' }] } });
    expect(viaStored.status).toBe(409);
    expect(viaStored.body.error.message).toBe('dependsOn: cycle d_a → d_b → d_c → d_a');
    const missing = await t.call('POST', '/api/v1/tasks', { body: { name: 'd_m', schedule: { type: 'none' }, exec: { type: 'shell', command: ['x'] }, dependsOn: [{ task: 'nope' }] } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.issues).toEqual([{ path: 'dependsOn[0].task', message: 'dependsOn[0].task: no task "nope" (task "d_m" depends on it; create it first or in the same import)' }]);
    expect((await t.call('GET', '/api/v1/tasks/d_m')).status).toBe(404);
  });

  it('a parent of a team the token does not cover looks missing; its edges are kept and not shown', async () => {
    await t.call('POST', '/api/v1/teams', { body: { name: 'dpay' } });
    const pay = await addToken(t.pool, 'op-dpay', 'operator', ['dpay']);
    const hidden = await importYaml(job('p_child', 'team: dpay\ndependsOn: [{task: d_a}]\n'), '', pay);
    expect(hidden.status).toBe(400);
    expect(hidden.body.error.details.issues[0].message).toBe('document 1: dependsOn[0].task: no task "d_a" (task "p_child" depends on it; create it first or in the same import)');
    expect((await importYaml(job('p_child', 'team: dpay\ndependsOn: [{task: d_a}]\n'))).status).toBe(200);
    const seen = await t.call('GET', '/api/v1/tasks/p_child', { token: pay });
    expect(seen.body.dependsOn).toBeUndefined();
    expect((await t.call('PUT', '/api/v1/tasks/p_child', { token: pay, body: seen.body })).status).toBe(200);
    expect(await edges()).toContain('d_a>p_child:ALL_SUCCESS');
  });

  it('dryRun writes nothing; prune (admin) deletes only the tasks of the scope carrying its managedBy marker that the YAML leaves out', async () => {
    const both = `${job('d_a')}---\n${job('d_b', 'dependsOn: [{task: d_a}]\n')}`;
    // #47: prune names the marker of its source; without one it is refused, nothing deleted.
    const unmarked = await importYaml(both, '?dryRun=true&prune=true&team=default');
    expect(unmarked.status).toBe(400);
    expect(unmarked.body.error.details.issues[0].path).toBe('managedBy');
    // d_c was imported without a marker (as the console makes tasks): no prune deletes it.
    expect((await t.call('GET', '/api/v1/tasks/d_c')).body.managedBy).toBeNull();
    expect((await importYaml(both, '?dryRun=true&prune=true&team=default&managedBy=repo-a')).body).toMatchObject({ dryRun: true, deleted: [] });
    // Imported from source repo-a, it carries the marker; another source does not prune it.
    expect((await importYaml(job('d_c', 'dependsOn: [{task: d_b}]\n'), '?managedBy=repo-a')).status).toBe(200);
    expect((await t.call('GET', '/api/v1/tasks/d_c')).body.managedBy).toBe('repo-a');
    // The list filters by the marker (the console's "managed by" column links there).
    const names = async (query: string): Promise<string[]> => ((await t.call('GET', `/api/v1/tasks${query}`)).body.items as Array<{ name: string }>).map((i) => i.name);
    expect(await names('?managedBy=repo-a')).toEqual(['d_c']);
    expect(await names('?managedBy=repo-a&q=d_c')).toEqual(['d_c']);
    expect(await names('?managedBy=repo-b')).toEqual([]);
    const bad = await t.call('GET', '/api/v1/tasks?managedBy=a%20b');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues[0].path).toBe('managedBy');
    expect((await importYaml(both, '?dryRun=true&prune=true&team=default&managedBy=repo-b')).body).toMatchObject({ dryRun: true, deleted: [] });
    const dry = await importYaml(both, '?dryRun=true&prune=true&team=default&managedBy=repo-a');
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ dryRun: true, deleted: ['d_c'], unchanged: ['d_a', 'd_b'] });
    expect((await t.call('GET', '/api/v1/tasks/d_c')).status).toBe(200);
    expect((await t.call('GET', '/api/v1/tasks/d_a')).body.managedBy).toBeNull(); // a dry run marks nothing either
    expect((await importYaml(job('d_a'), '?prune=true&managedBy=repo-a', t.tokens.operator)).status).toBe(403);
    const pruned = await importYaml(both, '?prune=true&team=default&managedBy=repo-a');
    expect(pruned.body).toMatchObject({ dryRun: false, deleted: ['d_c'] });
    expect((await t.call('GET', '/api/v1/tasks/d_c')).status).toBe(404);
    expect((await t.call('GET', '/api/v1/tasks/p_child')).status).toBe(200);
    expect((await t.call('GET', '/api/v1/tasks/d_a')).body.managedBy).toBe('repo-a');
  });
});
