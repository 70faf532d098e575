/**
 * What the index tests share: row counters for seeding without a sequence engine, and a
 * Queryable that captures MariaDB's plan of exactly the statements a query function sends.
 */
import type { RowDataPacket } from 'mysql2/promise';
import type { Queryable } from '../schema-version.js';

/** 0..9 as a derived table: cross joins of it count without a sequence engine or recursion. */
const DIGITS = '(SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)';

/** A derived table of `n` = 0..99,999 (filter it with `WHERE n < ?`). */
export const NUMBERS = `(SELECT a.d + 10 * b.d + 100 * c.d + 1000 * d.d + 10000 * e.d AS n
  FROM ${DIGITS} a CROSS JOIN ${DIGITS} b CROSS JOIN ${DIGITS} c CROSS JOIN ${DIGITS} d CROSS JOIN ${DIGITS} e)`;

/** One row of tabular EXPLAIN (the columns MariaDB and MySQL share). */
export interface PlanRow {
  readonly table: string;
  readonly type: string;
  readonly key: string | null;
  readonly extra: string;
}

/**
 * A Queryable that sends every statement once under EXPLAIN (its plan appended to `plans`)
 * and then for real, so a query function is checked with exactly the SQL it sends.
 */
export function explaining(pool: Queryable, plans: PlanRow[][]): Queryable {
  const query = async (sql: string, values?: unknown[]): Promise<unknown> => {
    const [rows] = await pool.query<RowDataPacket[]>(`EXPLAIN ${sql}`, values);
    plans.push(
      rows.map((r) => ({
        table: String(r['table']),
        type: String(r['type']),
        key: (r['key'] as string | null) ?? null,
        extra: String(r['Extra'] ?? ''),
      })),
    );
    return pool.query(sql, values);
  };
  return { query } as unknown as Queryable;
}
