/**
 * `dependsOn` → edges (ADMIN-API.md "Task definition"; DESIGN §3): a task that names its parents
 * owns its incoming edges. {@link planDependsOn} compares the edges stored with the parents
 * each task of a write names and answers what to add, change (rule) and remove, and the cycle
 * the result would close, if any. Pure: the admin API runs it under the DAG lock.
 */
import { findCycle } from '../dag/cycle.js';
import type { DependencyRule, DependsOnEntry } from './definition.js';

/** A stored edge. */
export interface DependencyEdge {
  readonly parent: string;
  readonly child: string;
  readonly rule: DependencyRule;
}

/** What a write of `dependsOn` does to the edges. */
export interface DependsOnPlan {
  /** New edges, by child then parent. */
  readonly add: DependencyEdge[];
  /** Edges whose rule changes (carrying the new rule). */
  readonly change: DependencyEdge[];
  /** Edges that go. */
  readonly remove: DependencyEdge[];
  /** The cycle the new edges would close (task names in order, first = last), or null. */
  readonly cycle: string[] | null;
}

/** Options of {@link planDependsOn}. */
export interface PlanDependsOnOptions {
  /**
   * Edges for which this answers true are neither removed nor changed, whatever `dependsOn`
   * says (the caller cannot see their parent, so it cannot name it). Default: none.
   */
  readonly keep?: (edge: DependencyEdge) => boolean;
  /** Tasks that are deleted by the same write: every edge from or to them goes. Default none. */
  readonly deleted?: ReadonlySet<string>;
}

const byChildThenParent = (a: DependencyEdge, b: DependencyEdge): number =>
  a.child === b.child ? (a.parent < b.parent ? -1 : a.parent > b.parent ? 1 : 0) : a.child < b.child ? -1 : 1;

/**
 * Plans the edges of a write. `wanted` maps each child whose `dependsOn` is given to its parents
 * (children not in it keep their edges). The cycle check runs over every edge after the write,
 * adding the new ones one by one (by child, then parent), so the cycle named is the one the
 * first offending edge closes, e.g. `['a', 'b', 'a']`.
 */
export function planDependsOn(
  existing: readonly DependencyEdge[],
  wanted: ReadonlyMap<string, readonly DependsOnEntry[]>,
  opts: PlanDependsOnOptions = {},
): DependsOnPlan {
  const keep = opts.keep ?? ((): boolean => false);
  const deleted = opts.deleted ?? new Set<string>();
  const add: DependencyEdge[] = [];
  const change: DependencyEdge[] = [];
  const remove: DependencyEdge[] = [];
  const remaining: DependencyEdge[] = [];
  for (const edge of existing) {
    if (deleted.has(edge.parent) || deleted.has(edge.child)) {
      remove.push(edge);
      continue;
    }
    const parents = wanted.get(edge.child);
    if (parents === undefined || keep(edge)) {
      remaining.push(edge);
      continue;
    }
    const named = parents.find((p) => p.task === edge.parent);
    if (named === undefined) remove.push(edge);
    else {
      if (named.rule !== edge.rule) change.push({ ...edge, rule: named.rule });
      remaining.push({ ...edge, rule: named.rule });
    }
  }
  for (const [child, parents] of wanted) {
    for (const p of parents) {
      if (!existing.some((e) => e.child === child && e.parent === p.task)) add.push({ parent: p.task, child, rule: p.rule });
    }
  }
  add.sort(byChildThenParent);
  change.sort(byChildThenParent);
  remove.sort(byChildThenParent);
  let cycle: string[] | null = null;
  const graph = [...remaining];
  for (const edge of add) {
    cycle = findCycle(graph, edge);
    if (cycle !== null) break;
    graph.push(edge);
  }
  return { add, change, remove, cycle };
}

/** The `dependsOn` of `child` as stored: its incoming edges, by parent name. */
export function dependsOnOf(edges: readonly DependencyEdge[], child: string): DependsOnEntry[] {
  return edges
    .filter((e) => e.child === child)
    .map((e) => ({ task: e.parent, rule: e.rule }))
    .sort((a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0));
}
