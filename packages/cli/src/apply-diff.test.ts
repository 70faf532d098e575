import { describe, expect, it } from 'vitest';
import { parseTaskYaml } from '@ax/core';
import { changedFields, diffTasks, hasChanges, summarize, valueChanges } from './apply-diff.js';

const defs = (yaml: string): Array<Record<string, unknown>> => {
  const r = parseTaskYaml(yaml);
  if (!r.ok) throw new Error(r.issues.map((i) => i.message).join('; '));
  return r.value;
};
const job = (name: string, extra = ''): string => `name: ${name}\nschedule: {type: none}\nexec: {type: shell, command: [echo, ${name}]}\n${extra}`;
/** A server resource of a definition: the definition plus resource fields, keys in another order. */
const resource = (def: Record<string, unknown>, dependsOn: unknown[] = []): Record<string, unknown> => ({ version: 2, nextFireTime: null, ...Object.fromEntries(Object.entries(def).reverse()), dependsOn });

describe('apply diff', () => {
  it('create, change (naming the fields), unchanged; key order and resource fields do not count', () => {
    const [a, b] = defs(`${job('a')}---\n${job('b')}`) as [Record<string, unknown>, Record<string, unknown>];
    const local = defs(`${job('a')}---\n${job('b', 'priority: 7\ndescription: x\n')}---\n${job('c')}`);
    const diff = diffTasks(local, [resource(a), resource(b)], { prune: false, managedBy: 'axctl' });
    expect(diff).toEqual([
      { name: 'a', team: 'default', action: 'unchanged', fields: [] },
      {
        name: 'b',
        team: 'default',
        action: 'change',
        fields: ['description', 'priority'],
        changes: [
          { path: 'description', from: '""', to: '"x"' },
          { path: 'priority', from: '5', to: '7' },
        ],
      },
      { name: 'c', team: 'default', action: 'create', fields: [] },
    ]);
    expect(summarize(diff)).toEqual({ create: 1, change: 1, delete: 0, unchanged: 1 });
    expect(hasChanges(diff.slice(0, 1))).toBe(false);
  });

  it('#47 the values of a change: old → new per leaf, never the text of env, headers or credentials', () => {
    const http = (timeout: number, host: string, auth: string): string =>
      `name: v\nschedule: {type: none}\ntimeoutSeconds: ${timeout}\nexec: {type: http, url: "https://${host}/x", headers: {Authorization: "${auth}"}}\n`;
    const [stored] = defs(http(600, 'a.example', 'Bearer old')) as [Record<string, unknown>];
    const [file] = defs(http(900, 'b.example', 'Bearer new-secret')) as [Record<string, unknown>];
    const changes = valueChanges(file, resource(stored));
    expect(changes).toEqual([
      { path: 'exec.headers.Authorization', from: '***', to: '***' },
      { path: 'exec.url', from: '"https://a.example/x"', to: '"https://b.example/x"' },
      { path: 'timeoutSeconds', from: '600', to: '900' },
    ]);
    expect(JSON.stringify(changes)).not.toContain('new-secret');
    const [withDeps] = defs(`${http(600, 'a.example', 'Bearer old')}dependsOn: [{task: a}]\n`) as [Record<string, unknown>];
    expect(valueChanges(withDeps, resource(stored, [{ task: 'b', rule: 'ALL_DONE' }]))).toContainEqual({ path: 'dependsOn', from: 'b:ALL_DONE', to: 'a:ALL_SUCCESS' });
  });

  it('dependsOn counts only when the file names it; its order does not count, a default rule equals ALL_SUCCESS', () => {
    const [stored] = defs(job('c')) as [Record<string, unknown>];
    const remote = resource(stored, [{ task: 'b', rule: 'ALL_SUCCESS' }, { task: 'a', rule: 'ALL_SUCCESS' }]);
    expect(changedFields(defs(job('c'))[0] as Record<string, unknown>, remote)).toEqual([]);
    expect(changedFields(defs(job('c', 'dependsOn: [{task: a}, {task: b}]\n'))[0] as Record<string, unknown>, remote)).toEqual([]);
    expect(changedFields(defs(job('c', 'dependsOn: [{task: a}]\n'))[0] as Record<string, unknown>, remote)).toEqual(['dependsOn']);
    expect(changedFields(defs(job('c', 'dependsOn: [{task: a}, {task: b, rule: ALL_DONE}]\n'))[0] as Record<string, unknown>, remote)).toEqual(['dependsOn']);
  });

  it('prune lists the tasks no file names, only of the scope and of its source, by name', () => {
    const remote = defs(`${job('z')}---\n${job('a')}---\n${job('p', 'team: pay\n')}---\n${job('console_made')}---\n${job('elsewhere')}`).map((d) => ({
      ...resource(d),
      managedBy: d['name'] === 'console_made' ? null : d['name'] === 'elsewhere' ? 'other-repo' : 'axctl',
    }));
    const local = defs(job('a'));
    expect(diffTasks(local, remote, { prune: false, managedBy: 'axctl' }).map((d) => d.action)).toEqual(['unchanged']);
    expect(diffTasks(local, remote, { prune: true, managedBy: 'axctl' }).filter((d) => d.action === 'delete').map((d) => d.name)).toEqual(['p', 'z']);
    expect(diffTasks(local, remote, { prune: true, managedBy: 'axctl', inScope: (team) => team === 'default' }).filter((d) => d.action === 'delete').map((d) => d.name)).toEqual(['z']);
    expect(diffTasks(local, remote, { prune: true, managedBy: 'other-repo' }).filter((d) => d.action === 'delete').map((d) => d.name)).toEqual(['elsewhere']);
  });
});
