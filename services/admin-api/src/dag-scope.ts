/**
 * The DAG as a caller may see it: only the edges whose two tasks are of the caller's teams (an
 * edge to a task of another team is left out with that task, so reachability does not pass
 * through what is hidden). Read from the edges and their tasks' teams, never from every task.
 */
import { reachableFrom } from '@ax/core';
import { listEdgesWithTeams, listEdgesWithTeamsFrom, type Queryable, type TaskEdgeRow, type TeamedEdgeRow } from '@ax/store';
import type { Principal } from './auth.js';
import { coversTeam } from './team-scope.js';

/**
 * Past this many tasks reached, a walk reads every edge at once instead: one statement for the
 * whole DAG costs less than a level's IN list of thousands of names.
 */
const WALK_MAX_NODES = 1_000;

const seenBy = (principal: Principal | null) => (e: TeamedEdgeRow): boolean => coversTeam(principal, e.parentTeam) && coversTeam(principal, e.childTeam);
const plain = ({ parent, child, rule }: TeamedEdgeRow): TaskEdgeRow => ({ parent, child, rule });

/** The edges between tasks the caller sees, child then parent order. */
export async function visibleEdges(db: Queryable, principal: Principal | null): Promise<TaskEdgeRow[]> {
  return (await listEdgesWithTeams(db)).filter(seenBy(principal)).map(plain);
}

/**
 * `reachableFrom(root, visibleEdges(…))` without reading the whole DAG: walks down from `root`
 * one level a statement (the primary key's parent prefix), then reads the edges of every task
 * reached in one ordered statement, so nodes and edges come out exactly as from all the edges.
 */
export async function visibleReachableFrom(db: Queryable, principal: Principal | null, root: string): Promise<{ nodes: string[]; edges: TaskEdgeRow[] }> {
  const visible = seenBy(principal);
  const reached = new Set<string>([root]);
  let level = [root];
  while (level.length > 0) {
    if (reached.size > WALK_MAX_NODES) return reachableFrom(root, await visibleEdges(db, principal));
    const next: string[] = [];
    for (const e of await listEdgesWithTeamsFrom(db, level)) {
      if (!visible(e) || reached.has(e.child)) continue;
      reached.add(e.child);
      next.push(e.child);
    }
    level = next;
  }
  const edges = (await listEdgesWithTeamsFrom(db, [...reached])).filter(visible).map(plain);
  return reachableFrom(root, edges);
}
