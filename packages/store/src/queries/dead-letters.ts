/** `dead_letter`: poison messages as the broker stored them from the dead-letter queue. */
import type { RowDataPacket } from 'mysql2';
import { decodeJsonNullable } from '../json.js';
import type { Queryable } from '../schema-version.js';

/** A dead letter as stored. */
export interface DeadLetterRecord {
  readonly id: string;
  readonly at: Date;
  readonly sourceQueue: string;
  readonly reason: string;
  readonly payload: string | null;
  readonly headers: unknown;
}

/** Dead letters newest first, after the keyset cursor `beforeId`. */
export async function listDeadLetters(db: Queryable, opts: { beforeId?: string; limit: number }): Promise<DeadLetterRecord[]> {
  const [rows] = await db.query<
    Array<RowDataPacket & { id: string; at: Date; source_queue: string; reason: string; payload: string | null; headers: unknown }>
  >(
    `SELECT id, at, source_queue, reason, payload, headers FROM dead_letter
      ${opts.beforeId === undefined ? '' : 'WHERE id < ?'} ORDER BY id DESC LIMIT ?`,
    opts.beforeId === undefined ? [opts.limit] : [opts.beforeId, opts.limit],
  );
  return rows.map((r) => ({
    id: String(r.id),
    at: r.at,
    sourceQueue: r.source_queue,
    reason: r.reason,
    payload: r.payload,
    headers: decodeJsonNullable(r.headers),
  }));
}
