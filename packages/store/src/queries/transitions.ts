/**
 * The one way the broker changes an instance's state (DESIGN §2, CONVENTIONS habit 5): a
 * conditional `UPDATE … WHERE id=? AND state=?` (optionally fenced by `current_execution_id`),
 * checked against core's transition table first. Affected rows = 1, or it lost the race.
 */
import type { ResultSetHeader } from 'mysql2';
import { assertTransition, isFinal, type InstanceState } from '@ax/core';
import type { Queryable } from '../schema-version.js';

/** Columns a transition may set besides `state`. */
export type InstanceColumn =
  | 'reason'
  | 'attempt'
  | 'max_attempts'
  | 'due_at'
  | 'worker_id'
  | 'dispatch_count'
  | 'reroute_count'
  | 'lost_count'
  | 'ack_deadline'
  | 'lease_until'
  | 'current_execution_id'
  | 'shard_total'
  | 'started_at'
  | 'ended_at'
  | 'task_version'
  | 'waiting_reason'
  | 'waiting_since'
  | 'waiting_message';

/** A value computed in SQL (on the database clock, R6): the expression is code, never input. */
export interface SqlExpr {
  readonly expr: string;
  readonly params?: readonly unknown[];
}

/** `NOW(3) + ms` on the database clock. */
export function nowPlusMs(ms: number): SqlExpr {
  return { expr: 'NOW(3) + INTERVAL ? MICROSECOND', params: [Math.round(ms) * 1000] };
}

/**
 * A transition that ends a wait (PENDING → DISPATCHED) clears the row's waiting reason (0013)
 * in the same write, so the backlog scan has no reason left to clear on it later (#45).
 */
export const WAIT_ENDED = { waiting_reason: null, waiting_since: null, waiting_message: null } as const;

/** `NOW(3)`. */
export const NOW: SqlExpr = { expr: 'NOW(3)' };

/** Increments a column by one. */
export function increment(column: InstanceColumn): SqlExpr {
  return { expr: `${column} + 1` };
}

/** One transition. */
export interface InstanceTransition {
  readonly id: string;
  readonly from: InstanceState | readonly InstanceState[];
  readonly to: InstanceState;
  /** Also require `current_execution_id` to be this (results and ACKs are fenced by it). */
  readonly fenceExecutionId?: string;
  readonly set?: Partial<Record<InstanceColumn, unknown>>;
}

function isExpr(value: unknown): value is SqlExpr {
  return typeof value === 'object' && value !== null && 'expr' in value && typeof (value as SqlExpr).expr === 'string';
}

/**
 * Checks every (from, to) pair against core's table and builds `state = ?, <column> = …` with
 * its parameters (plain values bound, SQL expressions inlined with theirs), plus `ended_at`
 * for a final `to` when `set` has none. Shared by the single-row and the set-based transitions.
 * @throws IllegalTransitionError when a pair is not in core's table.
 */
export function transitionAssignments(
  froms: readonly InstanceState[],
  to: InstanceState,
  set: Partial<Record<InstanceColumn, unknown>> = {},
): { assignments: string[]; params: unknown[] } {
  for (const from of froms) assertTransition(from, to);
  const assignments = ['state = ?'];
  const params: unknown[] = [to];
  for (const [column, value] of Object.entries(set)) {
    if (isExpr(value)) {
      assignments.push(`${column} = ${value.expr}`);
      params.push(...(value.params ?? []));
    } else {
      assignments.push(`${column} = ?`);
      params.push(value);
    }
  }
  // The retention purge finds final instances by `ended_at` (retention.ts): a move to a final
  // state that does not say when it ended gets the database clock.
  if (isFinal(to) && !('ended_at' in set)) assignments.push('ended_at = COALESCE(ended_at, NOW(3))');
  return { assignments, params };
}

/**
 * Applies one transition; true when this write won (affected rows = 1).
 * @throws IllegalTransitionError when a (from, to) pair is not in core's table.
 */
export async function transitionInstance(db: Queryable, t: InstanceTransition): Promise<boolean> {
  const froms: readonly InstanceState[] = typeof t.from === 'string' ? [t.from] : t.from;
  const { assignments, params } = transitionAssignments(froms, t.to, t.set);
  let where = `id = ? AND state IN (${froms.map(() => '?').join(', ')})`;
  params.push(t.id, ...froms);
  if (t.fenceExecutionId !== undefined) {
    where += ' AND current_execution_id = ?';
    params.push(t.fenceExecutionId);
  }
  const [result] = await db.query<ResultSetHeader>(`UPDATE task_instance SET ${assignments.join(', ')} WHERE ${where}`, params);
  return result.affectedRows === 1;
}
