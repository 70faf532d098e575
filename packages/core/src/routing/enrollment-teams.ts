/**
 * The teams an enrolled worker serves are the server's record (DESIGN R24, ENROLLMENT-CONTRACT
 * point 5): its live enrollment's teams (`["*"]` = every team), narrowed by what its registry
 * entry advertises (`AX_WORKER_TEAMS`; none = no narrowing). A worker cannot widen them: an
 * advertised team outside its enrollment is ignored, and a worker whose enrollment is revoked
 * or unknown serves nothing.
 */
import { enrollmentOfWorkerId } from '../identity/enrollment.js';

/** Every team (an enrollment's `teams`, or an advertised list). */
const ALL = '*';

function isAll(teams: readonly string[] | undefined): boolean {
  return teams === undefined || teams.length === 0 || teams.includes(ALL);
}

/**
 * The teams a worker serves, in `WorkerSnapshot.teams` form (`[]` = every team), or null when it
 * serves none and must get no work. `advertised`: its registry entry's teams; `liveTeams`: the
 * teams of every live enrollment by id (`liveEnrollmentTeams`). An unenrolled worker keeps what
 * it advertises (contract point 6).
 */
export function routableTeams(
  workerId: string,
  advertised: readonly string[] | undefined,
  liveTeams: ReadonlyMap<string, readonly string[]>,
): readonly string[] | null {
  const enrollment = enrollmentOfWorkerId(workerId);
  if (enrollment === null) return advertised ?? [];
  const granted = liveTeams.get(enrollment);
  if (granted === undefined || granted.length === 0) return null;
  if (granted.includes(ALL)) return isAll(advertised) ? [] : (advertised as readonly string[]);
  if (isAll(advertised)) return [...granted];
  const both = (advertised as readonly string[]).filter((team) => granted.includes(team));
  return both.length === 0 ? null : both;
}
