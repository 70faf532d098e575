/**
 * The worker each execution was dispatched to: the broker keeps job output (`log` messages,
 * outputs in results) only from the worker that runs the execution.
 */
import type { RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';

/** Workers of the known executions among `executionIds` (unknown ids are absent). */
export async function workersOfExecutions(db: Queryable, executionIds: readonly string[]): Promise<Map<string, string>> {
  const [rows] = await db.query<Array<RowDataPacket & { execution_id: string; worker_id: string }>>(
    'SELECT execution_id, worker_id FROM task_execution WHERE execution_id IN (?)',
    [executionIds],
  );
  return new Map(rows.map((r) => [String(r.execution_id), String(r.worker_id)]));
}
