import { describe, expect, it } from 'vitest';
import { digestSlowLog, statementShape } from './slow-log-digest.mjs';

/** The shape of MariaDB 10.11's slow log with long_query_time=0 (its banner, then one entry per statement). */
const LOG = `/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:
Tcp port: 41234  Unix socket: /tmp/ax-mariadb/mysqld.sock
Time\t\t    Id Command\tArgument
# Time: 261206 12:05:01
# User@Host: root[root] @ localhost [127.0.0.1]
# Thread_id: 31  Schema: ax_test_1  QC_hit: No
# Query_time: 0.080000  Lock_time: 0.000120  Rows_sent: 0  Rows_examined: 1500
# Rows_affected: 2  Bytes_sent: 52
SET timestamp=1765022701;
INSERT IGNORE INTO task_instance (task_id, expected_time) SELECT t.id, s.e FROM task t JOIN (SELECT 1 AS task_id, '2026-12-06 12:05:01.000' AS e UNION ALL SELECT 2 AS task_id, '2026-12-06 12:05:01.000' AS e) s ON t.id = s.task_id;
# User@Host: root[root] @ localhost [127.0.0.1]
# Thread_id: 32  Schema: ax_test_1  QC_hit: No
# Query_time: 0.020000  Lock_time: 0.000010  Rows_sent: 0  Rows_examined: 300
SET timestamp=1765022701;
INSERT IGNORE INTO task_instance (task_id, expected_time) SELECT t.id, s.e FROM task t JOIN (SELECT 7 AS task_id, '2026-12-06 12:05:02.000' AS e UNION ALL SELECT 8 AS task_id, '2026-12-06 12:05:02.000' AS e UNION ALL SELECT 9 AS task_id, '2026-12-06 12:05:02.000' AS e) s ON t.id = s.task_id;
# Time: 261206 12:05:02
# User@Host: root[root] @ localhost [127.0.0.1]
# Query_time: 0.050000  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 40
use ax_test_1;
SET timestamp=1765022702;
UPDATE task_instance SET state = 'SUCCESS' WHERE id IN (11, 12, 13) AND state IN ('DISPATCHED', 'RUNNING');
# Query_time: 0.050000  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 2
SET timestamp=1765022702;
COMMIT;
`;

describe('the slow log digest', () => {
  it('folds literals and value lists into one shape per statement kind', () => {
    expect(statementShape("UPDATE t SET s = 'A' WHERE id IN (1, 2, 3) AND k = 'it''s'")).toBe('UPDATE t SET s = ? WHERE id IN (?+) AND k = ?');
    expect(statementShape('INSERT INTO c (a, b) VALUES (1, X\'00ff\'), (2, X\'01\'), (3, X\'02\');')).toBe('INSERT INTO c (a, b) VALUES (?+)...');
    expect(statementShape('SELECT * FROM (SELECT ? AS n, ? AS e UNION ALL SELECT ? AS n, ? AS e UNION ALL SELECT ? AS n, ? AS e) s')).toBe(
      'SELECT * FROM (SELECT ? AS n, ? AS e UNION ALL …) s',
    );
    expect(statementShape('SELECT 1 FROM t WHERE a = 1', 12)).toBe('SELECT ? FR…');
  });

  it('sums time and rows per shape, largest first, with shares of the whole', () => {
    const d = digestSlowLog(LOG);
    expect(d.statements).toBe(4);
    expect(d.seconds).toBeCloseTo(0.2, 6);
    expect(d.top.map((e) => [e.count, e.seconds, e.share, e.meanMs, e.rowsExamined])).toEqual([
      [2, 0.1, 50, 50, 1800],
      [1, 0.05, 25, 50, 40],
      [1, 0.05, 25, 50, 2],
    ]);
    expect(d.top[0]?.shape).toMatch(/^INSERT IGNORE INTO task_instance .* UNION ALL …\) s ON t\.id = s\.task_id$/);
    expect(d.top.map((e) => e.shape)).toContain('COMMIT');
    expect(digestSlowLog(LOG, 1).top).toHaveLength(1);
  });

  it('reads an empty log or one with only its banner as no statement', () => {
    expect(digestSlowLog('')).toEqual({ statements: 0, seconds: 0, top: [] });
    expect(digestSlowLog(LOG.split('\n').slice(0, 3).join('\n'))).toEqual({ statements: 0, seconds: 0, top: [] });
  });
});
