/**
 * `task_edge` writes and `dag_lock` (R19): every edge write first locks the single `dag_lock`
 * row `FOR UPDATE`, so two concurrent writes cannot each pass the cycle check; the check runs
 * on the edges read after the lock, in the same transaction. Reading every edge is
 * `listEdges` (tasks.ts).
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { isDuplicateKeyError, isNoSuchColumnError } from '../errors.js';
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

/**
 * Inserts an edge with the current teams of its two tasks (migration 0011: the writer covers
 * the child's team, so the edge is allowed between these two teams); returns false when it
 * exists already. Both tasks must exist (in this transaction).
 */
export async function insertEdge(db: Queryable, edge: { parent: string; child: string; rule: string }): Promise<boolean> {
  try {
    try {
      const [result] = await db.query<ResultSetHeader>(
        `INSERT INTO task_edge (parent_task, child_task, rule, parent_team, child_team)
         SELECT ?, ?, ?, p.team, c.team FROM task p JOIN task c ON c.name = ? WHERE p.name = ?`,
        [edge.parent, edge.child, edge.rule, edge.child, edge.parent],
      );
      if (result.affectedRows === 1) return true;
    } catch (err) {
      if (!isNoSuchColumnError(err)) throw err; // before 0011: no teams recorded, as before
    }
    // a task missing: the plain insert fails on its foreign key as it always did
    await db.query('INSERT INTO task_edge (parent_task, child_task, rule) VALUES (?, ?, ?)', [edge.parent, edge.child, edge.rule]);
    return true;
  } catch (err) {
    if (isDuplicateKeyError(err)) return false;
    throw err;
  }
}

/**
 * Records the current teams of both tasks on the edges from `parents` to `child` (a write of
 * the child's `dependsOn` by a token covering the child's team and seeing these parents
 * allows them again, e.g. after a task moved to another team). Nothing before 0011.
 */
export async function recordEdgeTeams(db: Queryable, child: string, parents: readonly string[]): Promise<void> {
  if (parents.length === 0) return;
  try {
    await db.query(
      `UPDATE task_edge e JOIN task p ON p.name = e.parent_task JOIN task c ON c.name = e.child_task
          SET e.parent_team = p.team, e.child_team = c.team
        WHERE e.child_task = ? AND e.parent_task IN (?)`,
      [child, parents],
    );
  } catch (err) {
    if (!isNoSuchColumnError(err)) throw err;
  }
}

/** An edge as the scheduler's DAG needs it. */
export interface SchedulerEdgeRow {
  readonly parent: string;
  readonly child: string;
  readonly rule: 'ALL_SUCCESS' | 'ALL_DONE';
  /**
   * Whether the parent's instances may create instances of a dependency-only child: both tasks
   * of one team, or the edge allowed between their current teams (written by a token covering
   * the child's team while the tasks were of these teams; #44). Always on a schema before 0011.
   */
  readonly createsChild: boolean;
}

/** Every edge, child then parent order, with whether it may create the child's instances. */
export async function listSchedulerEdges(db: Queryable): Promise<SchedulerEdgeRow[]> {
  const [rows] = await db.query<Array<RowDataPacket & { parent_task: string; child_task: string; rule: string; parent_team?: string | null; child_team?: string | null; p_team: string; c_team: string }>>(
    `SELECT e.*, p.team AS p_team, c.team AS c_team
       FROM task_edge e JOIN task p ON p.name = e.parent_task JOIN task c ON c.name = e.child_task
      ORDER BY e.child_task, e.parent_task`,
  );
  return rows.map((r) => ({
    parent: r.parent_task,
    child: r.child_task,
    rule: r.rule === 'ALL_DONE' ? 'ALL_DONE' : 'ALL_SUCCESS',
    createsChild: r.p_team === r.c_team || r.parent_team === undefined || (r.parent_team === r.p_team && r.child_team === r.c_team),
  }));
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
