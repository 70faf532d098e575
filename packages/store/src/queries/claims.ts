/**
 * `execution_claim` (R18, R21): the business-side idempotency guard, one holder per
 * (instance, run_no, shard). Granted to a live execution; a holder that was fenced out (no
 * longer the instance's current execution, or the run moved on) or that failed is replaced by
 * the next live execution that asks. Run inside a transaction.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { isDuplicateKeyError } from '../errors.js';
import type { Queryable } from '../schema-version.js';

/**
 * Execution states in which an execution may hold a claim: dispatched, running, or accepted by an
 * HTTP endpoint that reports later (`ASYNC`, R15). Every other state (SUCCESS, FAILED, TIMED_OUT,
 * CANCELED, SUPERSEDED, REFUSED, RETURNED, CANCEL_REQUESTED, WORKER_RESTART, …) has ended.
 */
const LIVE_EXECUTION_STATES = ['DISPATCHED', 'RUNNING', 'ASYNC'];

type LiveRow = RowDataPacket & { live: number };

/**
 * Whether an execution is live: it belongs to the instance's current run, the instance is
 * dispatched or running, the execution has not ended in failure, and it is the instance's
 * current execution (for broadcast runs: any shard execution of the current run).
 */
export async function isExecutionLive(db: Queryable, executionId: string): Promise<boolean> {
  const [rows] = await db.query<LiveRow[]>(
    `SELECT (i.state IN ('DISPATCHED', 'RUNNING') AND e.run_no = i.run_no AND e.state IN (?)
             AND (i.current_execution_id = e.execution_id OR e.shard_index IS NOT NULL)) AS live
       FROM task_execution e JOIN task_instance i ON i.id = e.instance_id
      WHERE e.execution_id = ?`,
    [LIVE_EXECUTION_STATES, executionId],
  );
  return Number(rows[0]?.live ?? 0) === 1;
}

/** Outcome of {@link claimRun}. */
export type ClaimOutcome = { granted: true } | { granted: false; holder: string | null; why: 'NOT_LIVE' | 'HELD' };

/** Claims the run of `execution` for it. */
export async function claimRun(
  db: Queryable,
  execution: { executionId: string; instanceId: string; runNo: number; shardIndex: number | null },
): Promise<ClaimOutcome> {
  const shard = execution.shardIndex ?? -1;
  const key = [execution.instanceId, execution.runNo, shard];
  const readHolder = async (): Promise<string | null> => {
    const [rows] = await db.query<Array<RowDataPacket & { execution_id: string }>>(
      'SELECT execution_id FROM execution_claim WHERE instance_id = ? AND run_no = ? AND shard_index = ? FOR UPDATE',
      key,
    );
    return rows[0]?.execution_id ?? null;
  };
  let holder = await readHolder();
  if (holder === execution.executionId) return { granted: true };
  if (!(await isExecutionLive(db, execution.executionId))) return { granted: false, holder, why: 'NOT_LIVE' };
  if (holder === null) {
    try {
      await db.query('INSERT INTO execution_claim (instance_id, run_no, shard_index, execution_id) VALUES (?, ?, ?, ?)', [
        ...key,
        execution.executionId,
      ]);
      return { granted: true };
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      holder = await readHolder();
      if (holder === execution.executionId) return { granted: true };
    }
  }
  if (holder !== null && (await isExecutionLive(db, holder))) return { granted: false, holder, why: 'HELD' };
  // The holder was fenced out or failed: the claim passes to this live execution.
  const [result] = await db.query<ResultSetHeader>(
    `UPDATE execution_claim SET execution_id = ?, claimed_at = CURRENT_TIMESTAMP(3)
      WHERE instance_id = ? AND run_no = ? AND shard_index = ? AND execution_id <=> ?`,
    [execution.executionId, ...key, holder],
  );
  return result.affectedRows === 1 ? { granted: true } : { granted: false, holder, why: 'HELD' };
}
