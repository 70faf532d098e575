/**
 * The worker bootstrap (ADMIN-API.md "Workers", DESIGN R24/R25; the enrollment contract's
 * decision 1): `GET /api/v1/workers/self` with the enrollment credential answers what a worker
 * of that enrollment needs and nothing more — its enrollment, the RabbitMQ and Redis logins of
 * the enrollment (passwords derived from AX_EXECUTOR_SECRET, so the same for every replica and
 * never stored), and the executor keys of the enrollment's teams only: each team's current
 * version, plus the previous one while that team's rotation grace is open. A team of another
 * enrollment never appears; `["*"]` is every team that exists. Workers poll it (every 30 s), so
 * a rotation or a changed team list reaches them without a restart.
 *
 * Authentication is worker-auth.ts (credential only, uniform 401, rate-limited). Redis keeps
 * ACL users per server and in memory only, so the bootstrap also makes the enrollment's Redis
 * user again when the server lost it (a restart, a failover): workers get their login back
 * within a poll (enrollment-logins.ts `restoreEnrollmentRedisUser`). The answer holds secrets: it is never logged, and `cache-control: no-store` is set on every response.
 */
import { z } from 'zod';
import { acceptedKeyVersions, busUserOf, deriveExecutorKey, enrollmentLoginPassword, redisUserOf } from '@ax/core';
import { deleteEnrollmentRedisUser } from '@ax/redis';
import { getEnrollment, listTeams, type EnrollmentRecord, type Queryable, type TeamRecord } from '@ax/store';
import { restoreEnrollmentRedisUser } from '../enrollment-logins.js';
import type { AppDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { defineRoute, type RouteSpec } from '../route.js';

const loginSchema = z.object({ username: z.string(), password: z.string() });

/** The bootstrap answer (the contract's shape). */
export const workerSelfSchema = z.object({
  enrollment: z.object({
    id: z.string(),
    name: z.string(),
    teams: z.array(z.string()).describe('the teams its workers serve (the server\'s record); ["*"] = every team'),
    tags: z.array(z.string()).describe('tags its workers may offer; [] = any'),
  }),
  workerIdPrefix: z.string().describe('"<enrollment id>.": a worker\'s id is this prefix and its AX_WORKER_ID'),
  amqp: loginSchema.describe('the enrollment\'s RabbitMQ user (DESIGN R24)'),
  redis: loginSchema.describe('the enrollment\'s Redis ACL user (DESIGN R24)'),
  keys: z
    .array(z.object({ team: z.string(), version: z.int(), key: z.string().describe('lowercase hex executor key of that team and version') }))
    .describe('for every team of the enrollment: its current key version, and the previous one while its rotation grace is open; no other team\'s'),
});

/** Teams read per query for a `["*"]` enrollment. */
const TEAM_PAGE = 500;

/** The teams of an enrollment that exist now (a team deleted since it was enrolled has no key). */
export async function enrollmentTeams(db: Queryable, teams: readonly string[]): Promise<TeamRecord[]> {
  if (!teams.includes('*')) return teams.length === 0 ? [] : listTeams(db, { names: teams, limit: teams.length });
  const all: TeamRecord[] = [];
  for (;;) {
    const last = all.at(-1)?.name;
    const page = await listTeams(db, { names: null, ...(last === undefined ? {} : { afterName: last }), limit: TEAM_PAGE });
    all.push(...page);
    if (page.length < TEAM_PAGE) return all;
  }
}

/** What a worker of `enrollment` is given, the keys of `teams` (its teams, read now). */
export function workerSelf(masterSecret: string, namespace: string, enrollment: EnrollmentRecord, teams: readonly TeamRecord[], nowMs: number): z.infer<typeof workerSelfSchema> {
  const keys = [...teams]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((team) => acceptedKeyVersions(team, nowMs).map((version) => ({ team: team.name, version, key: deriveExecutorKey(masterSecret, team.name, version) })));
  return {
    enrollment: { id: enrollment.id, name: enrollment.name, teams: [...enrollment.teams], tags: [...enrollment.tags] },
    workerIdPrefix: `${enrollment.id}.`,
    amqp: { username: busUserOf(namespace, enrollment.id), password: enrollmentLoginPassword(masterSecret, 'amqp', namespace, enrollment.id) },
    redis: { username: redisUserOf(namespace, enrollment.id), password: enrollmentLoginPassword(masterSecret, 'redis', namespace, enrollment.id) },
    keys,
  };
}

function masterSecret(deps: AppDeps): string {
  if (deps.executorSecret === undefined) throw new ApiError(503, 'UNAVAILABLE', 'AX_EXECUTOR_SECRET is not configured: there are no worker logins or executor keys');
  return deps.executorSecret;
}

export const workerBootstrapRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/api/v1/workers/self',
    access: 'worker',
    tag: 'workers',
    extension: true,
    summary: "A worker's bootstrap: its enrollment, its RabbitMQ and Redis logins, and its teams' executor keys",
    description:
      'Authenticated by the enrollment credential (`Authorization: Bearer axw_…`), never an API token. A missing, malformed, unknown or revoked credential is one answer, 401 `UNAUTHENTICATED`; failures are rate-limited per client address like unknown API tokens (429 with `Retry-After`). `keys` holds the current key version of every team of the enrollment (every team for `["*"]`) and the previous version while that team\'s rotation grace is open; no other team\'s key. Workers poll it every 30 s.',
    responses: {
      200: { description: 'what the worker needs', schema: workerSelfSchema },
      401: { description: '`UNAUTHENTICATED`: the credential is missing, malformed, unknown or revoked (one answer for all)' },
      503: { description: 'AX_EXECUTOR_SECRET is not configured' },
    },
    handler: async ({ deps, enrollment }) => {
      if (enrollment === null) throw new ApiError(401, 'UNAUTHENTICATED', 'a valid worker enrollment credential is required');
      const secret = masterSecret(deps);
      if (await restoreEnrollmentRedisUser(deps, secret, enrollment.id)) {
        // A revoke may have run between the authentication and the restore (it deletes the user
        // after marking the row): then delete what was just made, and answer as to a revoked one.
        const now = await getEnrollment(deps.pool, enrollment.id);
        if (now === null || now.revokedAt !== null) {
          await deleteEnrollmentRedisUser(deps.redis, deps.keys, enrollment.id);
          throw new ApiError(401, 'UNAUTHENTICATED', 'a valid worker enrollment credential is required', {}, { 'www-authenticate': 'Bearer' });
        }
      }
      const teams = await enrollmentTeams(deps.pool, enrollment.teams);
      return { status: 200, body: workerSelf(secret, deps.keys.namespace, enrollment, teams, deps.now()) };
    },
  }),
];
