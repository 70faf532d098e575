import { describe, expect, it } from 'vitest';
import { parseTaskDefinition, parseTaskYaml, planDependsOn, dependsOnOf, formatTaskYaml, type DependencyEdge } from '../index.js';

const base = { name: 'child', schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] } };

describe('dependsOn in a task definition', () => {
  it('takes a list of parents; rule defaults to ALL_SUCCESS; absent stays absent', () => {
    const r = parseTaskDefinition({ ...base, dependsOn: [{ task: 'a' }, { task: 'b', rule: 'ALL_DONE' }] });
    expect(r.ok && r.value.dependsOn).toEqual([{ task: 'a', rule: 'ALL_SUCCESS' }, { task: 'b', rule: 'ALL_DONE' }]);
    const none = parseTaskDefinition(base);
    expect(none.ok && 'dependsOn' in none.value && none.value.dependsOn !== undefined).toBe(false);
    const empty = parseTaskDefinition({ ...base, dependsOn: [] });
    expect(empty.ok && empty.value.dependsOn).toEqual([]);
  });

  it('names the field of each problem: bad name, bad rule, unknown key, self, duplicate, not a list', () => {
    const issues = (dependsOn: unknown): string[] => {
      const r = parseTaskDefinition({ ...base, dependsOn });
      return r.ok ? [] : r.issues.map((i) => i.message);
    };
    expect(issues([{ task: 'Bad Name' }])).toEqual([expect.stringMatching(/^dependsOn\[0\]\.task: must match .*"Bad Name"/)]);
    expect(issues([{ task: 'a', rule: 'ANY' }])).toEqual(['dependsOn[0].rule: must be one of "ALL_SUCCESS", "ALL_DONE", got "ANY"']);
    expect(issues([{ task: 'a', rules: 'ALL_DONE' }])[0]).toMatch(/^dependsOn\[0\]/);
    expect(issues([{ task: 'a', rules: 'ALL_DONE' }])[0]).toMatch(/rule/);
    expect(issues([{ task: 'child' }])).toEqual(['dependsOn[0].task: a task cannot depend on itself, got "child"']);
    expect(issues([{ task: 'a' }, { task: 'b' }, { task: 'a', rule: 'ALL_DONE' }])).toEqual([
      'dependsOn[2].task: "a" is listed already (dependsOn[0]); name each parent once',
    ]);
    expect(issues('a')[0]).toMatch(/^dependsOn: /);
    expect(issues([{}])[0]).toMatch(/^dependsOn\[0\]\.task: /);
  });

  it('YAML job files carry it, with the document and line of a problem', () => {
    const ok = parseTaskYaml('name: b\nschedule: {type: none}\nexec: {type: shell, command: [x]}\ndependsOn:\n  - task: a\n');
    expect(ok.ok && ok.value[0]?.dependsOn).toEqual([{ task: 'a', rule: 'ALL_SUCCESS' }]);
    const bad = parseTaskYaml('name: b\nschedule: {type: none}\nexec: {type: shell, command: [x]}\ndependsOn:\n  - task: a\n    rule: SOMETIMES\n', 'b.yaml');
    expect(bad.ok ? [] : bad.issues.map((i) => [i.message, i.line])).toEqual([['b.yaml document 1: dependsOn[0].rule: must be one of "ALL_SUCCESS", "ALL_DONE", got "SOMETIMES"', 6]]);
  });
});

describe('planDependsOn', () => {
  const e = (parent: string, child: string, rule: DependencyEdge['rule'] = 'ALL_SUCCESS'): DependencyEdge => ({ parent, child, rule });

  it('adds, changes and removes only the incoming edges of the tasks named', () => {
    const existing = [e('a', 'c'), e('b', 'c'), e('x', 'y')];
    const plan = planDependsOn(existing, new Map([['c', [{ task: 'a', rule: 'ALL_DONE' as const }, { task: 'd', rule: 'ALL_SUCCESS' as const }]]]));
    expect(plan).toEqual({ add: [e('d', 'c')], change: [e('a', 'c', 'ALL_DONE')], remove: [e('b', 'c')], cycle: null });
    expect(planDependsOn(existing, new Map([['c', []]])).remove).toEqual([e('a', 'c'), e('b', 'c')]);
    expect(planDependsOn(existing, new Map())).toEqual({ add: [], change: [], remove: [], cycle: null });
  });

  it('names the cycle a → b → a, also across tasks written together and with stored edges', () => {
    const together = planDependsOn([], new Map([['a', [{ task: 'b', rule: 'ALL_SUCCESS' as const }]], ['b', [{ task: 'a', rule: 'ALL_SUCCESS' as const }]]]));
    expect(together.cycle).toEqual(['b', 'a', 'b']);
    const stored = planDependsOn([e('a', 'b'), e('b', 'c')], new Map([['a', [{ task: 'c', rule: 'ALL_SUCCESS' as const }]]]));
    expect(stored.cycle).toEqual(['a', 'b', 'c', 'a']);
    // Removing the edge that closed it in the same write: no cycle.
    const rewired = planDependsOn([e('a', 'b')], new Map([['b', []], ['a', [{ task: 'b', rule: 'ALL_SUCCESS' as const }]]]));
    expect(rewired).toMatchObject({ add: [e('b', 'a')], remove: [e('a', 'b')], cycle: null });
  });

  it('keeps edges the caller cannot see and drops the edges of deleted tasks', () => {
    const existing = [e('hidden', 'c'), e('a', 'c'), e('c', 'gone')];
    const plan = planDependsOn(existing, new Map([['c', []]]), { keep: (edge) => edge.parent === 'hidden', deleted: new Set(['gone']) });
    expect(plan.remove).toEqual([e('a', 'c'), e('c', 'gone')]);
    expect(dependsOnOf(existing, 'c')).toEqual([{ task: 'a', rule: 'ALL_SUCCESS' }, { task: 'hidden', rule: 'ALL_SUCCESS' }]);
  });
});

describe('formatTaskYaml', () => {
  it('writes the definition fields with dependsOn, and the result parses back to the same definitions', () => {
    const parsed = parseTaskYaml('name: b\nschedule: {type: none}\nexec: {type: shell, command: [x]}\ndependsOn: [{task: a}]\n---\nname: a\nschedule: {type: none}\nexec: {type: shell, command: [y]}\n');
    if (!parsed.ok) throw new Error('invalid');
    const text = formatTaskYaml(parsed.value.map((d) => ({ ...d, version: 3, createdAt: 'x' })));
    expect(text).toContain('dependsOn:\n  - task: a\n    rule: ALL_SUCCESS\n');
    expect(text).not.toContain('version');
    const again = parseTaskYaml(text);
    expect(again.ok && again.value).toEqual(parsed.value);
  });
});
