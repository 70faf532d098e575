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

/** The flag that keeps why dispatching was paused (`{"reason"}`; the pause itself stays a boolean brokers read). */
const DISPATCH_PAUSE_REASON_FLAG = 'dispatch_pause_reason';

/** The global pause as operators see it (ADMIN-API `GET /status`). */
export interface DispatchPause {
  readonly paused: boolean;
  /** When it was last switched on (or off, when not paused); null = never switched. */
  readonly since: Date | null;
  /** The token name that switched it. */
  readonly by: string | null;
  /** Why, as given with the pause; null when none was given or it is not paused. */
  readonly reason: string | null;
}

/** Reads the pause with since, by and reason. */
export async function readDispatchPause(db: Queryable): Promise<DispatchPause> {
  const [rows] = await db.query<Array<RowDataPacket & { name: string; value: unknown; updated_at: Date; updated_by: string | null }>>(
    'SELECT name, value, updated_at, updated_by FROM system_flag WHERE name IN (?, ?)',
    [DISPATCH_PAUSED_FLAG, DISPATCH_PAUSE_REASON_FLAG],
  );
  const flag = rows.find((r) => r.name === DISPATCH_PAUSED_FLAG);
  const paused = flag !== undefined && decodeJson(flag.value) === true;
  const note = rows.find((r) => r.name === DISPATCH_PAUSE_REASON_FLAG);
  const reason = note === undefined ? null : decodeJson<{ reason?: unknown } | null>(note.value)?.reason;
  return {
    paused,
    since: flag?.updated_by === null && !paused ? null : (flag?.updated_at ?? null),
    by: flag?.updated_by ?? null,
    reason: paused && typeof reason === 'string' ? reason : null,
  };
}

/**
 * Switches the pause, with who and why (inside the caller's transaction). A switch to the state
 * it is already in keeps its `since` and `by`; a pause given again replaces the reason.
 */
export async function writeDispatchPause(db: Queryable, paused: boolean, by: string | null, reason: string | null): Promise<void> {
  const before = (await getSystemFlag(db, DISPATCH_PAUSED_FLAG)) === true;
  if (before !== paused) await setSystemFlag(db, DISPATCH_PAUSED_FLAG, paused, by);
  await setSystemFlag(db, DISPATCH_PAUSE_REASON_FLAG, { reason: paused ? reason : null }, by);
}
