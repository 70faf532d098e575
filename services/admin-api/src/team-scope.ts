/**
 * The team boundary of the admin API (ADMIN-API.md "Teams", CONVENTIONS habit 12), in one
 * place: a token acts for a list of teams or for all (`*`). Everything of a team it does not
 * cover answers 404 `NOT_FOUND`, exactly as if it did not exist, and is left out of every list,
 * count and stat (the store's reads take the team list as a filter with placeholders). What
 * only a token of every team may do (teams, global pause, dead letters, tokens of other teams)
 * answers 403 `FORBIDDEN`: those are not objects of one team.
 */
import { getExecution, getInstance, getTask, getTaskTeam, type ExecutionRecord, type InstanceRecord, type Queryable, type TaskRecord } from '@ax/store';
import type { Principal } from './auth.js';
import { ApiError, notFound } from './errors.js';

/** What a token covers: every team, or these. */
export type TeamScope = '*' | readonly string[];

/** The `teams` column of a token → its scope (`["*"]` → `*`). */
export function scopeOfTeams(teams: readonly string[]): TeamScope {
  return teams.includes('*') ? '*' : teams;
}

/** The teams the caller sees: `null` = every team (no filter); a list otherwise. */
export function visibleTeams(principal: Principal | null): readonly string[] | null {
  if (principal === null) return [];
  return principal.teams === '*' ? null : principal.teams;
}

/** Whether the caller acts for every team. */
export function coversAllTeams(principal: Principal | null): boolean {
  return principal !== null && principal.teams === '*';
}

/** Whether the caller covers `team` (null: an instance whose task was deleted — `*` only). */
export function coversTeam(principal: Principal | null, team: string | null): boolean {
  if (principal === null) return false;
  if (principal.teams === '*') return true;
  return team !== null && principal.teams.includes(team);
}

/** 404 for `what` unless the caller covers `team`: existence outside the scope is not disclosed. */
export function assertTeamVisible(principal: Principal | null, team: string | null, what: string): void {
  if (!coversTeam(principal, team)) throw notFound(what);
}

/** 403 unless the caller acts for every team (`*`). */
export function assertAllTeams(principal: Principal | null, doing: string): void {
  if (!coversAllTeams(principal)) {
    throw new ApiError(403, 'FORBIDDEN', `${doing} needs a token of every team ("*")`, { required: ['*'] });
  }
}

/** The task if it exists and the caller covers its team; 404 otherwise (the same answer either way). */
export async function mustSeeTask(db: Queryable, principal: Principal | null, name: string, opts: { forUpdate?: boolean } = {}): Promise<TaskRecord> {
  const task = await getTask(db, name, opts);
  if (task === null || !coversTeam(principal, task.definition.team)) throw notFound(`task ${JSON.stringify(name)}`);
  return task;
}

/**
 * 404 unless the task exists and the caller covers its team, like {@link mustSeeTask}, for a read
 * that needs nothing of the task but that answer (the DAG grid's root): its team alone is read.
 */
export async function mustSeeTaskName(db: Queryable, principal: Principal | null, name: string): Promise<void> {
  const team = await getTaskTeam(db, name);
  if (team === null || !coversTeam(principal, team)) throw notFound(`task ${JSON.stringify(name)}`);
}

/** The instance if it exists and the caller covers its task's team; 404 otherwise. */
export async function mustSeeInstance(db: Queryable, principal: Principal | null, id: string, opts: { forUpdate?: boolean } = {}): Promise<InstanceRecord> {
  const inst = await getInstance(db, id, opts);
  if (inst === null || !coversTeam(principal, inst.team)) throw notFound(`instance ${JSON.stringify(id)}`);
  return inst;
}

/** The teams among `teams` the caller does not cover, sorted, without duplicates. */
export function uncoveredTeams(principal: Principal | null, teams: Iterable<string | null>): string[] {
  const out = new Set<string>();
  for (const team of teams) if (!coversTeam(principal, team)) out.add(team ?? '(deleted task)');
  return [...out].sort();
}

/**
 * The execution if it exists and the caller covers its instance's task's team; 404 otherwise
 * (an execution whose instance is gone is visible to `*` tokens only, like such an instance).
 */
export async function mustSeeExecution(db: Queryable, principal: Principal | null, executionId: string): Promise<{ execution: ExecutionRecord; instance: InstanceRecord | null }> {
  const execution = await getExecution(db, executionId);
  const instance = execution === null ? null : await getInstance(db, execution.instanceId);
  if (execution === null || !coversTeam(principal, instance?.team ?? null)) throw notFound(`execution ${JSON.stringify(executionId)}`);
  return { execution, instance };
}
