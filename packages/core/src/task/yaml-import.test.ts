import { describe, expect, it } from 'vitest';
import { MAX_TASK_YAML_BYTES, MAX_TASK_YAML_DOCUMENTS, MAX_TASK_YAML_ISSUES, TASK_YAML_MAX_DEPTH, TASK_YAML_MAX_INDENT, parseTaskYaml, taskYamlSteps } from './yaml-import.js';

const job = (name: string, extra = ''): string => `name: ${name}
schedule: {type: cron, expr: "0 2 * * *", timezone: Asia/Shanghai}
exec:
  type: shell
  command: [python3, run.py, --date, "{{bizDate}}"]
${extra}`;

describe('parseTaskYaml', () => {
  it('parses several documents into definitions with defaults', () => {
    const result = parseTaskYaml(`${job('a')}---\n${job('b', 'priority: 7\n')}`);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.map((d) => [d.name, d.priority, d.schedule.timezone])).toEqual([
      ['a', 5, 'Asia/Shanghai'],
      ['b', 7, 'Asia/Shanghai'],
    ]);
  });

  it('ignores empty documents', () => {
    const result = parseTaskYaml(`---\n# only a comment\n---\n${job('a')}---\n---\n`);
    expect(result.ok && result.value.map((d) => d.name)).toEqual(['a']);
    expect(parseTaskYaml('')).toEqual({ ok: true, value: [] });
  });

  it('is all or nothing, naming file, document, field and line', () => {
    const text = `${job('good')}---\n${job('bad')}priority: 12\n---\nname: also_bad\nschedule: {type: cron, expr: "61 * * * *"}\nexec: {type: plugin, name: p}\n`;
    const result = parseTaskYaml(text, 'jobs.yaml');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toHaveLength(2);
    expect(result.issues[0]).toEqual({
      path: 'priority',
      message: 'jobs.yaml document 2: priority: must be at most 9, got 12',
      document: 2,
      source: 'jobs.yaml',
      line: 12,
    });
    expect(result.issues[1]).toMatchObject({ document: 3, path: 'schedule.expr', line: 15 });
    expect(result.issues[1]?.message).toMatch(/^jobs\.yaml document 3: schedule\.expr: invalid cron expression "61 \* \* \* \*"/);
  });

  it('omits the source when none is given', () => {
    const result = parseTaskYaml('name: x\n');
    expect(!result.ok && result.issues.map((i) => i.message)).toEqual(['document 1: schedule: is required', 'document 1: exec: is required']);
  });

  it('refuses documents that are not mappings', () => {
    const result = parseTaskYaml(`- a\n- b\n---\njust a string\n`, 'jobs.yaml');
    expect(!result.ok && result.issues.map((i) => i.message)).toEqual([
      'jobs.yaml document 1: a task definition must be a mapping, got a sequence',
      'jobs.yaml document 2: a task definition must be a mapping, got the scalar "just a string"',
    ]);
  });

  it('reports syntax errors with their position', () => {
    const result = parseTaskYaml('name: [unclosed\n', 'jobs.yaml');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues[0]?.message).toMatch(/^jobs\.yaml document 1: YAML syntax error: .*\(line \d+, column \d+\)$/);
  });

  it('refuses duplicate keys', () => {
    const result = parseTaskYaml(`${job('a')}name: b\n`);
    expect(!result.ok && result.issues[0]?.message).toMatch(/YAML syntax error: Map keys must be unique/);
  });

  it('refuses the same task name in two documents', () => {
    const result = parseTaskYaml(`${job('a')}---\n${job('a')}`, 'jobs.yaml');
    expect(!result.ok && result.issues).toEqual([
      { path: 'name', message: 'jobs.yaml document 2: name: task "a" is already defined in document 1', document: 2, source: 'jobs.yaml', line: 7 },
    ]);
  });

  it('allows ordinary anchors and aliases', () => {
    const text = `name: a\nschedule: {type: none}\nexec:\n  type: plugin\n  name: p\n  config: {x: &shared [1, 2], y: *shared, z: *shared}\n`;
    const result = parseTaskYaml(text);
    expect(result.ok && result.value[0]?.exec).toEqual({ type: 'plugin', name: 'p', config: { x: [1, 2], y: [1, 2], z: [1, 2] } });
  });

  it('stops an alias bomb quickly instead of expanding it', () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 10; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      lines.push(`${cur}: &${cur} [${Array.from({ length: 10 }, () => `*${prev}`).join(',')}]`);
    }
    const text = `name: bomb\nschedule: {type: none}\nexec: {type: plugin, name: p}\nparams:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;
    const started = performance.now();
    const result = parseTaskYaml(text, 'bomb.yaml');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(!result.ok && result.issues[0]?.message).toMatch(/^bomb\.yaml document 1: YAML could not be read: Excessive alias count/);
  });

  it('refuses input over 1 MiB', () => {
    const result = parseTaskYaml(`# ${'x'.repeat(MAX_TASK_YAML_BYTES)}\n`, 'big.yaml');
    expect(!result.ok && result.issues).toEqual([
      { path: '', source: 'big.yaml', message: `big.yaml: input is ${MAX_TASK_YAML_BYTES + 3} bytes, over the 1048576-byte (1 MiB) limit` },
    ]);
  });

  it(`refuses more than ${MAX_TASK_YAML_DOCUMENTS} documents as too large, before reading them (#45)`, () => {
    // ~1 MiB of tiny documents: parsed whole it held a server for 17 s and overflowed the stack
    const text = 'a: 1\n---\n'.repeat(116_000);
    const steps = taskYamlSteps(text);
    let pauses = 0;
    let step = steps.next();
    for (; step.done !== true; step = steps.next()) pauses++;
    expect(step.value).toEqual({
      ok: false,
      issues: [{ path: '', message: `input holds more than ${MAX_TASK_YAML_DOCUMENTS} documents, the limit of one import; split it` }],
      tooLarge: { limit: 'documents', max: MAX_TASK_YAML_DOCUMENTS },
    });
    // the markers are counted before the YAML reader starts: not one document was read
    expect(pauses).toBe(0);
    expect(parseTaskYaml('a: 1\n---\n'.repeat(MAX_TASK_YAML_DOCUMENTS - 1)).ok).toBe(false); // a: 1 is no task, but not too many
    expect(parseTaskYaml('---\n'.repeat(MAX_TASK_YAML_DOCUMENTS))).toEqual({ ok: true, value: [] });
  });

  it(`reports at most ${MAX_TASK_YAML_ISSUES} issues, then says more were left out`, () => {
    const result = parseTaskYaml('- not a mapping\n---\n'.repeat(500), 'many.yaml');
    expect(result.ok).toBe(false);
    const issues = result.ok ? [] : result.issues;
    expect(issues).toHaveLength(MAX_TASK_YAML_ISSUES + 1);
    expect(issues[0]?.message).toBe('many.yaml document 1: a task definition must be a mapping, got a sequence');
    expect(issues.at(-1)?.message).toBe(`many.yaml: more issues not shown: only the first ${MAX_TASK_YAML_ISSUES} are reported`);
  });

  it('refuses a document holding a list over the size cap with one issue, not one per item (#45)', () => {
    const result = parseTaskYaml(`name: big\nschedule: {type: cron, expr: "0 2 * * *"}\nexec: {type: shell, command: [${Array.from({ length: 20_000 }, () => '1').join(',')}]}\n`);
    expect(result).toEqual({ ok: false, issues: [{ path: 'exec.command', document: 1, line: 3, message: 'document 1: exec.command: an array of more than 10000 items (20000), the limit' }] });
  });

  it(`refuses collections nested deeper than ${TASK_YAML_MAX_DEPTH} levels without building them; other documents keep their numbers`, () => {
    // flow brackets are counted before the YAML reader sees them (it spends seconds on 100,000)
    const flow = `${job('a')}---\n${'['.repeat(100_000)}${']'.repeat(100_000)}\n`;
    const started = performance.now();
    expect(parseTaskYaml(flow)).toEqual({ ok: false, issues: [{ path: '', line: 7, message: `collections nested deeper than ${TASK_YAML_MAX_DEPTH} levels, the limit (line 7)` }] });
    expect(performance.now() - started).toBeLessThan(2_000); // loosely: it was seconds
    const nested = (levels: number): string => `params: ${'{a: '.repeat(levels - 1)}1${'}'.repeat(levels - 1)}\n`;
    expect(parseTaskYaml(`${job('a')}${nested(TASK_YAML_MAX_DEPTH)}`).ok).toBe(true); // exactly the limit passes
    // block nesting: checked on the syntax tree, the document is never built; others keep their numbers
    const block = Array.from({ length: TASK_YAML_MAX_DEPTH + 1 }, (_, i) => `${' '.repeat(i)}k:\n`).join('');
    const result = parseTaskYaml(`${job('a')}---\n${block}---\n${job('b')}---\nname: [\n`);
    const messages = result.ok ? [] : result.issues.map((i) => i.message);
    expect(messages[0]).toBe(`document 2: collections nested deeper than ${TASK_YAML_MAX_DEPTH} levels, the limit`);
    expect(messages.slice(1).length).toBeGreaterThan(0);
    expect(messages.slice(1).every((m) => m.startsWith('document 4: '))).toBe(true);
    // and indentation is capped, so a deep staircase is not read at all
    const stairs = Array.from({ length: 300 }, (_, i) => `${' '.repeat(i)}k:\n`).join('');
    expect(!parseTaskYaml(stairs).ok && parseTaskYaml(stairs)).toMatchObject({ issues: [{ message: `line 258 is indented deeper than ${TASK_YAML_MAX_INDENT} columns, the limit` }] });
  });

  it('turns __proto__ keys into an issue and pollutes nothing', () => {
    const text = `name: a\nschedule: {type: none}\nexec: {type: plugin, name: p}\nparams:\n  __proto__:\n    polluted: true\n`;
    const result = parseTaskYaml(text);
    expect(!result.ok && result.issues.map((i) => i.message)).toEqual(['document 1: params.__proto__: the key "__proto__" is not allowed']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('reads YAML 1.2: yes/no stay strings, so enabled: yes is refused', () => {
    const result = parseTaskYaml(`${job('a')}enabled: yes\n`);
    expect(!result.ok && result.issues[0]?.message).toBe('document 1: enabled: expected true or false, got "yes"');
  });

  it('passes allowResourceFields through', () => {
    const text = `${job('a')}version: 4\nupdatedAt: "2026-01-01T00:00:00.000Z"\n`;
    expect(parseTaskYaml(text).ok).toBe(false);
    expect(parseTaskYaml(text, 'x.yaml', { allowResourceFields: true }).ok).toBe(true);
  });
});
