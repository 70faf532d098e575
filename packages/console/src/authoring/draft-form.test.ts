import { describe, expect, it } from 'vitest';
import { bodyOf, commandOf, commandText, getField, parentsOf, setField, tagsOf, withExecType, withParents, withScheduleType } from './draft-form';

const draft = { name: 't', priority: 7, schedule: { type: 'cron', expr: '0 2 * * *', timezone: 'Asia/Shanghai' }, exec: { type: 'shell', command: ['echo', 'a b'], env: { A: '1' } } };

describe('draft form', () => {
  it('sets a nested field and keeps the others', () => {
    const next = setField(draft, 'schedule.expr', '0 3 * * *');
    expect(next).toEqual({ ...draft, schedule: { ...draft.schedule, expr: '0 3 * * *' } });
    expect(getField(setField(draft, 'retry.max', 2), 'retry.max')).toBe(2);
    expect(setField(draft, 'priority', undefined)).not.toHaveProperty('priority');
  });

  it('switches types', () => {
    expect(withScheduleType(draft, 'fixed_rate')['schedule']).toEqual({ type: 'fixed_rate', everySeconds: 3600 });
    expect(withScheduleType(draft, 'cron')).toBe(draft);
    expect(withExecType(draft, 'http')['exec']).toEqual({ type: 'http', url: '' });
  });

  it('edits argv one per line, tags, parents', () => {
    expect(commandText(draft)).toBe('echo\na b');
    expect(commandOf('echo\na b\n')).toEqual(['echo', 'a b']);
    expect(tagsOf('etl, gpu  x')).toEqual(['etl', 'gpu', 'x']);
    const withDeps = withParents(draft, [{ task: 'p1', rule: 'ALL_SUCCESS' }, { task: 'p2', rule: 'ALL_DONE' }]);
    expect(withDeps['dependsOn']).toEqual([{ task: 'p1' }, { task: 'p2', rule: 'ALL_DONE' }]);
    expect(parentsOf(withDeps)).toEqual([{ task: 'p1', rule: 'ALL_SUCCESS' }, { task: 'p2', rule: 'ALL_DONE' }]);
  });

  it('removes the edges of a task whose draft dropped dependsOn, sends the version', () => {
    const stored = { ...draft, dependsOn: [{ task: 'p1', rule: 'ALL_SUCCESS' }] };
    expect(bodyOf(draft, stored, 4)).toEqual({ ...draft, dependsOn: [], version: 4 });
    expect(bodyOf(draft, draft, 4)).toEqual({ ...draft, version: 4 });
    expect(bodyOf(draft, null, null)).toEqual(draft);
  });
});
