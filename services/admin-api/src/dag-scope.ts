/**
 * The DAG as a caller may see it: only the edges whose two tasks are of the caller's teams (an
 * edge to a task of another team is left out with that task, so reachability does not pass
 * through what is hidden). Read from the edges and their tasks' teams, never from every task.
 */
import { reachableFrom } from '@ax/core';
import { listEdgesWithTeams, listEdgesWithTeamsReachableFrom, type Queryable, type TaskEdgeRow, type TeamedEdgeRow } from '@ax/store';
import type { Principal } from './auth.js';
import { coversTeam, visibleTeams } from './team-scope.js';

const seenBy = (principal: Principal | null) => (e: TeamedEdgeRow): boolean => coversTeam(principal, e.parentTeam) && coversTeam(principal, e.childTeam);
const plain = ({ parent, child, rule }: TeamedEdgeRow): TaskEdgeRow => ({ parent, child, rule });

/** The edges between tasks the caller sees, child then parent order. */
export async function visibleEdges(db: Queryable, principal: Principal | null): Promise<TaskEdgeRow[]> {
  return (await listEdgesWithTeams(db)).filter(seenBy(principal)).map(plain);
}

/**
 * `reachableFrom(root, visibleEdges(…))` without reading the whole DAG: one recursive statement
 * walks down from `root` through the edges between the caller's teams' tasks only (#46; it was a
 * statement per level) and returns the edges of every task reached, so nodes and edges come out
 * exactly as from all the edges.
 */
export async function visibleReachableFrom(db: Queryable, principal: Principal | null, root: string): Promise<{ nodes: string[]; edges: TaskEdgeRow[] }> {
  const edges = (await listEdgesWithTeamsReachableFrom(db, root, visibleTeams(principal))).filter(seenBy(principal)).map(plain);
  return reachableFrom(root, edges);
}
