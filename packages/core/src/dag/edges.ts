/** DAG edges between tasks (`task_edge`, DESIGN §2). */

/** How a child's readiness depends on one parent. */
export type EdgeRule = 'ALL_SUCCESS' | 'ALL_DONE';

/** Edge rules, default first. */
export const EDGE_RULES: readonly EdgeRule[] = ['ALL_SUCCESS', 'ALL_DONE'];

/** A dependency: `child` runs after `parent`. */
export interface Edge {
  parent: string;
  child: string;
}

/** Children of every node, in edge order (duplicate edges collapsed). */
export function childrenMap(edges: readonly Edge[]): Map<string, string[]> {
  const children = new Map<string, string[]>();
  for (const { parent, child } of edges) {
    const list = children.get(parent);
    if (list === undefined) children.set(parent, [child]);
    else if (!list.includes(child)) list.push(child);
  }
  return children;
}
