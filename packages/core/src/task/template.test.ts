import { describe, expect, it } from 'vitest';
import { TemplateError } from '../errors.js';
import { expandExecTemplates, expandTemplate, expandTemplateValue, shellTemplateProblems, templateProblems } from './template.js';

const context = {
  bizDate: '2026-12-01',
  expectedTime: '2026-12-01T02:00:00.000Z',
  params: { source: 'order_table', n: 3, flag: false, nested: { host: 'db1' }, list: [1, 2], nothing: null },
};

describe('expandTemplate', () => {
  it('expands bizDate, expectedTime and params', () => {
    expect(expandTemplate('--date={{bizDate}} at {{expectedTime}} from {{params.source}}', context)).toBe(
      '--date=2026-12-01 at 2026-12-01T02:00:00.000Z from order_table',
    );
  });

  it('allows spaces inside the braces and repeated placeholders', () => {
    expect(expandTemplate('{{ bizDate }}/{{bizDate}}', context)).toBe('2026-12-01/2026-12-01');
  });

  it('renders non-string params as JSON and reaches into nested params', () => {
    expect(expandTemplate('{{params.n}} {{params.flag}} {{params.list}} {{params.nothing}} {{params.nested.host}}', context)).toBe(
      '3 false [1,2] null db1',
    );
  });

  it('keeps text that is not a complete placeholder', () => {
    expect(expandTemplate('{{ not closed, {single} and }} alone', context)).toBe('{{ not closed, {single} and }} alone');
  });

  it('throws a TemplateError naming an unknown placeholder', () => {
    expect(() => expandTemplate('{{bizdate}}', context)).toThrow(TemplateError);
    expect(() => expandTemplate('x {{bizdate}}', context)).toThrow('unknown placeholder "{{bizdate}}"');
  });

  it('throws a TemplateError naming a missing param, never reading the prototype', () => {
    expect(() => expandTemplate('{{params.missing}}', context)).toThrow('placeholder "{{params.missing}}": param "missing" is not set');
    expect(() => expandTemplate('{{params.constructor}}', context)).toThrow(TemplateError);
    expect(() => expandTemplate('{{params.source.length}}', context)).toThrow(TemplateError);
  });
});

describe('templateProblems', () => {
  it('lists unknown placeholders only', () => {
    expect(templateProblems('{{bizDate}} {{params.x}} {{expectedTime}}')).toEqual([]);
    expect(templateProblems('{{today}} {{params}}')).toEqual([
      'unknown placeholder "{{today}}" (known: {{bizDate}}, {{expectedTime}}, {{params.<key>}})',
      'unknown placeholder "{{params}}" (known: {{bizDate}}, {{expectedTime}}, {{params.<key>}})',
    ]);
  });
});

describe('expandTemplateValue and expandExecTemplates', () => {
  it('expands strings deep inside plugin config, not keys, without changing the input', () => {
    const config = { path: '/data/{{bizDate}}', list: ['{{params.source}}', 1], '{{bizDate}}': true };
    const copy = structuredClone(config);
    expect(expandTemplateValue(config, context)).toEqual({ path: '/data/2026-12-01', list: ['order_table', 1], '{{bizDate}}': true });
    expect(config).toEqual(copy);
  });

  it('expands shell arguments and plugin config, leaves http alone', () => {
    expect(expandExecTemplates({ type: 'shell', command: ['run', '{{bizDate}}'], shell: false }, context)).toEqual({
      type: 'shell',
      command: ['run', '2026-12-01'],
      shell: false,
    });
    expect(expandExecTemplates({ type: 'plugin', name: 'p', config: { d: '{{bizDate}}' } }, context)).toEqual({
      type: 'plugin',
      name: 'p',
      config: { d: '2026-12-01' },
    });
    const http = { type: 'http' as const, url: 'http://a/{{bizDate}}', method: 'POST' as const };
    expect(expandExecTemplates(http, context)).toBe(http);
  });
});

describe('#18.5 templates under shell: true', () => {
  const nasty = { semi: 'a; rm -rf ~', sub: '$(id)', back: '`id`', nl: 'a\nid', quote: "it's", glob: '*', empty: '', json: { a: "'" } };
  const shell = (command: string[]) => ({ type: 'shell' as const, command, shell: true });

  it('quotes every value as one single-quoted word, whatever it contains', () => {
    expect(expandTemplate('printf %s {{params.semi}} {{params.sub}} {{params.back}}', { ...context, params: nasty }, 'shell')).toBe(
      "printf %s 'a; rm -rf ~' '$(id)' '`id`'",
    );
    expect(expandTemplate('{{params.nl}} {{params.quote}} {{params.glob}} {{params.empty}} {{params.json}}', { ...context, params: nasty }, 'shell')).toBe(
      "'a\nid' 'it'\\''s' '*' '' '{\"a\":\"'\\''\"}'",
    );
    expect(expandTemplate('--date={{bizDate}}', context, 'shell')).toBe("--date='2026-12-01'");
  });

  it('quotes in every element of a shell: true command, and leaves argv values as they are', () => {
    expect(expandExecTemplates(shell(['echo', '{{params.semi}}', '--at={{expectedTime}}']), { ...context, params: nasty })).toEqual(
      shell(['echo', "'a; rm -rf ~'", "--at='2026-12-01T02:00:00.000Z'"]),
    );
    expect(expandExecTemplates({ type: 'shell', command: ['echo', '{{params.semi}}', '{{params.sub}}', '"{{params.quote}}"'], shell: false }, { ...context, params: nasty })).toEqual({
      type: 'shell',
      command: ['echo', 'a; rm -rf ~', '$(id)', `"it's"`],
      shell: false,
    });
  });

  it('refuses a placeholder inside quotes, naming the element, before expanding anything', () => {
    expect(() => expandExecTemplates(shell(['echo', '"{{bizDate}}"']), context)).toThrow(TemplateError);
    expect(() => expandExecTemplates(shell(['echo', '"{{bizDate}}"']), context)).toThrow(
      'exec.command[1]: placeholder "{{bizDate}}" is inside double quotes; under shell: true ax inserts each template value as one quoted shell word, ' +
        'so a placeholder must stand outside quotes and other shell syntax (write echo {{bizDate}}, not echo "{{bizDate}}")',
    );
    expect(() => expandExecTemplates(shell(['echo', "'{{params.missing}}'"]), context)).toThrow('exec.command[1]: placeholder "{{params.missing}}" is inside single quotes');
    expect(() => expandTemplate('echo "{{bizDate}}"', context, 'shell')).toThrow('placeholder "{{bizDate}}" is inside double quotes');
    // The same text is fine without a shell: the quotes are the program's.
    expect(expandExecTemplates({ type: 'shell', command: ['echo', '"{{bizDate}}"'], shell: false }, context)).toMatchObject({ command: ['echo', '"2026-12-01"'] });
  });

  it('lists the problems of a command with the element index, for validation', () => {
    expect(shellTemplateProblems(['echo', '{{bizDate}}', 'x="{{params.a}}"', "'{{params.b}}'"]).map((p) => [p.path, p.message.split(';')[0]])).toEqual([
      [[2], 'placeholder "{{params.a}}" is inside double quotes'],
      [[3], 'placeholder "{{params.b}}" is inside single quotes'],
    ]);
  });
});
