/** The cycle check run before an edge is written (DESIGN §2, R19; ADMIN-API 409 `CYCLE`). */
import { childrenMap, type Edge } from './edges.js';

/**
 * The cycle that adding `candidate` to `edges` would close, or null when the graph stays
 * acyclic. The cycle is listed in order, starting and ending with `candidate.child`:
 * with `a→b`, `b→c`, adding `c→a` gives `['a','b','c','a']`; a self-edge `a→a` gives `['a','a']`.
 * The shortest such cycle is returned (breadth-first search), deterministically.
 */
export function findCycle(edges: readonly Edge[], candidate: Edge): string[] | null {
  const { parent, child } = candidate;
  if (parent === child) return [child, child];
  // The candidate closes a cycle iff `child` already reaches `parent`.
  const children = childrenMap(edges);
  const cameFrom = new Map<string, string>();
  const queue: string[] = [child];
  const seen = new Set<string>([child]);
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head] as string;
    for (const next of children.get(node) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      cameFrom.set(next, node);
      if (next === parent) {
        const path: string[] = [parent];
        let step = parent;
        while (step !== child) {
          step = cameFrom.get(step) as string;
          path.push(step);
        }
        path.reverse();
        path.push(child);
        return path;
      }
      queue.push(next);
    }
  }
  return null;
}
