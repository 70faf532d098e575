/**
 * The retention purge's read (DESIGN §9): final instances that ended before a cutoff, oldest
 * end first, locked for the transaction that aggregates and deletes them.
 *
 * By `ended_at`, not `updated_at`: `ended_at` is written once, when the instance becomes final
 * (transitions.ts fills it in when a caller does not) and cleared by a rerun, so its index
 * (`idx_instance_ended`, migration 0002) is not rewritten by every state change the way an
 * index on `updated_at` was. On schema 1 the same query still works, through a `state` index
 * and a sort.
 */
import type { RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';

/** A final instance the purge may delete, with what the daily aggregates need. */
export interface EndedInstance {
  readonly id: string;
  readonly taskName: string;
  readonly state: 'SUCCESS' | 'FAILED' | 'CANCELED';
  readonly expectedTime: Date;
  readonly startedAt: Date | null;
  readonly endedAt: Date;
}

type Row = RowDataPacket & {
  id: string;
  task_name: string;
  state: EndedInstance['state'];
  expected_time: Date;
  started_at: Date | null;
  ended_at: Date;
};

/**
 * Locks (`FOR UPDATE`) up to `limit` SUCCESS, FAILED or CANCELED instances whose `ended_at` is
 * before `endedBefore`, oldest end first. Call inside a transaction.
 */
export async function lockEndedInstances(conn: Queryable, endedBefore: Date, limit: number): Promise<EndedInstance[]> {
  const [rows] = await conn.query<Row[]>(
    `SELECT id, task_name, state, expected_time, started_at, ended_at FROM task_instance
      WHERE ended_at < ? AND state IN ('SUCCESS', 'FAILED', 'CANCELED')
      ORDER BY ended_at
      LIMIT ?
      FOR UPDATE`,
    [endedBefore, limit],
  );
  return rows.map((r) => ({
    id: String(r.id),
    taskName: r.task_name,
    state: r.state,
    expectedTime: r.expected_time,
    startedAt: r.started_at,
    endedAt: r.ended_at,
  }));
}
