/**
 * Splits a migration file into single statements. MySQL auto-commits every DDL statement, so
 * the runner sends them one at a time (and can name the one that failed) instead of enabling
 * `multipleStatements` on a connection.
 *
 * Understands '…', "…" and `…` quoting (doubled quotes and backslash escapes), `-- ` and `#`
 * line comments and block comments, which are dropped; MySQL's executable comments (the ones
 * opened by a slash, star and bang) are kept as statement text. `DELIMITER` (stored programs)
 * is not supported.
 */
import { MigrationError } from './errors.js';

export function splitSqlStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = '';
  let i = 0;
  const n = sql.length;
  const flush = (): void => {
    const text = current.trim();
    if (text !== '') statements.push(text);
    current = '';
  };
  while (i < n) {
    const ch = sql[i] as string;
    const next = sql[i + 1];
    // Line comments: `#`, or `--` followed by whitespace / end of input (MySQL's rule).
    if (ch === '#' || (ch === '-' && next === '-' && (i + 2 >= n || /\s/.test(sql[i + 2] as string)))) {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? n : end; // keep the newline itself as a separator
      continue;
    }
    if (ch === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      if (end === -1) throw new MigrationError('unterminated /* comment');
      if (sql[i + 2] === '!') current += sql.slice(i, end + 2);
      else current += ' ';
      i = end + 2;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') {
      let j = i + 1;
      for (;;) {
        if (j >= n) throw new MigrationError(`unterminated ${ch} quote`);
        const c = sql[j];
        if (c === '\\' && ch !== '`') {
          j += 2;
          continue;
        }
        if (c === ch) {
          if (sql[j + 1] === ch) {
            j += 2;
            continue;
          }
          break;
        }
        j += 1;
      }
      current += sql.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (ch === ';') {
      flush();
      i += 1;
      continue;
    }
    if ((i === 0 || sql[i - 1] === '\n') && /^delimiter\s/i.test(sql.slice(i, i + 10))) {
      throw new MigrationError('DELIMITER is not supported in migration files');
    }
    current += ch;
    i += 1;
  }
  flush();
  return statements;
}
