/** `system_flag`: global switches as JSON values (e.g. `dispatch_paused`, read by brokers at claim). */
import type { RowDataPacket } from 'mysql2';
import { decodeJson, encodeJson } from '../json.js';
import type { Queryable } from '../schema-version.js';

/** Name of the flag that stops all dispatching. */
export const DISPATCH_PAUSED_FLAG = 'dispatch_paused';

/** A flag's value, or `undefined` when it is not set. */
export async function getSystemFlag(db: Queryable, name: string): Promise<unknown> {
  const [rows] = await db.query<Array<RowDataPacket & { value: unknown }>>('SELECT value FROM system_flag WHERE name = ?', [name]);
  const row = rows[0];
  return row === undefined ? undefined : decodeJson(row.value);
}

/** Sets a flag (creating it if missing), recording who did it. */
export async function setSystemFlag(db: Queryable, name: string, value: unknown, updatedBy: string | null): Promise<void> {
  await db.query(
    `INSERT INTO system_flag (name, value, updated_by) VALUES (?, ?, ?)
     ON DUPLICATE KEY UPDATE value = VALUES(value), updated_by = VALUES(updated_by)`,
    [name, encodeJson(value), updatedBy],
  );
}
