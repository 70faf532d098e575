/**
 * What an enrolled worker takes from admin-api's `GET /api/v1/workers/self` (ENROLLMENT-CONTRACT
 * point 1, ADMIN-API.md "Workers"), as pure functions: the answer's shape, the teams the worker
 * serves (`AX_WORKER_TEAMS` may only narrow its enrollment's), and the URLs it connects with (the
 * hosts of `AX_AMQP_URL` / `AX_REDIS_URL`, the enrollment's logins).
 */
import { ENROLLMENT_ID_PATTERN, TEAM_NAME_PATTERN } from '@ax/core';
import { z } from 'zod';

/** `"*"` among an enrollment's teams: every team. */
export const ALL_TEAMS = '*';

const teamOrAll = z.union([z.literal(ALL_TEAMS), z.string().regex(TEAM_NAME_PATTERN)]);
const login = z.object({ username: z.string().min(1).max(256), password: z.string().min(1).max(1024) });

/** The 200 answer of `GET /api/v1/workers/self` (fields beyond these are ignored). */
export const bootstrapAnswerSchema = z.object({
  enrollment: z.object({
    id: z.string().regex(ENROLLMENT_ID_PATTERN),
    name: z.string().max(256),
    teams: z.array(teamOrAll).max(10_000),
    tags: z.array(z.string()).max(1_000).optional(),
  }),
  workerIdPrefix: z.string(),
  amqp: login,
  redis: login,
  keys: z
    .array(z.object({ team: z.string().regex(TEAM_NAME_PATTERN), version: z.number().int().min(1), key: z.string().min(1).max(1024) }))
    .max(100_000),
});

/** A parsed answer. */
export type BootstrapAnswer = z.infer<typeof bootstrapAnswerSchema>;

/** The answer, or what is wrong with it (one line, no value of it: it carries passwords and keys). */
export function parseBootstrapAnswer(json: unknown): { ok: true; answer: BootstrapAnswer } | { ok: false; problem: string } {
  const parsed = bootstrapAnswerSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? 'the body' : issue.path.join('.');
    return { ok: false, problem: `${where}: ${issue?.message ?? 'unexpected shape'}` };
  }
  const answer = parsed.data;
  if (answer.workerIdPrefix !== `${answer.enrollment.id}.`) {
    return { ok: false, problem: `workerIdPrefix is not "${answer.enrollment.id}."` };
  }
  return { ok: true, answer };
}

/**
 * The teams a worker serves: `all` (an enrollment for `"*"`, not narrowed), or a list. An
 * enrolled worker runs an item only of these teams; its registry entry advertises them (an empty
 * list there means every team).
 */
export type TeamScope = { readonly all: true } | { readonly all: false; readonly teams: readonly string[] };

/**
 * The teams served by a worker of an enrollment for `enrollmentTeams`, narrowed by
 * `AX_WORKER_TEAMS` (`requested`, empty = all of the enrollment's). A requested team outside the
 * enrollment is refused (it may only narrow, R24), as is an enrollment with no teams.
 */
export function narrowTeams(
  enrollmentTeams: readonly string[],
  requested: readonly string[],
): { ok: true; scope: TeamScope } | { ok: false; problem: string } {
  if (enrollmentTeams.length === 0) return { ok: false, problem: 'the enrollment has no teams' };
  const all = enrollmentTeams.includes(ALL_TEAMS);
  if (requested.length === 0) return { ok: true, scope: all ? { all: true } : { all: false, teams: [...new Set(enrollmentTeams)].sort() } };
  if (all) return { ok: true, scope: { all: false, teams: [...new Set(requested)].sort() } };
  const outside = requested.filter((team) => !enrollmentTeams.includes(team));
  if (outside.length > 0) {
    return { ok: false, problem: `team${outside.length > 1 ? 's' : ''} ${outside.join(', ')} ${outside.length > 1 ? 'are' : 'is'} not among the enrollment's (${enrollmentTeams.join(', ')}): AX_WORKER_TEAMS may only narrow them` };
  }
  return { ok: true, scope: { all: false, teams: [...new Set(requested)].sort() } };
}

/**
 * After a refresh: the served teams of the new answer, keeping `AX_WORKER_TEAMS` to what the
 * enrollment still has (a running worker is not stopped for a team taken away; it stops serving it).
 */
export function refreshedScope(enrollmentTeams: readonly string[], requested: readonly string[]): TeamScope {
  if (enrollmentTeams.includes(ALL_TEAMS)) return requested.length === 0 ? { all: true } : { all: false, teams: [...new Set(requested)].sort() };
  const teams = requested.length === 0 ? enrollmentTeams : requested.filter((team) => enrollmentTeams.includes(team));
  return { all: false, teams: [...new Set(teams)].sort() };
}

/**
 * Why `AX_WORKER_TAGS` (`tags`) cannot be offered by a worker of an enrollment whose tags are
 * `enrollmentTags` (`[]`: any), or undefined: like its teams, the tags it may offer are the
 * enrollment's (ADMIN-API.md "Workers").
 */
export function tagsProblem(enrollmentTags: readonly string[] | undefined, tags: readonly string[]): string | undefined {
  if (enrollmentTags === undefined || enrollmentTags.length === 0) return undefined;
  const outside = tags.filter((tag) => !enrollmentTags.includes(tag));
  if (outside.length === 0) return undefined;
  return `tag${outside.length > 1 ? 's' : ''} ${outside.join(', ')} ${outside.length > 1 ? 'are' : 'is'} not among the enrollment's (${enrollmentTags.join(', ')})`;
}

/** Whether a scope serves `team`. */
export function scopeServes(scope: TeamScope, team: string): boolean {
  return scope.all || scope.teams.includes(team);
}

/** How a scope is said in logs and refusals. */
export function describeScope(scope: TeamScope): string {
  return scope.all ? 'every team' : scope.teams.length === 0 ? 'no team' : scope.teams.join(', ');
}

/** `url` with its user name and password replaced by a login (any userinfo it had is dropped). */
export function withLogin(url: string, username: string, password: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(username);
  u.password = encodeURIComponent(password);
  return u.toString();
}
