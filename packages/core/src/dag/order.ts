/** Topological order and downstream sets, for dag reruns and the DAG view (R20). */
import { CycleError } from '../errors.js';
import { childrenMap, type Edge } from './edges.js';

/**
 * Every node (those given plus any named by an edge) so that each parent comes before its
 * children. Deterministic: among nodes that are ready at the same time, input order wins
 * (`nodes` first, then first mention in `edges`).
 *
 * @throws CycleError naming a cycle if the edges contain one.
 */
export function topologicalOrder(nodes: readonly string[], edges: readonly Edge[]): string[] {
  const all: string[] = [];
  const position = new Map<string, number>();
  const add = (name: string): void => {
    if (!position.has(name)) {
      position.set(name, all.length);
      all.push(name);
    }
  };
  nodes.forEach(add);
  for (const edge of edges) {
    add(edge.parent);
    add(edge.child);
  }
  const children = childrenMap(edges);
  const indegree = new Map<string, number>(all.map((name) => [name, 0]));
  for (const list of children.values()) for (const c of list) indegree.set(c, (indegree.get(c) ?? 0) + 1);

  // Ready nodes kept sorted by input position (a binary heap would do for huge graphs;
  // DAGs of tasks are small enough for a sorted insert).
  const ready = all.filter((name) => indegree.get(name) === 0);
  const order: string[] = [];
  while (ready.length > 0) {
    const node = ready.shift() as string;
    order.push(node);
    for (const next of children.get(node) ?? []) {
      const left = (indegree.get(next) ?? 0) - 1;
      indegree.set(next, left);
      if (left === 0) {
        const at = position.get(next) ?? 0;
        let i = ready.findIndex((name) => (position.get(name) ?? 0) > at);
        if (i < 0) i = ready.length;
        ready.splice(i, 0, next);
      }
    }
  }
  if (order.length < all.length) throw new CycleError(cycleAmong(all.filter((n) => (indegree.get(n) ?? 0) > 0), edges));
  return order;
}

/**
 * A cycle among `remaining` (the nodes Kahn's algorithm could not order). Each of them has a
 * parent that is also remaining, so walking parents backwards must revisit a node: the nodes
 * between the two visits, read forwards, are a cycle.
 */
function cycleAmong(remaining: readonly string[], edges: readonly Edge[]): string[] {
  const inside = new Set(remaining);
  const parentOf = new Map<string, string>();
  for (const { parent, child } of edges) {
    if (inside.has(parent) && inside.has(child) && !parentOf.has(child)) parentOf.set(child, parent);
  }
  const walk: string[] = [];
  const index = new Map<string, number>();
  let node = remaining[0] as string;
  while (!index.has(node)) {
    index.set(node, walk.length);
    walk.push(node);
    node = parentOf.get(node) as string;
  }
  const cycle = walk.slice(index.get(node)).reverse();
  return [...cycle, cycle[0] as string];
}

/**
 * Every task downstream of `root` (children, their children, …), excluding `root`, in an
 * order where parents come first: the order a dag rerun runs them in (R20).
 */
export function downstreamOf(root: string, edges: readonly Edge[]): string[] {
  const { nodes, edges: inner } = reachableFrom(root, edges);
  return topologicalOrder(nodes, inner).filter((name) => name !== root);
}

/** The part of the DAG reachable from `root`: its nodes (root first) and the edges among them. */
export function reachableFrom<E extends Edge>(root: string, edges: readonly E[]): { nodes: string[]; edges: E[] } {
  const children = childrenMap(edges);
  const seen = new Set<string>([root]);
  const nodes = [root];
  for (let head = 0; head < nodes.length; head++) {
    for (const next of children.get(nodes[head] as string) ?? []) {
      if (!seen.has(next)) {
        seen.add(next);
        nodes.push(next);
      }
    }
  }
  return { nodes, edges: edges.filter((edge) => seen.has(edge.parent)) };
}
