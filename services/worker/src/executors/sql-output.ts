/**
 * How a `sql` run is written to the job's output (issue #22): the statement, then per result
 * set either `N rows affected` or the column names and the first `SQL_LOG_ROWS` rows as
 * tab-separated text, then the row count. Pure: the executor writes the lines.
 */

/** Rows of a result set written to the log at most. */
export const SQL_LOG_ROWS = 100;
/** Characters of one cell written at most. */
export const SQL_LOG_CELL_CHARS = 1_000;
/** Characters of the statement or script echoed at most. */
export const SQL_LOG_STATEMENT_CHARS = 4_000;

function cut(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length - limit} more characters)`;
}

/** One value as text: NULL, binary as hex, JSON values as JSON; tabs and newlines escaped. */
export function formatCell(value: unknown): string {
  let text: string;
  if (value === null || value === undefined) text = 'NULL';
  else if (Buffer.isBuffer(value)) text = `0x${value.subarray(0, SQL_LOG_CELL_CHARS / 2).toString('hex')}${value.length > SQL_LOG_CELL_CHARS / 2 ? '…' : ''}`;
  else if (typeof value === 'string') text = value;
  else if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') text = String(value);
  else if (value instanceof Date) text = Number.isNaN(value.getTime()) ? 'invalid date' : value.toISOString();
  else text = JSON.stringify(value) ?? typeof value;
  return cut(text, SQL_LOG_CELL_CHARS).replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\r/g, '\\r').replace(/\n/g, '\\n');
}

/** A row (or the column names) as one tab-separated line. */
export function formatRow(values: readonly unknown[]): string {
  return `${values.map(formatCell).join('\t')}\n`;
}

/** The echo of what runs: `> <statement>` lines (a script is echoed as written). */
export function formatStatement(kind: 'statement' | 'script', text: string): string {
  const lines = cut(text.trim(), SQL_LOG_STATEMENT_CHARS).split(/\r?\n/);
  return `${kind === 'script' ? '-- script\n' : ''}${lines.map((line) => `> ${line}`).join('\n')}\n`;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The line after a write: `3 rows affected` (with the insert id when there is one). */
export function formatAffected(header: { affectedRows?: number; insertId?: number | string; warningStatus?: number }): string {
  const parts = [plural(header.affectedRows ?? 0, 'row affected', 'rows affected')];
  if (header.insertId !== undefined && header.insertId !== 0 && header.insertId !== '0') parts.push(`last insert id ${header.insertId}`);
  if (header.warningStatus !== undefined && header.warningStatus > 0) parts.push(plural(header.warningStatus, 'warning', 'warnings'));
  return `${parts.join(', ')}\n`;
}

/** The line after a result set's rows: `(250 rows returned; the first 100 shown)`. */
export function formatReturned(rows: number): string {
  const shown = rows > SQL_LOG_ROWS ? `; the first ${SQL_LOG_ROWS} shown` : '';
  return `(${plural(rows, 'row', 'rows')} returned${shown})\n`;
}

/** A server or connection error on one line: `ER_NO_SUCH_TABLE (1146): Table 'x' doesn't exist`. */
export function formatSqlError(error: unknown): string {
  const e = (error ?? {}) as { code?: unknown; errno?: unknown; sqlMessage?: unknown; message?: unknown };
  const message = typeof e.sqlMessage === 'string' ? e.sqlMessage : typeof e.message === 'string' ? e.message : String(error);
  const code = typeof e.code === 'string' ? e.code : undefined;
  const errno = typeof e.errno === 'number' && typeof e.sqlMessage === 'string' ? ` (${e.errno})` : '';
  const oneLine = message.replace(/\s*[\r\n]+\s*/g, ' ').trim();
  return cut(code === undefined ? oneLine : `${code}${errno}: ${oneLine}`, 2_000);
}
