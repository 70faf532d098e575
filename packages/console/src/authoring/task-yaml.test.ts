import { describe, expect, it } from 'vitest';
import { definitionOf, lineOfPath, newTaskTeam, newTaskYaml, parseDraftYaml, pathSegments, toYaml } from './task-yaml';

const DOC = `name: t1
schedule:
  type: cron
  expr: "0 99 * * *"
  timezone: Asia/Shanghai
exec:
  type: shell
  command:
    - echo
    - hi
dependsOn:
  - task: p1
  - task: p2
    rule: ALL_DONE
`;

describe('parseDraftYaml', () => {
  it('reads one mapping', () => {
    const parsed = parseDraftYaml(DOC);
    expect(parsed).toMatchObject({ ok: true, value: { name: 't1', schedule: { expr: '0 99 * * *' }, dependsOn: [{ task: 'p1' }, { task: 'p2', rule: 'ALL_DONE' }] } });
    expect(parseDraftYaml(newTaskYaml()).ok).toBe(true);
    // A token of one team starts its new task in that team, not in `default` it may not cover (#47).
    expect(parseDraftYaml(newTaskYaml(newTaskTeam(['payments'])))).toMatchObject({ ok: true, value: { team: 'payments' } });
    expect(newTaskTeam(['*'])).toBe('default');
    expect(newTaskTeam(['a', 'b'])).toBe('default');
    expect(newTaskTeam(undefined)).toBe('default');
  });

  it('names the line of a syntax error, refuses several documents and non-mappings', () => {
    const bad = parseDraftYaml('name: a\nschedule: {type: cron\nexec: x\n');
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.line).toBeGreaterThanOrEqual(2);
    expect(parseDraftYaml('name: a\n---\nname: b\n')).toMatchObject({ ok: false, message: expect.stringContaining('2 documents') as unknown });
    expect(parseDraftYaml('- a\n- b\n')).toMatchObject({ ok: false });
    expect(parseDraftYaml('')).toMatchObject({ ok: false });
  });
});

describe('lineOfPath', () => {
  it('finds the line of the field the API names', () => {
    expect(lineOfPath(DOC, 'schedule.expr')).toBe(4);
    expect(lineOfPath(DOC, 'exec.command[1]')).toBe(10);
    expect(lineOfPath(DOC, 'dependsOn[1].rule')).toBe(14);
    expect(lineOfPath(DOC, 'dependsOn[1].task')).toBe(13);
    expect(lineOfPath(DOC, 'dependsOn')).toBe(11);
  });

  it('falls back to the nearest parent, undefined for a field not there at all', () => {
    expect(lineOfPath(DOC, 'schedule.everySeconds')).toBe(2);
    expect(lineOfPath(DOC, 'retry.max')).toBeUndefined();
  });

  it('parses API paths', () => {
    expect(pathSegments('dependsOn[0].task')).toEqual(['dependsOn', 0, 'task']);
    expect(pathSegments('params["a b"]')).toEqual(['params', 'a b']);
    expect(pathSegments('')).toEqual([]);
  });
});

describe('definitionOf / toYaml', () => {
  it('drops the resource-only fields and round-trips', () => {
    const resource = { name: 'x', schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] }, version: 3, createdAt: 'c', updatedAt: 'u', nextFireTime: null, lastFireTime: null, skippedCount: 0, pausedReason: null };
    const def = definitionOf(resource);
    expect(def).toEqual({ name: 'x', schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] } });
    expect(parseDraftYaml(toYaml(def))).toEqual({ ok: true, value: def });
  });
});
