/**
 * `task_edge` writes and `dag_lock` (R19): every edge write first locks the single `dag_lock`
 * row `FOR UPDATE`, so two concurrent writes cannot each pass the cycle check; the check runs
 * on the edges read after the lock, in the same transaction. Reading every edge is
 * `listEdges` (tasks.ts).
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { isDuplicateKeyError } from '../errors.js';
import type { Queryable } from '../schema-version.js';

/** Locks the DAG (inside a transaction) and returns its current `dag_version`. */
export async function lockDag(db: Queryable): Promise<number> {
  const [rows] = await db.query<Array<RowDataPacket & { dag_version: string }>>(
    'SELECT dag_version FROM dag_lock WHERE id = 1 FOR UPDATE',
  );
  const row = rows[0];
  if (row === undefined) {
    // The migration inserts the row; recreate it if someone removed it.
    await db.query('INSERT IGNORE INTO dag_lock (id, dag_version) VALUES (1, 0)');
    return lockDag(db);
  }
  return Number(row.dag_version);
}

/** Counts a change of the DAG (call after an edge write, inside the locking transaction). */
export async function bumpDagVersion(db: Queryable): Promise<void> {
  await db.query('UPDATE dag_lock SET dag_version = dag_version + 1, updated_at = CURRENT_TIMESTAMP(3) WHERE id = 1');
}

/** Inserts an edge; returns false when it exists already. */
export async function insertEdge(db: Queryable, edge: { parent: string; child: string; rule: string }): Promise<boolean> {
  try {
    await db.query('INSERT INTO task_edge (parent_task, child_task, rule) VALUES (?, ?, ?)', [edge.parent, edge.child, edge.rule]);
    return true;
  } catch (err) {
    if (isDuplicateKeyError(err)) return false;
    throw err;
  }
}

/** Deletes an edge; returns whether it existed. */
export async function deleteEdge(db: Queryable, edge: { parent: string; child: string }): Promise<boolean> {
  const [result] = await db.query<ResultSetHeader>('DELETE FROM task_edge WHERE parent_task = ? AND child_task = ?', [
    edge.parent,
    edge.child,
  ]);
  return result.affectedRows === 1;
}
