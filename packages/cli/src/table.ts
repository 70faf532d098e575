/**
 * Text formatting for people (pure): aligned tables, key/value blocks, and the cell values of
 * API resources. `--json` output does not come through here.
 */

/** How a column is aligned. */
export type Align = 'left' | 'right';

/** One column of a table. */
export interface Column<R> {
  /** Heading, printed upper-case. */
  readonly header: string;
  readonly value: (row: R) => unknown;
  /** Default `left`. */
  readonly align?: Align;
  /** Longest cell in characters; a longer one is cut with `…`. Default unlimited. */
  readonly maxWidth?: number;
}

/** Placeholder for an empty cell (null, undefined, empty string or list). */
export const EMPTY_CELL = '-';

/** Gap between columns. */
const GAP = '  ';

/**
 * One line of text from any value: null/undefined → `-`; arrays joined by `,`; objects as
 * compact JSON; control characters (newlines, tabs, escapes) replaced by a space so a cell
 * can never break or recolour a table.
 */
export function cell(value: unknown): string {
  if (value === null || value === undefined) return EMPTY_CELL;
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') text = String(value);
  else if (Array.isArray(value)) text = value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(',');
  else text = JSON.stringify(value) ?? '';
  // eslint-disable-next-line no-control-regex -- replacing control characters is the point
  text = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ');
  return text === '' ? EMPTY_CELL : text;
}

/** Width of a string in terminal columns (code points; wide glyphs are not measured). */
function width(text: string): number {
  return [...text].length;
}

function truncate(text: string, max: number | undefined): string {
  if (max === undefined || width(text) <= max) return text;
  return `${[...text].slice(0, Math.max(max - 1, 0)).join('')}…`;
}

function pad(text: string, to: number, align: Align): string {
  const fill = ' '.repeat(Math.max(to - width(text), 0));
  return align === 'right' ? fill + text : text + fill;
}

/**
 * An aligned table: a heading line and one line per row, columns separated by two spaces, no
 * trailing spaces. No rows → the heading alone.
 */
export function formatTable<R>(columns: readonly Column<R>[], rows: readonly R[]): string[] {
  const cells = rows.map((row) => columns.map((c) => truncate(cell(c.value(row)), c.maxWidth)));
  const headers = columns.map((c) => c.header.toUpperCase());
  const widths = columns.map((_, i) => Math.max(width(headers[i] ?? ''), ...cells.map((r) => width(r[i] ?? ''))));
  const line = (values: readonly string[]): string =>
    values
      .map((v, i) => pad(v, widths[i] ?? 0, columns[i]?.align ?? 'left'))
      .join(GAP)
      .trimEnd();
  return [line(headers), ...cells.map(line)];
}

/** `key:  value` lines with the values aligned. */
export function formatKeyValues(pairs: ReadonlyArray<readonly [string, unknown]>): string[] {
  const keyWidth = Math.max(0, ...pairs.map(([k]) => width(k) + 1));
  return pairs.map(([k, v]) => `${pad(`${k}:`, keyWidth, 'left')}  ${cell(v)}`.trimEnd());
}

/** A schedule in a few words: `cron 0 2 * * * (Asia/Shanghai)`, `every 30s`, `once 2026-…`, `none`. */
export function describeSchedule(schedule: unknown): string {
  if (schedule === null || typeof schedule !== 'object') return EMPTY_CELL;
  const s = schedule as Record<string, unknown>;
  const tz = typeof s['timezone'] === 'string' && s['timezone'] !== 'UTC' ? ` (${s['timezone']})` : '';
  switch (s['type']) {
    case 'cron':
      return `cron ${cell(s['expr'])}${tz}`;
    case 'fixed_rate':
      return `every ${cell(s['everySeconds'])}s`;
    case 'once':
      return `once ${cell(s['at'])}`;
    case 'none':
      return 'none';
    default:
      return cell(s['type']);
  }
}

/**
 * An executor in a few words: `http <url>`, `shell <argv>`, `plugin <name>`,
 * `python <script> <args> (venv <dir>)`, `sql <datasource> statement|script`.
 */
export function describeExec(exec: unknown): string {
  if (exec === null || typeof exec !== 'object') return EMPTY_CELL;
  const e = exec as Record<string, unknown>;
  switch (e['type']) {
    case 'http':
      return `http ${cell(e['url'])}`;
    case 'shell':
      return `shell ${Array.isArray(e['command']) ? e['command'].map((a) => cell(a)).join(' ') : cell(e['command'])}`;
    case 'plugin':
      return `plugin ${cell(e['name'])}`;
    case 'python': {
      const args = Array.isArray(e['args']) ? e['args'].map((a) => ` ${cell(a)}`).join('') : '';
      const program = typeof e['script'] === 'string' ? cell(e['script']) : '-c …';
      const where = typeof e['venv'] === 'string' ? ` (venv ${cell(e['venv'])})` : typeof e['interpreter'] === 'string' ? ` (${cell(e['interpreter'])})` : '';
      return `python ${program}${args}${where}`;
    }
    case 'sql':
      return `sql ${cell(e['datasource'])} ${typeof e['script'] === 'string' ? 'script' : 'statement'}`;
    default:
      return cell(e['type']);
  }
}

/** Milliseconds between two ISO instants as `850ms`, `12.3s`, `4m05s`, `2h03m`; `-` when either is missing. */
export function formatDuration(fromIso: unknown, toIso: unknown): string {
  if (typeof fromIso !== 'string' || typeof toIso !== 'string') return EMPTY_CELL;
  const ms = Date.parse(toIso) - Date.parse(fromIso);
  if (!Number.isFinite(ms) || ms < 0) return EMPTY_CELL;
  return formatMs(ms);
}

/** A duration in milliseconds for people. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const totalSeconds = Math.floor(ms / 1000);
  if (totalSeconds < 3600) return `${Math.floor(totalSeconds / 60)}m${String(totalSeconds % 60).padStart(2, '0')}s`;
  const totalMinutes = Math.floor(totalSeconds / 60);
  return `${Math.floor(totalMinutes / 60)}h${String(totalMinutes % 60).padStart(2, '0')}m`;
}
