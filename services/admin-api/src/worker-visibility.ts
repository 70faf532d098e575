/**
 * Which live workers a token sees and may act on (ADMIN-API.md "Workers"), one rule for the
 * registry list, drain and undrain, and `GET /status`.
 *
 * A worker of every team is shared: everyone sees it, and only a token of every team may drain
 * it (that acts on all teams). One enrolled for some teams, or started with AX_WORKER_TEAMS, is
 * the machine of those teams: a token that covers each of them sees it and may drain it; other
 * teams' tokens do not see it.
 */
import { enrollmentOfWorkerId } from '@ax/core';
import { readRegistration, readRegistry, type WorkerRegistration } from '@ax/redis';
import { liveEnrollmentTeams } from '@ax/store';
import type { Principal } from './auth.js';
import type { AppDeps } from './deps.js';
import { ApiError, notFound } from './errors.js';
import { assertAllTeams, coversAllTeams, coversTeam, uncoveredTeams } from './team-scope.js';

/** A live worker with the teams it serves. */
export interface ServedWorker {
  readonly worker: WorkerRegistration;
  /** `["*"]` = every team; `[]` = none (its enrollment is revoked or has no team left). */
  readonly teams: readonly string[];
}

/**
 * The teams a worker serves (the enrollment contract's decision 5): an enrolled worker's are its
 * live enrollment's (`["*"]`: every team), narrowed by what its registry entry advertises
 * (AX_WORKER_TEAMS), and none when its enrollment is not live; an unenrolled worker's are what
 * it advertises, every team when nothing.
 */
export function servedTeams(advertised: readonly string[] | undefined, enrollmentId: string | null, liveEnrollments: ReadonlyMap<string, readonly string[]>): string[] {
  const own = advertised === undefined || advertised.length === 0 ? null : [...advertised];
  if (enrollmentId === null) return own ?? ['*'];
  const record = liveEnrollments.get(enrollmentId);
  if (record === undefined) return [];
  if (record.includes('*')) return own ?? ['*'];
  return own === null ? [...record] : own.filter((team) => record.includes(team));
}

/** Whether the token sees a worker serving `teams`. */
function sees(principal: Principal | null, teams: readonly string[]): boolean {
  return teams.includes('*') || coversAllTeams(principal) || teams.some((team) => coversTeam(principal, team));
}

/** The live workers the token sees, sorted by id. */
export async function visibleWorkers(deps: AppDeps, principal: Principal | null): Promise<ServedWorker[]> {
  const registry = await readRegistry(deps.redis, deps.keys);
  const enrollments = registry.some((w) => enrollmentOfWorkerId(w.workerId) !== null) ? await liveEnrollmentTeams(deps.pool) : new Map<string, readonly string[]>();
  return registry.map((worker) => ({ worker, teams: servedTeams(worker.teams, enrollmentOfWorkerId(worker.workerId), enrollments) })).filter(({ teams }) => sees(principal, teams));
}

/**
 * The live worker `id` when the token may act on it (drain, undrain): 404 when it is not live
 * or the token does not see it; 403 when it serves a team the token does not cover.
 */
export async function workerToActOn(deps: AppDeps, principal: Principal | null, id: string, doing: string): Promise<ServedWorker> {
  const missing = notFound(`worker ${JSON.stringify(id)}`);
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(id)) throw missing;
  const worker = await readRegistration(deps.redis, deps.keys, id);
  if (worker === null) throw missing;
  const enrollment = enrollmentOfWorkerId(id);
  const teams = servedTeams(worker.teams, enrollment, enrollment === null ? new Map() : await liveEnrollmentTeams(deps.pool));
  if (!sees(principal, teams)) throw missing;
  if (teams.includes('*')) assertAllTeams(principal, `${doing} a worker that serves every team`);
  const uncovered = uncoveredTeams(principal, teams);
  if (uncovered.length > 0) {
    throw new ApiError(403, 'FORBIDDEN', `${doing} worker ${JSON.stringify(id)} needs a token of every team it serves; this token does not cover ${uncovered.join(', ')}`, { required: teams });
  }
  return { worker, teams };
}
