/**
 * The DAG as a caller may see it: only the edges whose two tasks are of the caller's teams (an
 * edge to a task of another team is left out with that task, so reachability does not pass
 * through what is hidden). Read from the edges and their tasks' teams, never from every task.
 */
import { listEdgesWithTeams, type Queryable, type TaskEdgeRow } from '@ax/store';
import type { Principal } from './auth.js';
import { coversTeam } from './team-scope.js';

/** The edges between tasks the caller sees, child then parent order. */
export async function visibleEdges(db: Queryable, principal: Principal | null): Promise<TaskEdgeRow[]> {
  return (await listEdgesWithTeams(db))
    .filter((e) => coversTeam(principal, e.parentTeam) && coversTeam(principal, e.childTeam))
    .map(({ parent, child, rule }) => ({ parent, child, rule }));
}
