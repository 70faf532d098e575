/**
 * Warming a {@link TaskDefinitionCache} ahead of the claims. A claim validates the definition of
 * every task it has not seen at its current version (zod, the cron parser: ~26 µs a task), on
 * the dispatch path: the first "10,000 tasks at 02:00" after a broker start, or after the
 * tasks were created or edited, paid it at the fire time. Reading the versions of the enabled
 * tasks every few seconds and validating the new ones moves that work before the fire time; a
 * claim then only looks the versions up.
 */
import type { RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';
import { readTaskRows, type TaskDefinitionCache } from './dispatch.js';

/** Task ids per `readTaskRows` call (the length of one `IN` list). */
const CHUNK = 1_000;

/** What one warming pass did. */
export interface WarmOutcome {
  /** Definitions validated and added now (new tasks, new versions). */
  readonly loaded: number;
  /** True when there are more enabled tasks than the cache holds: nothing was loaded, since filling it would only make it start over; claims fill it as before. */
  readonly overCapacity: boolean;
}

/** Loads into `cache` every enabled task's current definition it does not hold yet. */
export async function warmTaskDefinitions(db: Queryable, cache: TaskDefinitionCache): Promise<WarmOutcome> {
  const [rows] = await db.query<RowDataPacket[]>('SELECT id, version FROM task WHERE enabled = 1 LIMIT ?', [cache.capacity + 1]);
  if (rows.length > cache.capacity) return { loaded: 0, overCapacity: true };
  const missing = rows.filter((r) => cache.get(String(r.id), Number(r.version)) === undefined).map((r) => String(r.id));
  // The versions are read already: only the missing rows, not a second version lookup.
  for (let i = 0; i < missing.length; i += CHUNK) await readTaskRows(db, missing.slice(i, i + CHUNK), cache);
  return { loaded: missing.length, overCapacity: false };
}
