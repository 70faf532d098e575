/**
 * Set-based versions of the broker's hottest writes (R10: batch everything that travels
 * together). One statement moves many instances, or records many execution outcomes, instead
 * of one round trip per row: at thousands of instances per second the per-statement cost in
 * the broker and in MySQL is what limits throughput, not the rows themselves.
 *
 * The callers lock the instance rows first (`FOR UPDATE`, in id order) and decide per row in
 * code; the conditional `WHERE` still carries the expected states and fences, so a row that
 * somehow changed meanwhile is simply not moved, and the returned set says which rows won.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import type { InstanceState } from '@ax/core';
import { encodeJsonNullable } from '../json.js';
import type { Queryable } from '../schema-version.js';
import type { ExecutionOutcome } from './results.js';
import { transitionAssignments, type InstanceColumn } from './transitions.js';

/** The same transition applied to many instances. */
export interface BulkTransition {
  readonly ids: readonly string[];
  readonly from: InstanceState | readonly InstanceState[];
  readonly to: InstanceState;
  /** Values shared by every row (plain values or SQL expressions on the database clock). */
  readonly set?: Partial<Record<InstanceColumn, unknown>>;
  /** Values that differ per row: column → (instance id → value). Every id must have one. */
  readonly perRow?: Partial<Record<InstanceColumn, ReadonlyMap<string, unknown>>>;
  /** Fence: instance id → the `current_execution_id` it must still have. */
  readonly fence?: ReadonlyMap<string, string>;
}

/**
 * SQL giving each row its value: `?` when every key has the same one; keys sharing a value
 * grouped as `CASE WHEN key IN (…) THEN ? …` when that makes at most a quarter as many branches
 * as keys; else `CASE key WHEN ? THEN ? … END`. MySQL evaluates a CASE branch by branch, so one
 * branch per row costs rows² comparisons per statement (a few hundred rows: most of the
 * statement), while an `IN` list of constants is a sorted lookup. Parameters go to `params`.
 */
export function perRowValue(keyColumn: string, keys: readonly unknown[], valueOf: (index: number) => unknown, params: unknown[]): string {
  const groups = new Map<string, { value: unknown; keys: unknown[] }>();
  keys.forEach((key, i) => {
    const value = valueOf(i);
    const tag = groupTag(value);
    const group = groups.get(tag) ?? { value, keys: [] };
    group.keys.push(key);
    groups.set(tag, group);
  });
  if (groups.size === 1) {
    params.push([...groups.values()][0]?.value);
    return '?';
  }
  if (groups.size * 4 <= keys.length) {
    for (const g of groups.values()) params.push(g.keys, g.value);
    return `CASE ${[...groups.values()].map(() => `WHEN ${keyColumn} IN (?) THEN ?`).join(' ')} END`;
  }
  keys.forEach((key, i) => params.push(key, valueOf(i)));
  return `CASE ${keyColumn} ${keys.map(() => 'WHEN ? THEN ?').join(' ')} END`;
}

/** Values that are equal as SQL parameters get the same tag. */
function groupTag(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value instanceof Date) return `date:${value.getTime()}`;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return `${typeof value}:${value}`;
  return `object:${JSON.stringify(value)}`;
}

/**
 * An instance id as sent in SQL: a number when it is one (ids are BIGINT: compared as numbers,
 * not converted from text row by row, and shorter), else the text.
 */
export function instanceKey(id: string): number | string {
  return /^[0-9]{1,15}$/.test(id) ? Number(id) : id;
}

/**
 * Applies one transition to many rows in one `UPDATE`; returns the ids that moved.
 * @throws IllegalTransitionError when a (from, to) pair is not in core's table.
 */
export async function transitionInstances(db: Queryable, t: BulkTransition): Promise<Set<string>> {
  const ids = [...new Set(t.ids)];
  if (ids.length === 0) return new Set();
  const froms: readonly InstanceState[] = typeof t.from === 'string' ? [t.from] : t.from;
  const { assignments, params } = transitionAssignments(froms, t.to, t.set);
  const keys = ids.map(instanceKey);
  for (const [column, values] of Object.entries(t.perRow ?? {})) {
    for (const id of ids) if (!values.has(id)) throw new Error(`transitionInstances: no ${column} for instance ${id}`);
    assignments.push(`${column} = ${perRowValue('id', keys, (i) => values.get(ids[i] as string), params)}`);
  }
  let where = `id IN (?) AND state IN (?)`;
  params.push(keys, froms);
  if (t.fence !== undefined) {
    // Execution ids are unique per instance, so "its current execution is one of these" is
    // the per-row fence once the id list is the same set.
    where += ' AND current_execution_id IN (?)';
    params.push(ids.map((id) => t.fence?.get(id) ?? ''));
  }
  // By primary key, always: with few rows in the `from` state the optimizer may take a state
  // index, whose range under load is mostly delete-marked entries not yet purged.
  const [result] = await db.query<ResultSetHeader>(`UPDATE task_instance FORCE INDEX (PRIMARY) SET ${assignments.join(', ')} WHERE ${where}`, params);
  if (result.affectedRows === ids.length) return new Set(ids);
  // Some row was not where the caller thought: find out which moved (rare; same transaction).
  const [rows] = await db.query<RowDataPacket[]>(`SELECT id, current_execution_id FROM task_instance WHERE id IN (?) AND state = ?`, [ids, t.to]);
  return new Set(rows.filter((r) => t.fence === undefined || t.fence.get(String(r.id)) === r.current_execution_id).map((r) => String(r.id)));
}

/** Marks executions ACKed (first ACK only) in one statement. */
export async function markExecutionsAcked(db: Queryable, executionIds: readonly string[]): Promise<void> {
  if (executionIds.length === 0) return;
  await db.query(
    `UPDATE task_execution SET acked_at = NOW(3), state = IF(state = 'DISPATCHED', 'RUNNING', state)
      WHERE execution_id IN (?) AND acked_at IS NULL`,
    [[...new Set(executionIds)]],
  );
}

/**
 * Records many executions' outcomes (the run log) in one single-table `UPDATE` whose values
 * are `perRowValue` per column (one plain value when every row shares it). Not an `UPDATE … JOIN (SELECT … UNION ALL …)`: that form crashed MariaDB 10.11.19
 * (signal 11) under load here. Closed outcomes only (`open` is for async acceptance, recorded
 * one by one).
 */
export async function recordExecutionOutcomes(
  db: Queryable,
  outcomes: ReadonlyArray<{ readonly executionId: string; readonly outcome: ExecutionOutcome }>,
): Promise<void> {
  if (outcomes.length === 0) return;
  const unique = [...new Map(outcomes.map((o) => [o.executionId, o])).values()];
  for (const { executionId, outcome } of unique) {
    if (outcome.open === true) throw new Error(`recordExecutionOutcomes: execution ${executionId} is open (async); record it with recordExecutionOutcome`);
  }
  const ids = unique.map((u) => u.executionId);
  const params: unknown[] = [];
  const valueOf = (pick: (o: ExecutionOutcome) => unknown): string => perRowValue('execution_id', ids, (i) => pick((unique[i] as (typeof unique)[number]).outcome), params);
  const assignments = [
    `state = ${valueOf((o) => o.state)}`,
    `reason = ${valueOf((o) => o.reason ?? null)}`,
    `exit_code = ${valueOf((o) => o.exitCode ?? null)}`,
    `output_tail = ${valueOf((o) => o.outputTail ?? null)}`,
    `output_truncated = ${valueOf((o) => (o.outputTruncated ? 1 : 0))}`,
    `error = ${valueOf((o) => o.error ?? null)}`,
    `result = COALESCE(${valueOf((o) => encodeJsonNullable(o.result ?? null))}, result)`,
    `started_at = COALESCE(${valueOf((o) => o.startedAt ?? null)}, started_at, acked_at)`,
    `ended_at = COALESCE(${valueOf((o) => o.endedAt ?? null)}, NOW(3))`,
  ];
  await db.query(`UPDATE task_execution SET ${assignments.join(', ')} WHERE execution_id IN (?)`, [...params, ids]);
}
