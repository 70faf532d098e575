/**
 * `event_log`: the append-only lifecycle of instances and executions (DESIGN §2). Every
 * service appends through here, in the same transaction as the state change it describes,
 * so the log never claims a transition that was rolled back.
 */
import type { EventType } from '@ax/core';
import { encodeJsonNullable } from '../json.js';
import type { Queryable } from '../schema-version.js';

/** One event to append. */
export interface NewEvent {
  instanceId: string;
  type: EventType;
  executionId?: string | null;
  workerId?: string | null;
  /** One human sentence; cut to 2,048 characters. */
  message?: string | null;
  data?: Record<string, unknown> | null;
  /** Defaults to the database clock (`CURRENT_TIMESTAMP(3)`, R6). */
  at?: Date | null;
}

const MESSAGE_MAX_CHARS = 2_048;

/** Appends events in one multi-row INSERT (nothing when the list is empty). */
export async function appendEvents(db: Queryable, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  // Events of the hot paths carry no time of their own: then the column is left out (its
  // default is the database clock) instead of a COALESCE per row for MariaDB to parse.
  const timed = events.some((e) => e.at !== undefined && e.at !== null);
  const rows = events.map((e) => [
    e.instanceId,
    e.executionId ?? null,
    e.type,
    ...(timed ? [e.at ?? null] : []),
    e.workerId ?? null,
    e.message == null ? null : e.message.slice(0, MESSAGE_MAX_CHARS),
    encodeJsonNullable(e.data ?? null),
  ]);
  // COALESCE keeps the database clock as the default while one statement inserts many rows.
  const row = timed ? '(?, ?, ?, COALESCE(?, CURRENT_TIMESTAMP(3)), ?, ?, ?)' : '(?, ?, ?, ?, ?, ?)';
  await db.query(
    `INSERT INTO event_log (instance_id, execution_id, type, ${timed ? 'at, ' : ''}worker_id, message, data) VALUES ${rows.map(() => row).join(', ')}`,
    rows.flat(),
  );
}
