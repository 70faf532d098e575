/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access -- rows are edited field by field as an older build would have written them */
import { describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow } from './definition.js';
import { STORED_DEFINITION_DEFAULTED_KEYS, trustedTaskDefinition } from './stored-definition.js';

/** What the store holds for a parsed definition: its JSON columns go through JSON text. */
const asStored = (input: Record<string, unknown>): Record<string, unknown> => JSON.parse(JSON.stringify(parseTaskDefinitionOrThrow(input))) as Record<string, unknown>;

const EXECS: Array<Record<string, unknown>> = [
  { type: 'shell', command: ['echo', '{{bizDate}}'], env: { A: 'b', S: { secretRef: 'tok' } } },
  { type: 'http', url: 'https://example.com/run', headers: { 'X-Trace': '1' } },
  { type: 'plugin', name: 'archive_files' },
  { type: 'python', code: 'print(1)', venv: '/srv/venv' },
  { type: 'sql', datasource: 'REPORTS_DB', statement: 'SELECT 1' },
];
const SCHEDULES: Array<Record<string, unknown>> = [
  { type: 'cron', expr: '0 2 * * *', timezone: 'Asia/Shanghai' },
  { type: 'fixed_rate', everySeconds: 30, startAt: '2026-12-01T10:00:00+08:00' },
  { type: 'once', at: '2026-12-01T02:00:00Z' },
  { type: 'none' },
];
const MISFIRES: Array<Record<string, unknown>> = [{ policy: 'skip' }, { policy: 'fire_once' }, { policy: 'catch_up' }];

describe('trusted reads of stored definitions (#46)', () => {
  it('gives what the full parse gives for every exec, schedule and misfire a write stores', () => {
    let n = 0;
    for (const exec of EXECS) {
      for (const schedule of SCHEDULES) {
        for (const misfire of MISFIRES) {
          const input = { name: `t${n++}`, schedule, exec, misfire, retry: { max: 2 }, tags: ['a', 'b'], sla: { startWithinSeconds: 60 } };
          const stored = asStored(input);
          expect(trustedTaskDefinition(stored)).toEqual(parseTaskDefinitionOrThrow(stored));
        }
      }
    }
  });

  it("takes the fields that must be there from today's schema", () => {
    const { exec, schedule, misfire, retry } = STORED_DEFINITION_DEFAULTED_KEYS;
    expect(Object.fromEntries(exec)).toEqual({ shell: ['shell'], http: ['method'], plugin: ['config'], python: ['args'], sql: [] });
    expect(Object.fromEntries(schedule)).toEqual({ cron: ['timezone'], fixed_rate: ['timezone'], once: ['timezone'], none: ['timezone'] });
    expect(Object.fromEntries(misfire)).toEqual({ skip: [], fire_once: [], catch_up: ['max'] });
    expect([...retry].sort()).toEqual(['backoffSeconds', 'factor', 'jitterSeconds', 'max']);
  });

  it('leaves a row of an older build, without a field added since, to the full parse (R22)', () => {
    const stored = asStored({ name: 'old', schedule: { type: 'none' }, exec: { type: 'http', url: 'http://a.example/x' }, misfire: { policy: 'catch_up' } }); // every value its default: dropping one gives the same
    const older: Array<[string, (d: Record<string, any>) => void]> = [
      ['exec.method', (d) => delete d.exec.method],
      ['retry.jitterSeconds', (d) => delete d.retry.jitterSeconds],
      ['misfire.max', (d) => delete d.misfire.max],
      ['schedule.timezone', (d) => delete d.schedule.timezone],
    ];
    for (const [field, drop] of older) {
      const row = structuredClone(stored) as Record<string, any>;
      drop(row);
      expect(trustedTaskDefinition(row), field).toBeUndefined();
      // and the full parse fills today's default in
      expect(parseTaskDefinitionOrThrow(row), field).toEqual(parseTaskDefinitionOrThrow(stored));
    }
  });

  it('leaves what it cannot shape to the full parse: an unknown variant, a column that is not an object', () => {
    const stored = asStored({ name: 'x', schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] } });
    expect(trustedTaskDefinition({ ...stored, exec: { type: 'ftp', host: 'h' } })).toBeUndefined();
    expect(trustedTaskDefinition({ ...stored, schedule: { type: 'rate', timezone: 'UTC' } })).toBeUndefined();
    expect(trustedTaskDefinition({ ...stored, retry: [] })).toBeUndefined();
    expect(trustedTaskDefinition({ ...stored, exec: 'shell' })).toBeUndefined();
    expect(trustedTaskDefinition({ ...stored, params: null })).toBeUndefined();
    expect(trustedTaskDefinition({ ...stored, tags: 'a' })).toBeUndefined();
  });
});
