import { describe, expect, it } from 'vitest';
import type { Schedule } from '../schedule/types.js';
import { ValidationError } from '../errors.js';
import { isQueueBlock, maxWaitingOf, parseTaskDefinition, parseTaskDefinitionOrThrow, type TaskDefinition, type TaskDefinitionInput } from './definition.js';
import { redactTaskSecrets } from './redact.js';
import { expandExecTemplates } from './template.js';

const minimal = {
  name: 'order_stat_daily',
  schedule: { type: 'cron', expr: '0 2 * * *' },
  exec: { type: 'http', url: 'http://orders.internal:8080/ax/order_stat' },
} satisfies TaskDefinitionInput;

function ok(input: unknown): TaskDefinition {
  const result = parseTaskDefinition(input);
  if (!result.ok) throw new Error(`expected valid, got ${JSON.stringify(result.issues)}`);
  return result.value;
}

function issuesOf(input: unknown): Array<{ path: string; message: string }> {
  const result = parseTaskDefinition(input);
  if (result.ok) throw new Error('expected issues, got a valid definition');
  return result.issues;
}

describe('parseTaskDefinition defaults', () => {
  it('fills every default ADMIN-API.md lists', () => {
    expect(ok(minimal)).toEqual({
      name: 'order_stat_daily',
      description: '',
      team: 'default',
      owner: '',
      schedule: { type: 'cron', expr: '0 2 * * *', timezone: 'UTC' },
      exec: { type: 'http', url: 'http://orders.internal:8080/ax/order_stat', method: 'POST' },
      params: {},
      tags: [],
      priority: 5,
      timeoutSeconds: 3600,
      retry: { max: 0, backoffSeconds: 30, factor: 2, jitterSeconds: 10 },
      misfire: { policy: 'fire_once' },
      block: 'serial',
      maxLatenessSeconds: null,
      route: 'load',
      bizDateOffsetDays: 0,
      calendar: null,
      jitterSeconds: 0,
      pauseAfterFailures: null,
      sla: null,
      enabled: true,
      dependencyTimeoutSeconds: null,
    });
  });

  it('accepts the full example of the contract unchanged', () => {
    const full = {
      name: 'order_stat_daily',
      description: 'daily order statistics',
      team: 'data',
      owner: 'data-team',
      schedule: { type: 'cron', expr: '0 2 * * *', timezone: 'Asia/Shanghai' },
      exec: { type: 'http', url: 'http://orders.internal:8080/ax/order_stat', method: 'POST' },
      params: { source: 'order_table' },
      tags: ['etl'],
      priority: 5,
      timeoutSeconds: 120,
      retry: { max: 2, backoffSeconds: 30, factor: 2, jitterSeconds: 10 },
      misfire: { policy: 'fire_once' },
      block: 'serial',
      maxLatenessSeconds: null,
      route: 'load',
      bizDateOffsetDays: 0,
      calendar: null,
      jitterSeconds: 0,
      pauseAfterFailures: null,
      sla: null,
      enabled: true,
      dependencyTimeoutSeconds: null,
    };
    expect(ok(full)).toEqual(full);
  });

  it('refuses a team name outside ^[a-z][a-z0-9_-]{0,63}$', () => {
    for (const team of ['Data', '1data', 'a.b', 'x'.repeat(65), '']) {
      expect(issuesOf({ ...minimal, team }).map((i) => i.path)).toEqual(['team']);
    }
  });

  it('fills a partial retry from the default retry', () => {
    expect(ok({ ...minimal, retry: { max: 3 } }).retry).toEqual({ max: 3, backoffSeconds: 30, factor: 2, jitterSeconds: 10 });
    expect(ok({ ...minimal, retry: {} }).retry).toEqual({ max: 0, backoffSeconds: 30, factor: 2, jitterSeconds: 10 });
  });

  it('does not share default objects between parses', () => {
    const a = ok(minimal);
    a.params.x = 1;
    a.retry.max = 9;
    a.tags.push('mutated');
    const b = ok(minimal);
    expect(b.params).toEqual({});
    expect(b.retry.max).toBe(0);
    expect(b.tags).toEqual([]);
  });

  it('gives catch_up a default cap of 10', () => {
    expect(ok({ ...minimal, misfire: { policy: 'catch_up' } }).misfire).toEqual({ policy: 'catch_up', max: 10 });
    expect(ok({ ...minimal, misfire: { policy: 'catch_up', max: 3 } }).misfire).toEqual({ policy: 'catch_up', max: 3 });
  });

  it('accepts every schedule type, with UTC as the default zone', () => {
    expect(ok({ ...minimal, schedule: { type: 'cron', expr: '*/10 * * * * *' } }).schedule).toEqual({
      type: 'cron',
      expr: '*/10 * * * * *',
      timezone: 'UTC',
    });
    expect(ok({ ...minimal, schedule: { type: 'fixed_rate', everySeconds: 30 } }).schedule).toEqual({
      type: 'fixed_rate',
      everySeconds: 30,
      timezone: 'UTC',
    });
    expect(ok({ ...minimal, schedule: { type: 'once', at: '2026-12-01T02:00:00.000Z' } }).schedule).toEqual({
      type: 'once',
      at: '2026-12-01T02:00:00.000Z',
      timezone: 'UTC',
    });
    expect(ok({ ...minimal, schedule: { type: 'none', timezone: 'Europe/Berlin' } }).schedule).toEqual({
      type: 'none',
      timezone: 'Europe/Berlin',
    });
  });

  it('normalises ISO instants with an offset to UTC with milliseconds', () => {
    const def = ok({ ...minimal, schedule: { type: 'fixed_rate', everySeconds: 60, startAt: '2026-12-01T10:00:00+08:00' } });
    expect(def.schedule).toMatchObject({ startAt: '2026-12-01T02:00:00.000Z' });
    expect(ok({ ...minimal, schedule: { type: 'once', at: '2026-12-01T02:00:00Z' } }).schedule).toMatchObject({
      at: '2026-12-01T02:00:00.000Z',
    });
  });

  it('produces a schedule assignable to the Schedule union of schedule/types.ts', () => {
    const schedule: Schedule = ok(minimal).schedule;
    expect(schedule.type).toBe('cron');
  });

  it('accepts every exec type with its defaults', () => {
    expect(ok({ ...minimal, exec: { type: 'shell', command: ['python3', 'run.py', '--date', '{{bizDate}}'] } }).exec).toEqual({
      type: 'shell',
      command: ['python3', 'run.py', '--date', '{{bizDate}}'],
      shell: false,
    });
    expect(
      ok({
        ...minimal,
        exec: { type: 'shell', command: ['env'], env: { A: 'x', TOKEN: { secretRef: 'MY_TOKEN' } }, cwd: '/srv', shell: true },
      }).exec,
    ).toEqual({ type: 'shell', command: ['env'], env: { A: 'x', TOKEN: { secretRef: 'MY_TOKEN' } }, cwd: '/srv', shell: true });
    expect(ok({ ...minimal, exec: { type: 'plugin', name: 'archive_files' } }).exec).toEqual({
      type: 'plugin',
      name: 'archive_files',
      config: {},
    });
    expect(
      ok({ ...minimal, exec: { type: 'http', url: 'https://x.example/a', method: 'PUT', headers: { Authorization: { secretRef: 'API_TOKEN' } } } })
        .exec,
    ).toEqual({ type: 'http', url: 'https://x.example/a', method: 'PUT', headers: { Authorization: { secretRef: 'API_TOKEN' } } });
  });

  it('#22 accepts python and sql execs with their defaults', () => {
    expect(ok({ ...minimal, exec: { type: 'python', script: '/srv/jobs/report.py', args: ['--date', '{{bizDate}}'] } }).exec).toEqual({
      type: 'python',
      script: '/srv/jobs/report.py',
      args: ['--date', '{{bizDate}}'],
    });
    expect(ok({ ...minimal, exec: { type: 'python', code: 'print(1)' } }).exec).toEqual({ type: 'python', code: 'print(1)', args: [] });
    const full = {
      type: 'python',
      script: 'report.py',
      venv: '/opt/venvs/report',
      env: { A: 'x', TOKEN: { secretRef: 'MY_TOKEN' } },
      cwd: '/srv/jobs',
      args: [],
    };
    expect(ok({ ...minimal, exec: full }).exec).toEqual(full);
    expect(ok({ ...minimal, exec: { type: 'python', code: 'print(1)', interpreter: 'python3.11' } }).exec).toMatchObject({ interpreter: 'python3.11' });
    expect(ok({ ...minimal, exec: { type: 'python', code: 'print(1)', interpreter: '/usr/bin/python3' } }).exec).toMatchObject({ interpreter: '/usr/bin/python3' });
    expect(ok({ ...minimal, exec: { type: 'sql', datasource: 'REPORTS_DB', statement: 'UPDATE t SET a = 1' } }).exec).toEqual({
      type: 'sql',
      datasource: 'REPORTS_DB',
      statement: 'UPDATE t SET a = 1',
    });
    // JSON text in SQL is not a placeholder.
    const script = `INSERT INTO t (j) VALUES ('{"a":{"b":1}}'); DELETE FROM t WHERE d < @ax_biz_date;`;
    expect(ok({ ...minimal, exec: { type: 'sql', datasource: 'db.reports-1', script } }).exec).toEqual({ type: 'sql', datasource: 'db.reports-1', script });
  });

  it('#22 redacts literal python env values for viewers as it does for shell', () => {
    const def = ok({ ...minimal, exec: { type: 'python', code: 'print(1)', env: { A: 'clear', B: { secretRef: 'X_1' } } } });
    expect(redactTaskSecrets(def).exec).toMatchObject({ env: { A: '***', B: { secretRef: 'X_1' } } });
  });

  it('#22 expands templates in python args, never in sql', () => {
    const context = { bizDate: '2026-12-01', expectedTime: '2026-12-01T02:00:00.000Z', params: { x: 'a b;c' } };
    const python = ok({ ...minimal, exec: { type: 'python', code: 'print(1)', args: ['--date', '{{bizDate}}', '{{params.x}}'] } }).exec;
    expect(expandExecTemplates(python, context)).toMatchObject({ args: ['--date', '2026-12-01', 'a b;c'] });
    const sql = ok({ ...minimal, exec: { type: 'sql', datasource: 'DB', statement: 'SELECT @ax_biz_date' } }).exec;
    expect(expandExecTemplates(sql, context)).toEqual(sql);
  });

  it('deduplicates tags, keeping their order', () => {
    expect(ok({ ...minimal, tags: ['etl', 'gpu', 'etl'] }).tags).toEqual(['etl', 'gpu']);
  });

  it('accepts block {"queue": N} next to the named strategies', () => {
    expect(ok({ ...minimal, block: { queue: 5 } }).block).toEqual({ queue: 5 });
    expect(ok({ ...minimal, block: 'cover' }).block).toBe('cover');
    expect(maxWaitingOf({ queue: 5 })).toBe(5);
    expect(maxWaitingOf('serial')).toBe(1);
    expect(maxWaitingOf('parallel')).toBeNull();
    expect(isQueueBlock({ queue: 1 })).toBe(true);
    expect(isQueueBlock('serial')).toBe(false);
  });

  it('accepts jitterSeconds, pauseAfterFailures and sla as the contract writes them', () => {
    const def = ok({ ...minimal, jitterSeconds: 30, pauseAfterFailures: 3, sla: { startWithinSeconds: 60, finishWithinSeconds: 3_600 } });
    expect(def).toMatchObject({ jitterSeconds: 30, pauseAfterFailures: 3, sla: { startWithinSeconds: 60, finishWithinSeconds: 3_600 } });
    expect(ok({ ...minimal, sla: { finishWithinSeconds: 5 } }).sla).toEqual({ finishWithinSeconds: 5 });
    expect(ok({ ...minimal, jitterSeconds: 29, maxLatenessSeconds: 30 }).jitterSeconds).toBe(29);
    expect(ok({ ...minimal, jitterSeconds: 3_600, pauseAfterFailures: 1_000 }).pauseAfterFailures).toBe(1_000);
  });

  it('accepts the bounds of numeric fields', () => {
    expect(ok({ ...minimal, priority: 0 }).priority).toBe(0);
    expect(ok({ ...minimal, priority: 9 }).priority).toBe(9);
    expect(ok({ ...minimal, maxLatenessSeconds: 60 }).maxLatenessSeconds).toBe(60);
    expect(ok({ ...minimal, bizDateOffsetDays: -1 }).bizDateOffsetDays).toBe(-1);
    expect(ok({ ...minimal, dependencyTimeoutSeconds: 600 }).dependencyTimeoutSeconds).toBe(600);
  });
});

describe('#18.5 a shell: true task with a placeholder inside quotes is refused when saved', () => {
  it('names the command element, and accepts the same placeholder as a word of its own', () => {
    const quoted = { ...minimal, exec: { type: 'shell', command: ['echo', '"day {{params.x}}"'], shell: true } };
    const issues = issuesOf(quoted);
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe('exec.command[1]');
    expect(issues[0]?.message).toMatch(/placeholder "\{\{params\.x\}\}" is inside double quotes/);
    expect(ok({ ...minimal, exec: { type: 'shell', command: ['echo', 'day', '{{params.x}}'], shell: true } }).exec).toMatchObject({ shell: true });
    // Without shell: true each element is its own argv entry: quotes in it are literal, nothing to refuse.
    expect(ok({ ...minimal, exec: { type: 'shell', command: ['echo', '"day {{params.x}}"'] } }).exec).toMatchObject({ shell: false });
  });
});

describe('parseTaskDefinition refusals', () => {
  it.each([
    ['name', { ...minimal, name: 'Order' }, 'name: must match ^[a-z0-9][a-z0-9_.-]{0,127}$'],
    ['name with a space', { ...minimal, name: 'order stat' }, 'name: must match ^[a-z0-9][a-z0-9_.-]{0,127}$ (lower case letters, digits, _ . -; at most 128 characters), got "order stat"'],
    ['name too long', { ...minimal, name: `a${'b'.repeat(128)}` }, 'name: must match'],
    ['name leading dot', { ...minimal, name: '.hidden' }, 'got ".hidden"'],
    ['priority', { ...minimal, priority: 12 }, 'priority: must be at most 9, got 12'],
    ['priority negative', { ...minimal, priority: -1 }, 'priority: must be at least 0, got -1'],
    ['priority fraction', { ...minimal, priority: 2.5 }, 'priority: expected an integer, got 2.5'],
    ['timeout negative', { ...minimal, timeoutSeconds: -5 }, 'timeoutSeconds: must be at least 1, got -5'],
    ['timeout zero', { ...minimal, timeoutSeconds: 0 }, 'timeoutSeconds: must be at least 1, got 0'],
    ['timeout string', { ...minimal, timeoutSeconds: '120' }, 'timeoutSeconds: expected a number, got "120"'],
    ['lateness zero', { ...minimal, maxLatenessSeconds: 0 }, 'maxLatenessSeconds: must be at least 1, got 0'],
    ['offset fraction', { ...minimal, bizDateOffsetDays: 0.5 }, 'bizDateOffsetDays: expected an integer, got 0.5'],
    ['enabled', { ...minimal, enabled: 'yes' }, 'enabled: expected true or false, got "yes"'],
    ['block', { ...minimal, block: 'queue' }, 'block: must be one of "parallel", "serial", "discard", "cover" or {"queue":N} (N 1..1000), got "queue"'],
    ['block queue zero', { ...minimal, block: { queue: 0 } }, 'block.queue: must be at least 1, got 0'],
    ['block queue too long', { ...minimal, block: { queue: 1_001 } }, 'block.queue: must be at most 1000, got 1001'],
    ['block queue fraction', { ...minimal, block: { queue: 2.5 } }, 'block: must be one of'],
    ['block queue extra field', { ...minimal, block: { queue: 2, max: 3 } }, 'block.max: unknown field'],
    ['route', { ...minimal, route: 'random' }, 'route: must be one of "load", "round_robin", "consistent_hash", "broadcast", got "random"'],
    ['misfire policy', { ...minimal, misfire: { policy: 'later' } }, 'misfire.policy: must be one of "skip", "fire_once", "catch_up", got "later"'],
    ['catch_up max', { ...minimal, misfire: { policy: 'catch_up', max: 0 } }, 'misfire.max: must be at least 1, got 0'],
    ['skip with max', { ...minimal, misfire: { policy: 'skip', max: 3 } }, 'misfire.max: unknown field'],
    ['retry max', { ...minimal, retry: { max: -1 } }, 'retry.max: must be at least 0, got -1'],
    ['retry factor', { ...minimal, retry: { factor: 0.5 } }, 'retry.factor: must be at least 1, got 0.5'],
    ['tags', { ...minimal, tags: ['a,b'] }, 'tags[0]: must be a tag'],
    ['params', { ...minimal, params: [1] }, 'params: expected an object, got an array of 1'],
    ['schedule type', { ...minimal, schedule: { type: 'crn', expr: '* * * * *' } }, 'schedule.type: must be one of "cron", "fixed_rate", "once", "none", got "crn"'],
    ['schedule missing', { name: 'a', exec: minimal.exec }, 'schedule: is required'],
    ['everySeconds', { ...minimal, schedule: { type: 'fixed_rate', everySeconds: 0 } }, 'schedule.everySeconds: must be at least 1, got 0'],
    ['startAt', { ...minimal, schedule: { type: 'fixed_rate', everySeconds: 5, startAt: 'tomorrow' } }, 'schedule.startAt: must be an ISO-8601 date-time'],
    ['once.at local', { ...minimal, schedule: { type: 'once', at: '2026-12-01T02:00:00' } }, 'schedule.at: must be an ISO-8601 date-time with Z or an offset'],
    ['once.at missing', { ...minimal, schedule: { type: 'once' } }, 'schedule.at: is required'],
    ['exec type', { ...minimal, exec: { type: 'ssh' } }, 'exec.type: must be one of "shell", "http", "plugin", "python", "sql", got "ssh"'],
    ['empty command', { ...minimal, exec: { type: 'shell', command: [] } }, 'exec.command: must have at least one item'],
    ['empty program', { ...minimal, exec: { type: 'shell', command: [''] } }, 'exec.command[0]: the program (first element) must not be empty'],
    ['command not strings', { ...minimal, exec: { type: 'shell', command: ['ls', 3] } }, 'exec.command[1]: expected a string, got 3'],
    ['command string', { ...minimal, exec: { type: 'shell', command: 'ls -l' } }, 'exec.command: expected an array, got "ls -l"'],
    ['env value', { ...minimal, exec: { type: 'shell', command: ['x'], env: { A: 5 } } }, 'exec.env.A: must be a string or {"secretRef":"NAME"}, got 5'],
    ['secretRef name', { ...minimal, exec: { type: 'shell', command: ['x'], env: { A: { secretRef: '../b/X' } } } }, 'exec.env.A.secretRef: must be a secret name'],
    ['secretRef dot-dot', { ...minimal, exec: { type: 'shell', command: ['x'], env: { A: { secretRef: '..' } } } }, 'exec.env.A.secretRef: must be a secret name'],
    ['http url', { ...minimal, exec: { type: 'http', url: 'ftp://x.example/a' } }, 'exec.url: must be an http:// or https:// URL, got "ftp://x.example/a"'],
    ['http url garbage', { ...minimal, exec: { type: 'http', url: 'not a url' } }, 'exec.url: must be an http:// or https:// URL, got "not a url"'],
    ['http method', { ...minimal, exec: { type: 'http', url: 'http://a', method: 'FETCH' } }, 'exec.method: must be one of "GET", "POST", "PUT", "PATCH", "DELETE", got "FETCH"'],
    ['reserved header', { ...minimal, exec: { type: 'http', url: 'http://a', headers: { 'X-Ax-Signature': 'x' } } }, 'header "X-Ax-Signature" is set by ax'],
    ['plugin name', { ...minimal, exec: { type: 'plugin', name: '../etc/passwd' } }, 'exec.name: must be a plugin name'],
    ['plugin config', { ...minimal, exec: { type: 'plugin', name: 'p', config: 'x' } }, 'exec.config: expected an object, got "x"'],
    ['unknown template', { ...minimal, exec: { type: 'shell', command: ['run', '{{bizdate}}'] } }, 'exec.command[1]: unknown placeholder "{{bizdate}}"'],
    ['python neither script nor code', { ...minimal, exec: { type: 'python' } }, 'exec.script: is required: give the script to run (a file) or code (inline Python)'],
    ['python script and code', { ...minimal, exec: { type: 'python', script: '/a.py', code: 'print(1)' } }, 'exec.code: give either script or code, not both'],
    ['python empty script', { ...minimal, exec: { type: 'python', script: '' } }, 'exec.script: must not be empty'],
    ['python blank code', { ...minimal, exec: { type: 'python', code: '  \n' } }, 'exec.code: must not be empty'],
    ['python code too long', { ...minimal, exec: { type: 'python', code: 'x'.repeat(65_537) } }, 'exec.code: must be at most 65536 bytes'],
    ['python interpreter and venv', { ...minimal, exec: { type: 'python', code: 'print(1)', interpreter: '/usr/bin/python3', venv: '/opt/v' } }, 'exec.venv: give either interpreter or venv, not both'],
    ['python relative venv', { ...minimal, exec: { type: 'python', code: 'print(1)', venv: 'venvs/x' } }, 'exec.venv: must be the absolute path of a virtualenv, got "venvs/x"'],
    ['python interpreter', { ...minimal, exec: { type: 'python', code: 'print(1)', interpreter: 'bin/python -u' } }, 'exec.interpreter: must be an absolute path or the name of a program on PATH (like "python3"), got "bin/python -u"'],
    ['python args not strings', { ...minimal, exec: { type: 'python', script: 'a.py', args: ['--n', 3] } }, 'exec.args[1]: expected a string, got 3'],
    ['python unknown template', { ...minimal, exec: { type: 'python', script: 'a.py', args: ['{{bizdate}}'] } }, 'exec.args[0]: unknown placeholder "{{bizdate}}"'],
    ['python env secretRef', { ...minimal, exec: { type: 'python', script: 'a.py', env: { A: { secretRef: '../x' } } } }, 'exec.env.A.secretRef: must be a secret name'],
    ['python typo', { ...minimal, exec: { type: 'python', script: 'a.py', argv: [] } }, 'exec.argv: unknown field (did you mean "args"?)'],
    ['sql datasource', { ...minimal, exec: { type: 'sql', datasource: '../db', statement: 'SELECT 1' } }, 'exec.datasource: must be a secret name (1-128 letters, digits, "_", ".", "-"; not "." or ".."), got "../db"'],
    ['sql datasource missing', { ...minimal, exec: { type: 'sql', statement: 'SELECT 1' } }, 'exec.datasource: is required'],
    ['sql neither statement nor script', { ...minimal, exec: { type: 'sql', datasource: 'DB' } }, 'exec.statement: is required: give one statement, or a script of several'],
    ['sql statement and script', { ...minimal, exec: { type: 'sql', datasource: 'DB', statement: 'SELECT 1', script: 'SELECT 2;' } }, 'exec.script: give either statement or script, not both'],
    ['sql blank statement', { ...minimal, exec: { type: 'sql', datasource: 'DB', statement: ' ' } }, 'exec.statement: must not be empty'],
    ['sql template', { ...minimal, exec: { type: 'sql', datasource: 'DB', script: "DELETE FROM t WHERE d = '{{bizDate}}';" } }, 'exec.script: placeholder "{{bizDate}}": templates are not expanded in SQL'],
    ['unknown template in plugin config', { ...minimal, exec: { type: 'plugin', name: 'p', config: { a: ['{{nope}}'] } } }, 'exec.config.a[0]: unknown placeholder "{{nope}}"'],
    ['dependency timeout', { ...minimal, dependencyTimeoutSeconds: 0 }, 'dependencyTimeoutSeconds: must be at least 1, got 0'],
    ['jitter negative', { ...minimal, jitterSeconds: -1 }, 'jitterSeconds: must be at least 0, got -1'],
    ['jitter fraction', { ...minimal, jitterSeconds: 1.5 }, 'jitterSeconds: expected an integer, got 1.5'],
    ['jitter over an hour', { ...minimal, jitterSeconds: 3_601 }, 'jitterSeconds: must be at most 3600, got 3601'],
    ['jitter not below lateness', { ...minimal, jitterSeconds: 30, maxLatenessSeconds: 30 }, 'jitterSeconds: must be less than maxLatenessSeconds (30), got 30'],
    ['pauseAfterFailures zero', { ...minimal, pauseAfterFailures: 0 }, 'pauseAfterFailures: must be at least 1, got 0'],
    ['pauseAfterFailures string', { ...minimal, pauseAfterFailures: '3' }, 'pauseAfterFailures: expected a number, got "3"'],
    ['pauseAfterFailures huge', { ...minimal, pauseAfterFailures: 1_001 }, 'pauseAfterFailures: must be at most 1000, got 1001'],
    ['sla empty', { ...minimal, sla: {} }, 'sla: must name startWithinSeconds, finishWithinSeconds or both'],
    ['sla zero', { ...minimal, sla: { finishWithinSeconds: 0 } }, 'sla.finishWithinSeconds: must be at least 1, got 0'],
    ['sla typo', { ...minimal, sla: { finishWithin: 60 } }, 'sla.finishWithin: unknown field'],
    ['sla number', { ...minimal, sla: 60 }, 'sla: expected an object, got 60'],
    ['calendar name', { ...minimal, calendar: 'Bank Holidays' }, 'calendar: must be a calendar name matching ^[a-z0-9][a-z0-9_.-]{0,63}$, got "Bank Holidays"'],
    ['calendar type', { ...minimal, calendar: 5 }, 'calendar: expected a string, got 5'],
  ])('refuses a bad %s with a message naming field and value', (_label, input, expected) => {
    const issues = issuesOf(input);
    expect(issues.map((i) => i.message).join('\n')).toContain(expected);
  });

  it('names the time zone it does not know', () => {
    const issues = issuesOf({ ...minimal, schedule: { type: 'cron', expr: '0 2 * * *', timezone: 'Mars/Olympus' } });
    expect(issues).toEqual([{ path: 'schedule.timezone', message: 'schedule.timezone: unknown time zone "Mars/Olympus"' }]);
  });

  it('names the cron expression it cannot read', () => {
    const issues = issuesOf({ ...minimal, schedule: { type: 'cron', expr: 'every day' } });
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe('schedule.expr');
    expect(issues[0]?.message).toMatch(/^schedule\.expr: invalid cron expression "every day": \S/);
  });

  it('refuses unknown top-level fields and suggests the field meant', () => {
    const issues = issuesOf({ ...minimal, priorty: 3 });
    expect(issues).toEqual([{ path: 'priorty', message: 'priorty: unknown field (did you mean "priority"?)' }]);
  });

  it('names the field meant for names from other schedulers that no typo leads to (#47): retries, timeout, tz', () => {
    expect(issuesOf({ ...minimal, retries: 3 })).toEqual([{ path: 'retries', message: 'retries: unknown field (did you mean "retry.max"?)' }]);
    expect(issuesOf({ ...minimal, timeout: 60 })).toEqual([{ path: 'timeout', message: 'timeout: unknown field (did you mean "timeoutSeconds"?)' }]);
    expect(issuesOf({ ...minimal, tz: 'Asia/Shanghai' })).toEqual([{ path: 'tz', message: 'tz: unknown field (did you mean "schedule.timezone"?)' }]);
    expect(issuesOf({ ...minimal, schedule: { type: 'cron', expr: '0 2 * * *', tz: 'UTC' } })).toEqual([
      { path: 'schedule.tz', message: 'schedule.tz: unknown field (did you mean "timezone"?)' },
    ]);
    expect(issuesOf({ ...minimal, retry: { retries: 2 } })).toEqual([{ path: 'retry.retries', message: 'retry.retries: unknown field (did you mean "max"?)' }]);
  });

  it('refuses unknown nested fields too', () => {
    const issues = issuesOf({ ...minimal, schedule: { type: 'cron', expr: '0 2 * * *', timzone: 'UTC' } });
    expect(issues).toEqual([{ path: 'schedule.timzone', message: 'schedule.timzone: unknown field (did you mean "timezone"?)' }]);
  });

  it('reports every problem at once, with paths', () => {
    const issues = issuesOf({ name: 'BAD', schedule: { type: 'fixed_rate' }, exec: { type: 'shell', command: ['ok', 1] }, priority: 10 });
    expect(issues.map((i) => i.path).sort()).toEqual(['exec.command[1]', 'name', 'priority', 'schedule.everySeconds']);
  });

  it('refuses input that is not an object', () => {
    expect(issuesOf([minimal])).toEqual([{ path: '', message: 'a task definition must be an object, got an array of 1' }]);
    expect(issuesOf(null)[0]?.message).toBe('a task definition must be an object, got null');
    expect(issuesOf('x')[0]?.message).toBe('a task definition must be an object, got "x"');
  });

  it('refuses __proto__ keys anywhere and pollutes nothing', () => {
    const input: unknown = JSON.parse(`{"name":"a","schedule":{"type":"none"},"exec":{"type":"plugin","name":"p"},"params":{"__proto__":{"polluted":true}}}`);
    const issues = issuesOf(input);
    expect(issues).toEqual([{ path: 'params.__proto__', message: 'params.__proto__: the key "__proto__" is not allowed' }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses params nested deeper than 32 levels', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 40; i++) deep = { d: deep };
    expect(issuesOf({ ...minimal, params: deep })[0]?.message).toContain('nested deeper than 32 levels');
  });

  it('refuses a definition over a size cap with one issue naming it, before validating it (#45)', () => {
    const started = performance.now();
    const result = parseTaskDefinition({ ...minimal, exec: { type: 'shell', command: Array.from({ length: 300_000 }, () => 1) } });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(result).toEqual({
      ok: false,
      issues: [{ path: 'exec.command', message: 'exec.command: an array of more than 10000 items (300000), the limit' }],
    });
  });

  it('refuses read-only resource fields unless asked to drop them', () => {
    const resource = { ...minimal, version: 3, createdAt: '2026-01-01T00:00:00.000Z', nextFireTime: null };
    expect(issuesOf(resource).map((i) => i.path)).toEqual(['version', 'createdAt', 'nextFireTime']);
    const result = parseTaskDefinition(resource, { allowResourceFields: true });
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.value).not.toHaveProperty('version');
  });
});

describe('parseTaskDefinitionOrThrow', () => {
  it('returns the definition or throws a ValidationError with every issue', () => {
    expect(parseTaskDefinitionOrThrow(minimal).name).toBe('order_stat_daily');
    try {
      parseTaskDefinitionOrThrow({ ...minimal, priority: 12, route: 'x' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues.map((i) => i.path)).toEqual(['priority', 'route']);
      expect((error as ValidationError).message).toMatch(/^invalid task definition: priority: must be at most 9, got 12; route: /);
    }
  });
});
