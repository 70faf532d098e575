import { describe, expect, it } from 'vitest';
import { byFormField, byYamlLine, formFieldOf, issuesOfError } from './field-errors';

describe('formFieldOf', () => {
  it('maps API paths to the form field that edits them', () => {
    expect(formFieldOf('schedule.expr')).toBe('schedule.expr');
    expect(formFieldOf('dependsOn[0].task')).toBe('dependsOn');
    expect(formFieldOf('exec.command[2]')).toBe('exec.command');
    expect(formFieldOf('tags[0]')).toBe('tags');
    expect(formFieldOf('schedule')).toBe('schedule.type');
    expect(formFieldOf('priority')).toBeNull();
    expect(formFieldOf('')).toBeNull();
  });

  it('splits issues by field', () => {
    const split = byFormField([
      { path: 'schedule.expr', message: 'schedule.expr: invalid cron expression' },
      { path: 'priority', message: 'priority: must be 0..9' },
    ]);
    expect(split.fields).toEqual({ 'schedule.expr': ['schedule.expr: invalid cron expression'] });
    expect(split.other).toEqual([{ path: 'priority', message: 'priority: must be 0..9' }]);
  });
});

describe('byYamlLine', () => {
  it('puts each issue on its line', () => {
    const yaml = 'name: a\nschedule:\n  type: cron\n  expr: "0 99 * * *"\n';
    expect(byYamlLine(yaml, [{ path: 'exec', message: 'exec: required' }, { path: 'schedule.expr', message: 'bad' }])).toEqual([
      { path: 'schedule.expr', message: 'bad', line: 4 },
      { path: 'exec', message: 'exec: required' },
    ]);
  });
});

describe('issuesOfError', () => {
  it('reads a 400, a cycle and a taken name', () => {
    expect(issuesOfError('VALIDATION_FAILED', 'x', { issues: [{ path: 'a', message: 'a: bad' }] })).toEqual([{ path: 'a', message: 'a: bad' }]);
    expect(issuesOfError('CYCLE', 'dependsOn: cycle a → b → a', { cycle: ['a', 'b', 'a'] })).toEqual([{ path: 'dependsOn', message: 'dependsOn: cycle a → b → a' }]);
    expect(issuesOfError('CYCLE', '', { cycle: ['a', 'b', 'a'] })).toEqual([{ path: 'dependsOn', message: 'dependsOn: cycle a → b → a' }]);
    expect(issuesOfError('ALREADY_EXISTS', 'task "a" already exists', {})).toEqual([{ path: 'name', message: 'task "a" already exists' }]);
    expect(issuesOfError('NOT_FOUND', 'no', undefined)).toEqual([]);
  });
});
