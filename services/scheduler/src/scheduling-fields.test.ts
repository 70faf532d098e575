/** The scheduler keeps only the fields it schedules by, sharing equal values (#24). */
import { describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { INTERNED_MAX, internedCount, schedulingFieldsOf } from './scheduling-fields.js';

const parse = (name: string, team = 'payments') =>
  parseTaskDefinitionOrThrow({
    name,
    team,
    description: 'a long description the scheduler never reads',
    schedule: { type: 'cron', expr: '0 2 * * *', timezone: 'Asia/Shanghai' },
    exec: { type: 'http', url: 'http://orders.internal:8080/ax/order_stat', headers: { 'X-Tenant': 'cn' } },
    params: { region: 'cn' },
    tags: ['etl'],
    retry: { max: 3, backoffSeconds: 30 },
    misfire: { policy: 'catch_up', max: 5 },
    block: { queue: 2 },
    calendar: 'cn-workdays',
    jitterSeconds: 30,
    bizDateOffsetDays: -1,
    dependencyTimeoutSeconds: 600,
  });

describe('schedulingFieldsOf', () => {
  it('keeps what the scheduler reads, as the definition has it, and nothing else', () => {
    const def = parse('sf-a');
    const fields = schedulingFieldsOf(def);
    expect(fields).toEqual({
      name: 'sf-a',
      team: 'payments',
      enabled: true,
      schedule: def.schedule,
      misfire: def.misfire,
      block: { queue: 2 },
      retry: { max: 3 },
      jitterSeconds: 30,
      bizDateOffsetDays: -1,
      dependencyTimeoutSeconds: 600,
      calendar: 'cn-workdays',
    });
    expect(fields).not.toHaveProperty('exec');
    expect(fields).not.toHaveProperty('description');
    expect(Object.isFrozen(fields) && Object.isFrozen(fields.schedule) && Object.isFrozen(fields.misfire)).toBe(true);
  });

  it('shares equal values between tasks parsed apart, and never merges different ones', () => {
    const a = schedulingFieldsOf(parse('sf-b'));
    const b = schedulingFieldsOf(parse('sf-c'));
    expect(b.schedule).toBe(a.schedule);
    expect(b.misfire).toBe(a.misfire);
    expect(b.block).toBe(a.block);
    expect(b.retry).toBe(a.retry);
    const other = schedulingFieldsOf(parseTaskDefinitionOrThrow({ name: 'sf-d', schedule: { type: 'cron', expr: '0 2 * * *', timezone: 'UTC' }, exec: { type: 'shell', command: ['true'] } }));
    expect(other.schedule).not.toBe(a.schedule);
    expect(other.schedule).toEqual({ type: 'cron', expr: '0 2 * * *', timezone: 'UTC' });
    expect(other.calendar).toBeNull();
  });

  it(`keeps at most ${INTERNED_MAX} values: past it the table starts over, and answers stay right`, () => {
    for (let i = 0; i <= INTERNED_MAX; i += 1) schedulingFieldsOf(parse(`sf-bound-${i}`, `team-${i}`));
    expect(internedCount()).toBeLessThanOrEqual(INTERNED_MAX);
    const last = schedulingFieldsOf(parse('sf-after', 'team-after'));
    expect(last.team).toBe('team-after');
    expect(last.schedule).toEqual({ type: 'cron', expr: '0 2 * * *', timezone: 'Asia/Shanghai' });
  });
});
