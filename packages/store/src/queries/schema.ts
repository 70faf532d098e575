/**
 * Queries on the schema itself (information_schema), for drift checks and tests.
 */
import type { RowDataPacket } from 'mysql2/promise';
import type { Queryable } from '../schema-version.js';

/** Names of the base tables of the connection's current database, sorted. */
export async function listTables(db: Queryable): Promise<string[]> {
  const [rows] = await db.query<Array<RowDataPacket & { t: string }>>(
    `SELECT table_name AS t FROM information_schema.tables
      WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  return rows.map((r) => r.t);
}

/**
 * `SHOW CREATE TABLE` of every table of the current database, keyed by table name, with the
 * `AUTO_INCREMENT=n` counter removed so that two databases with the same schema compare equal.
 */
export async function showCreateTables(db: Queryable): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const table of await listTables(db)) {
    // Table names come from information_schema; backticks doubled as escapeId does.
    const [rows] = await db.query<Array<RowDataPacket & { 'Create Table': string }>>(
      `SHOW CREATE TABLE \`${table.replace(/`/g, '``')}\``,
    );
    result[table] = (rows[0]?.['Create Table'] ?? '').replace(/ AUTO_INCREMENT=\d+/, '');
  }
  return result;
}
