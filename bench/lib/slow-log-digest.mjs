/**
 * Where MariaDB's time goes, from its slow query log written with `long_query_time=0` (every
 * statement): statements grouped by shape (literals and value lists folded), with their count,
 * their summed time (lock waits included: it is the server's wall time per statement, not CPU)
 * and the rows they examined. What pt-query-digest does, for the few fields the bench reads.
 * Pure; types: `slow-log-digest.d.mts`.
 */

/** The statement's shape: string and number literals become `?`, lists of them `(?+)`, runs of those `(?+)...`. */
export function statementShape(sql, maxLength = 200) {
  let q = sql.replace(/'(?:[^'\\]|\\.|'')*'/g, '?');
  q = q.replace(/\bX\?/g, '?');
  q = q.replace(/\b\d+(?:\.\d+)?\b/g, '?');
  q = q.replace(/\(\s*\?(?:\s*,\s*\?)*\s*\)/g, '(?+)');
  q = q.replace(/(?:\(\?\+\)\s*,\s*)+\(\?\+\)/g, '(?+)...');
  // A derived table of N `SELECT ? AS a, ? AS b UNION ALL …` rows is one shape whatever N.
  q = q.replace(/(SELECT (?:\? AS \w+(?:, )?)+)(?: UNION ALL SELECT (?:\? AS \w+(?:, )?)+)+/g, '$1 UNION ALL …');
  q = q.replace(/\s+/g, ' ').trim().replace(/;$/, '');
  return q.length > maxLength ? `${q.slice(0, maxLength - 1)}…` : q;
}

const HEADER = /^# Query_time: ([\d.]+)\s+Lock_time: ([\d.]+)\s+Rows_sent: (\d+)\s+Rows_examined: (\d+)/;

/**
 * `{ statements, seconds, top: [{ shape, count, seconds, share, meanMs, rowsExamined }] }` of a
 * slow log's text, the `topN` shapes by summed time, share of the total in per cent (one
 * decimal). Connection chatter (`SET timestamp`, `use`) is not a statement; administrative lines
 * (`# Time`, `# User@Host`, the server's start banner) are skipped.
 */
export function digestSlowLog(text, topN = 12) {
  const byShape = new Map();
  let current = null;
  let lines = [];
  const close = () => {
    if (current !== null) {
      const sql = lines.filter((l) => !/^(SET timestamp=|use )/i.test(l)).join(' ').trim();
      if (sql !== '') {
        const shape = statementShape(sql);
        const s = byShape.get(shape) ?? { shape, count: 0, seconds: 0, rowsExamined: 0 };
        s.count += 1;
        s.seconds += current.seconds;
        s.rowsExamined += current.rowsExamined;
        byShape.set(shape, s);
      }
    }
    current = null;
    lines = [];
  };
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const header = HEADER.exec(line);
    if (header) {
      close();
      current = { seconds: Number(header[1]), rowsExamined: Number(header[4]) };
      continue;
    }
    if (line.startsWith('#')) {
      if (line.startsWith('# Time:') || line.startsWith('# User@Host')) close();
      continue;
    }
    if (current !== null && line !== '') lines.push(line);
  }
  close();
  const all = [...byShape.values()];
  const seconds = all.reduce((sum, s) => sum + s.seconds, 0);
  const statements = all.reduce((sum, s) => sum + s.count, 0);
  const top = all
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, topN)
    .map((s) => ({
      shape: s.shape,
      count: s.count,
      seconds: Math.round(s.seconds * 1000) / 1000,
      share: seconds > 0 ? Math.round((s.seconds / seconds) * 1000) / 10 : 0,
      meanMs: Math.round((s.seconds / s.count) * 1e5) / 100,
      rowsExamined: s.rowsExamined,
    }));
  return { statements, seconds: Math.round(seconds * 1000) / 1000, top };
}
