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

/** An incoming edge of a task with the team of its parent (to leave out parents a caller cannot see). */
export interface IncomingEdgeRow {
  readonly parent: string;
  readonly child: string;
  readonly rule: 'ALL_SUCCESS' | 'ALL_DONE';
  /** The parent task's team. */
  readonly parentTeam: string;
}

/** The incoming edges of `children` (their `dependsOn` as stored), by child then parent. */
export async function listIncomingEdges(db: Queryable, children: readonly string[]): Promise<IncomingEdgeRow[]> {
  if (children.length === 0) return [];
  const [rows] = await db.query<Array<RowDataPacket & { parent_task: string; child_task: string; rule: string; team: string }>>(
    `SELECT e.parent_task, e.child_task, e.rule, t.team FROM task_edge e JOIN task t ON t.name = e.parent_task
      WHERE e.child_task IN (?) ORDER BY e.child_task, e.parent_task`,
    [children],
  );
  return rows.map((r) => ({ parent: r.parent_task, child: r.child_task, rule: r.rule === 'ALL_DONE' ? 'ALL_DONE' : 'ALL_SUCCESS', parentTeam: r.team }));
}

/** Changes the rule of an edge; returns whether it exists. */
export async function setEdgeRule(db: Queryable, edge: { parent: string; child: string; rule: string }): Promise<boolean> {
  const [result] = await db.query<ResultSetHeader>('UPDATE task_edge SET rule = ? WHERE parent_task = ? AND child_task = ?', [edge.rule, edge.parent, edge.child]);
  return result.affectedRows === 1;
}
