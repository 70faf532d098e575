/**
 * 409 `CYCLE` as a caller may see it (#44): `details.cycle` names only tasks of the caller's
 * teams (and tasks it writes in the same request). A cycle that passes through tasks of other
 * teams is still refused, but their names are left out: the caller learns that the edge would
 * close a cycle, never which tasks of another team it runs through.
 */
import { getTask, type Queryable } from '@ax/store';
import type { Principal } from './auth.js';
import { ApiError } from './errors.js';
import { coversTeam } from './team-scope.js';

/** The 409 `CYCLE` error for `cycle` (task names, first = last), hidden tasks left out. */
export async function cycleError(
  db: Queryable,
  principal: Principal | null,
  cycle: readonly string[],
  opts: { written?: ReadonlySet<string>; prefix: string },
): Promise<ApiError> {
  const seen = new Map<string, boolean>();
  for (const name of cycle) {
    if (seen.has(name)) continue;
    if (opts.written?.has(name) === true) seen.set(name, true);
    else {
      const task = await getTask(db, name);
      seen.set(name, task !== null && coversTeam(principal, task.definition.team));
    }
  }
  const shown = cycle.filter((name) => seen.get(name) === true);
  // first = last again after the hidden ones are dropped (the cycle closes on a visible task)
  const closed = shown.length > 1 && shown[0] === shown.at(-1) ? shown : shown.length > 0 ? [...shown, shown[0] as string] : [];
  const hidden = shown.length < cycle.length;
  const path = closed.join(' → ');
  return new ApiError(409, 'CYCLE', `${opts.prefix}${path}${hidden ? ' (through tasks of teams the token does not cover)' : ''}`, { cycle: closed });
}
