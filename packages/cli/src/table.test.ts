/** Table formatting (pure): alignment, empty cells, control characters, truncation, summaries. */
import { describe, expect, it } from 'vitest';
import { cell, describeExec, describeSchedule, formatDuration, formatKeyValues, formatMs, formatTable, type Column } from './table.js';

interface Row {
  name: string;
  n: number | null;
  tags?: string[];
}

const columns: Column<Row>[] = [
  { header: 'name', value: (r) => r.name },
  { header: 'n', value: (r) => r.n, align: 'right' },
  { header: 'tags', value: (r) => r.tags },
];

describe('formatTable', () => {
  it('aligns columns under upper-case headings, right-aligns numbers, leaves no trailing spaces', () => {
    const lines = formatTable(columns, [
      { name: 'order_stat_daily', n: 5, tags: ['etl', 'daily'] },
      { name: 'x', n: 120 },
    ]);
    expect(lines).toEqual([
      'NAME                N  TAGS',
      'order_stat_daily    5  etl,daily',
      'x                 120  -',
    ]);
  });

  it('prints the heading alone when there are no rows', () => {
    expect(formatTable(columns, [])).toEqual(['NAME  N  TAGS']);
  });

  it('keeps every row on one line: control characters become spaces, long cells are cut', () => {
    const lines = formatTable<Row>([{ header: 'name', value: (r) => r.name, maxWidth: 8 }, ...columns.slice(1)], [{ name: 'a\nb\u001b[31mred', n: 1 }, { name: 'abcdefghijkl', n: null }]);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toBe('a b [31…  1  -');
    expect(lines[2]).toBe('abcdefg…  -  -');
    for (const line of lines) expect(line.includes('\n') || line.includes('\u001b')).toBe(false);
  });

  it('measures non-ASCII text by code points', () => {
    expect(formatTable<{ a: string; b: string }>([{ header: 'a', value: (r) => r.a }, { header: 'b', value: (r) => r.b }], [{ a: 'é€', b: 'x' }, { a: 'abc', b: 'y' }])).toEqual([
      'A    B',
      'é€   x',
      'abc  y',
    ]);
  });
});

describe('cells and summaries', () => {
  it('renders null, empty, arrays, objects and booleans as one line', () => {
    expect(cell(null)).toBe('-');
    expect(cell('')).toBe('-');
    expect(cell([])).toBe('-');
    expect(cell(['a', 1])).toBe('a,1');
    expect(cell({ k: 'v' })).toBe('{"k":"v"}');
    expect(cell(false)).toBe('false');
  });

  it('aligns key/value blocks', () => {
    expect(formatKeyValues([['id', 7], ['biz date', '2026-12-01'], ['worker', null]])).toEqual(['id:        7', 'biz date:  2026-12-01', 'worker:    -']);
  });

  it('summarises every schedule and executor type', () => {
    expect(describeSchedule({ type: 'cron', expr: '0 2 * * *', timezone: 'Asia/Shanghai' })).toBe('cron 0 2 * * * (Asia/Shanghai)');
    expect(describeSchedule({ type: 'cron', expr: '0 2 * * *', timezone: 'UTC' })).toBe('cron 0 2 * * *');
    expect(describeSchedule({ type: 'fixed_rate', everySeconds: 30 })).toBe('every 30s');
    expect(describeSchedule({ type: 'once', at: '2026-12-01T02:00:00.000Z' })).toBe('once 2026-12-01T02:00:00.000Z');
    expect(describeSchedule({ type: 'none' })).toBe('none');
    expect(describeSchedule(undefined)).toBe('-');
    expect(describeExec({ type: 'http', url: 'http://h/x' })).toBe('http http://h/x');
    expect(describeExec({ type: 'shell', command: ['python3', 'run.py', '--date', '{{bizDate}}'] })).toBe('shell python3 run.py --date {{bizDate}}');
    expect(describeExec({ type: 'plugin', name: 'archive_files' })).toBe('plugin archive_files');
    expect(describeExec({ type: 'python', script: '/srv/jobs/report.py', args: ['--date', '{{bizDate}}'], venv: '/opt/venvs/report' })).toBe(
      'python /srv/jobs/report.py --date {{bizDate}} (venv /opt/venvs/report)',
    );
    expect(describeExec({ type: 'python', code: 'print(1)', args: [], interpreter: '/usr/bin/python3' })).toBe('python -c … (/usr/bin/python3)');
    expect(describeExec({ type: 'sql', datasource: 'REPORTS_DB', statement: 'UPDATE t SET a = 1' })).toBe('sql REPORTS_DB statement');
    expect(describeExec({ type: 'sql', datasource: 'REPORTS_DB', script: 'SELECT 1; SELECT 2;' })).toBe('sql REPORTS_DB script');
  });

  it('formats durations', () => {
    expect(formatDuration('2026-12-01T02:00:00.000Z', '2026-12-01T02:00:00.850Z')).toBe('850ms');
    expect(formatDuration('2026-12-01T02:00:00.000Z', '2026-12-01T02:00:12.340Z')).toBe('12.3s');
    expect(formatDuration('2026-12-01T02:00:00.000Z', '2026-12-01T02:04:05.000Z')).toBe('4m05s');
    expect(formatMs(2 * 3_600_000 + 3 * 60_000)).toBe('2h03m');
    expect(formatDuration(null, '2026-12-01T02:00:00.000Z')).toBe('-');
    expect(formatDuration('2026-12-01T02:00:01.000Z', '2026-12-01T02:00:00.000Z')).toBe('-');
  });
});
