import { describe, expect, it } from 'vitest';
import { auditChanges } from './audit-diff';

describe('auditChanges', () => {
  it('a replace: the changed leaves, old → new, not the unchanged ones', () => {
    const before = { name: 'nightly', schedule: { type: 'cron', expr: '0 2 * * *', timezone: 'UTC' }, priority: 5, tags: ['a'], version: 3 };
    const after = { name: 'nightly', schedule: { type: 'cron', expr: '0 3 * * *', timezone: 'UTC' }, priority: 5, tags: ['a', 'b'], version: 4, description: 'x' };
    expect(auditChanges(before, after)).toEqual([
      { path: 'description', kind: 'added', to: '"x"' },
      { path: 'schedule.expr', kind: 'changed', from: '"0 2 * * *"', to: '"0 3 * * *"' },
      { path: 'tags', kind: 'changed', from: '["a"]', to: '["a","b"]' },
      { path: 'version', kind: 'changed', from: '3', to: '4' },
    ]);
  });

  it('a create lists every leaf added; a delete every leaf removed', () => {
    expect(auditChanges(undefined, { id: '7', name: 'ci', role: 'operator', teams: ['pay'] })).toEqual([
      { path: 'id', kind: 'added', to: '"7"' },
      { path: 'name', kind: 'added', to: '"ci"' },
      { path: 'role', kind: 'added', to: '"operator"' },
      { path: 'teams', kind: 'added', to: '["pay"]' },
    ]);
    expect(auditChanges({ name: 'cal', dates: ['2026-12-25'] }, undefined)).toEqual([
      { path: 'dates', kind: 'removed', from: '["2026-12-25"]' },
      { path: 'name', kind: 'removed', from: '"cal"' },
    ]);
  });

  it('shows secrets as the API does: values under env, headers and credential keys are ***, even when the entry held text', () => {
    const before = { exec: { type: 'http', url: 'https://***:***@a.example/', headers: { Authorization: '***' } } };
    const after = { exec: { type: 'http', url: 'https://***:***@b.example/', headers: { Authorization: 'Bearer leaked', 'X-New': '***' } }, token: 'axt_plain' };
    const changes = auditChanges(before, after);
    expect(changes).toEqual([
      { path: 'exec.headers.Authorization', kind: 'changed', from: '***', to: '***' },
      { path: 'exec.headers.X-New', kind: 'added', to: '***' },
      { path: 'exec.url', kind: 'changed', from: '"https://***:***@a.example/"', to: '"https://***:***@b.example/"' },
      { path: 'token', kind: 'added', to: '***' },
    ]);
    expect(JSON.stringify(changes)).not.toMatch(/leaked|axt_plain/);
  });

  it('nothing changed: no rows; bare values: one row at `value`', () => {
    expect(auditChanges({ a: 1 }, { a: 1 })).toEqual([]);
    expect(auditChanges(undefined, undefined)).toEqual([]);
    expect(auditChanges('paused', 'running')).toEqual([{ path: 'value', kind: 'changed', from: '"paused"', to: '"running"' }]);
  });
});
