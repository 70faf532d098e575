/**
 * Worker enrollments (ADMIN-API.md "Workers", DESIGN R24/R25, docs/teams.md "Worker
 * enrollments"): an admin of every team named enrolls workers for those teams (`["*"]`: an admin
 * of every team) and is shown the enrollment's credential once; only its SHA-256 is stored.
 *
 * Creating one makes its RabbitMQ user (management API) and its Redis ACL user
 * (enrollment-logins.ts) inside the transaction that stores it, so brokers and the bootstrap
 * never see an enrollment without its logins, and a failure leaves nothing: the row and its audit
 * entry roll back, and any user already made is deleted again; the answer is 503 naming the
 * server. Revoking one marks it revoked (its credential stops authenticating, brokers route
 * nothing more to it), then deletes both users (RabbitMQ closes its connections, Redis
 * disconnects it) and its workers' registry entries, so brokers recover their executions as
 * from a lost worker. A DELETE of a revoked enrollment answers 204 again and deletes its users
 * again (a DELETE that answered 503 is finished by sending it again); only the first is audited.
 *
 * Visibility follows the team boundary (team-scope.ts): an enrollment is seen only by tokens
 * covering every one of its teams (`["*"]`: tokens of every team); anything else answers 404.
 */
import { z } from 'zod';
import { ENROLLMENT_ID_PATTERN, ENROLLMENT_NAME_PATTERN, TEAM_NAME_PATTERN, enrollmentOfWorkerId, newEnrollmentId, newWorkerCredential, credentialHash } from '@ax/core';
import { readRegistry } from '@ax/redis';
import { EnrollmentNameTakenError, existingTeams, getEnrollment, insertEnrollment, listEnrollments, revokeEnrollment, type EnrollmentRecord } from '@ax/store';
import { audit } from '../audit.js';
import type { Principal } from '../auth.js';
import type { AppDeps } from '../deps.js';
import { ApiError, notFound, validationFailed } from '../errors.js';
import { LoginServerError, busAdminOf, deleteEnrollmentLogins, loginServerUnavailable, putEnrollmentLogins, undoEnrollmentLogins, type Attempted } from '../enrollment-logins.js';
import { decodeCursor, encodeCursor, pageQueryShape } from '../pagination.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { listOf } from '../schemas.js';
import { assertAllTeams, coversAllTeams, coversTeam } from '../team-scope.js';
import { writeTransaction } from '../write-transaction.js';

/** `teams` of an enrollment: team names, or `["*"]` alone for every team. */
const enrollmentTeamsSchema = z
  .array(z.string().refine((t) => t === '*' || TEAM_NAME_PATTERN.test(t), { message: 'must be "*" or a team name (^[a-z][a-z0-9_-]{0,63}$)' }))
  .min(1, 'must name at least one team, or "*"')
  .max(100)
  .transform((teams) => [...new Set(teams)])
  .refine((teams) => !teams.includes('*') || teams.length === 1, { message: '"*" stands alone: it covers every team' })
  .describe('the teams its workers serve (the server\'s record, R24); ["*"] = every team');

/** A tag its workers may offer (the AX_WORKER_TAGS item pattern). */
const TAG_PATTERN = /^[A-Za-z0-9_.:/=-]{1,64}$/;

const enrollmentSchema = z.object({
  id: z.string().describe('`enr-` + 12 of [a-z0-9]; never reused'),
  name: z.string(),
  teams: z.array(z.string()),
  tags: z.array(z.string()).describe('tags its workers may offer; [] = any'),
  createdAt: z.string(),
  createdBy: z.string().nullable().describe('the token name of its creator'),
  revokedAt: z.string().nullable(),
  workers: z.array(z.string()).describe('ids of its workers in the registry now (`<id>.<AX_WORKER_ID>`)'),
});

const createdSchema = z.object({
  id: z.string(),
  name: z.string(),
  teams: z.array(z.string()),
  tags: z.array(z.string()),
  createdAt: z.string(),
  credential: z.string().describe('`axw_<id>_<secret>`: shown this once (only its SHA-256 is stored); the worker reads it from AX_WORKER_CREDENTIAL_FILE'),
});

/** Whether the caller covers every team of the enrollment (`["*"]`, or none left: a `*` caller only). */
export function coversEnrollment(principal: Principal | null, enrollment: Pick<EnrollmentRecord, 'teams'>): boolean {
  if (coversAllTeams(principal)) return true;
  return enrollment.teams.length > 0 && enrollment.teams.every((t) => t !== '*' && coversTeam(principal, t));
}

/** The one team of an enrollment's audit entries, or null (several teams, or all: seen by `*` tokens). */
function auditTeam(teams: readonly string[]): string | null {
  return teams.length === 1 && teams[0] !== '*' ? (teams[0] ?? null) : null;
}

/** What the audit trail keeps of an enrollment: never its credential or its hash. */
function audited(e: EnrollmentRecord): Record<string, unknown> {
  return { id: e.id, name: e.name, teams: [...e.teams], tags: [...e.tags] };
}

function resource(e: EnrollmentRecord, workers: readonly string[]): z.infer<typeof enrollmentSchema> {
  return {
    id: e.id,
    name: e.name,
    teams: [...e.teams],
    tags: [...e.tags],
    createdAt: e.createdAt.toISOString(),
    createdBy: e.createdBy,
    revokedAt: e.revokedAt?.toISOString() ?? null,
    workers: [...workers],
  };
}

function masterSecret(deps: AppDeps): string {
  if (deps.executorSecret === undefined) throw new ApiError(503, 'UNAVAILABLE', 'AX_EXECUTOR_SECRET is not configured: enrollment logins cannot be derived');
  return deps.executorSecret;
}

/** Worker ids in the registry now, by enrollment. */
async function workersByEnrollment(deps: AppDeps): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const w of await readRegistry(deps.redis, deps.keys)) {
    const eid = enrollmentOfWorkerId(w.workerId);
    if (eid === null) continue;
    const list = out.get(eid) ?? [];
    list.push(w.workerId);
    out.set(eid, list);
  }
  for (const list of out.values()) list.sort();
  return out;
}

export const enrollmentRoutes: RouteSpec[] = [
  defineRoute<unknown, unknown, { name: string; teams: string[]; tags: string[] }>({
    method: 'post',
    path: '/api/v1/workers/enrollments',
    access: 'admin',
    tag: 'workers',
    summary: 'Enroll workers for teams: their own RabbitMQ and Redis users, and a credential shown once',
    description:
      'Needs an admin of every team named (`["*"]`: an admin of every team). A team the token does not cover answers 404 naming it, as a team that does not exist does. The enrollment\'s RabbitMQ user (management API, AX_AMQP_MANAGEMENT_URL) and Redis ACL user are made before it is stored; if either fails, nothing is left (no enrollment, no user) and the answer is 503 with `details.server` `rabbitmq` or `redis`.',
    body: {
      schema: z.strictObject({
        name: z.string().regex(ENROLLMENT_NAME_PATTERN, { message: 'must be 1 to 64 of a-z, 0-9, "_", "-", "." starting with a letter or digit' }).describe('unique among live enrollments'),
        teams: enrollmentTeamsSchema,
        tags: z
          .array(z.string().regex(TAG_PATTERN, { message: 'must be 1 to 64 of letters, digits, "_", ".", ":", "/", "=", "-"' }))
          .max(64)
          .default([])
          .transform((tags) => [...new Set(tags)])
          .describe('tags its workers may offer; [] (default) = any'),
      }),
    },
    responses: {
      201: { description: 'the enrollment and its credential (shown once)', schema: createdSchema },
      403: { description: '`FORBIDDEN`: the role is too low, or `teams` is `["*"]` and the token does not cover every team' },
      404: { description: 'a team of `teams` does not exist or is not one of the token\'s teams (the same answer)' },
      409: { description: '`ALREADY_EXISTS`: a live enrollment has that name' },
      503: { description: '`UNAVAILABLE`: RabbitMQ or Redis refused or did not answer (`details.server`); nothing was created. Or AX_EXECUTOR_SECRET / AX_AMQP_MANAGEMENT_URL is not configured' },
    },
    handler: async ({ body, deps, principal }) => {
      const secret = masterSecret(deps);
      busAdminOf(deps);
      if (body.teams.includes('*')) assertAllTeams(principal, 'enrolling workers for every team');
      else for (const team of body.teams) if (!coversTeam(principal, team)) throw notFound(`team ${JSON.stringify(team)}`);
      const id = newEnrollmentId();
      const credential = newWorkerCredential(id);
      const attempted: Attempted = { bus: false, redis: false };
      let created: EnrollmentRecord;
      try {
        created = await writeTransaction(deps.pool, async (tx) => {
          const named = body.teams.filter((t) => t !== '*');
          const found = await existingTeams(tx, named, { lock: true }); // a concurrent team delete waits for this enrollment
          const missing = named.find((t) => !found.has(t));
          if (missing !== undefined) throw notFound(`team ${JSON.stringify(missing)}`);
          const record = await insertEnrollment(tx, { id, name: body.name, teams: body.teams, tags: body.tags, credentialHash: credentialHash(credential), createdBy: principal?.name ?? null });
          await audit(tx, principal, { action: 'worker.enrollment.create', target: `enrollment:${id}`, team: auditTeam(record.teams), after: audited(record) });
          // Last, inside the transaction: a failure rolls the row and its audit entry back.
          await putEnrollmentLogins(deps, secret, id, attempted);
          return record;
        });
      } catch (err) {
        await undoEnrollmentLogins(deps, id, attempted);
        if (err instanceof LoginServerError) {
          deps.logger.warn({ enrollmentId: id, server: err.server, err: err.message }, 'a worker enrollment was not created: a login server failed');
          throw loginServerUnavailable(err, 'nothing was created (no enrollment, no login)');
        }
        if (err instanceof EnrollmentNameTakenError) {
          throw new ApiError(409, 'ALREADY_EXISTS', `a live worker enrollment is named ${JSON.stringify(body.name)}; names are unique among live enrollments`, { name: body.name });
        }
        throw err;
      }
      deps.logger.info({ enrollmentId: id, name: created.name, teams: created.teams, actor: principal?.name }, 'worker enrollment created');
      return {
        status: 201,
        body: { id, name: created.name, teams: [...created.teams], tags: [...created.tags], createdAt: created.createdAt.toISOString(), credential },
      };
    },
  }),
  defineRoute<unknown, { limit: number; cursor?: string; state: 'live' | 'revoked' | 'all' }>({
    method: 'get',
    path: '/api/v1/workers/enrollments',
    access: 'admin',
    tag: 'workers',
    summary: "Worker enrollments whose teams are all the token's (never their credentials), live first, newest first",
    query: z.object({
      ...pageQueryShape,
      state: z.enum(['live', 'revoked', 'all'], { error: 'state must be live, revoked or all' }).default('live').describe('live (default), revoked or all'),
    }),
    responses: { 200: { description: 'a page of enrollments', schema: listOf(enrollmentSchema) } },
    handler: async ({ query, deps, principal }) => {
      const after = decodeCursor(query.cursor);
      if (after === null || (after !== undefined && !ENROLLMENT_ID_PATTERN.test(after))) {
        throw validationFailed([{ path: 'cursor', message: 'cursor: not a cursor this API returned' }]);
      }
      const rows = (await listEnrollments(deps.pool, { includeRevoked: query.state !== 'live' })).filter(
        (e) => (query.state !== 'revoked' || e.revokedAt !== null) && coversEnrollment(principal, e),
      );
      // Few rows (one per machine pool): read whole and paged here, keyed by id in the list's order.
      const start = after === undefined ? 0 : rows.findIndex((e) => e.id === after) + 1;
      if (after !== undefined && start === 0) throw validationFailed([{ path: 'cursor', message: 'cursor: its enrollment is no longer in this list; start again' }]);
      const page = rows.slice(start, start + query.limit);
      const last = page.at(-1);
      const workers = await workersByEnrollment(deps);
      return {
        status: 200,
        body: {
          items: page.map((e) => resource(e, workers.get(e.id) ?? [])),
          nextCursor: rows.length > start + query.limit && last !== undefined ? encodeCursor(last.id) : null,
        },
      };
    },
  }),
  defineRoute<{ id: string }>({
    method: 'delete',
    path: '/api/v1/workers/enrollments/{id}',
    access: 'admin',
    tag: 'workers',
    summary: 'Revoke a worker enrollment at once: its credential, its RabbitMQ and Redis users, and its workers\' registry entries',
    description:
      'The enrollment is marked revoked first (its credential no longer authenticates; brokers route nothing more to it), then its RabbitMQ user is deleted and its connections closed, and its Redis user deleted (Redis disconnects it) with its workers\' registry entries, so brokers recover their executions as from a lost worker. A DELETE of a revoked enrollment answers 204 again and deletes its users again; only the first is audited. If RabbitMQ or Redis fails, the answer is 503 naming it (`details.server`): the enrollment is revoked, send the DELETE again to finish.',
    params: z.object({ id: z.string().max(64) }),
    responses: {
      204: { description: 'revoked, and its users deleted' },
      404: { description: "no such enrollment, or not one whose teams are all the token's (the same answer)" },
      503: { description: '`UNAVAILABLE`: RabbitMQ or Redis failed (`details.server`); the enrollment is revoked, send the DELETE again. Or AX_AMQP_MANAGEMENT_URL is not configured (nothing was changed)' },
    },
    handler: async ({ params, deps, principal }) => {
      if (!ENROLLMENT_ID_PATTERN.test(params.id)) throw notFound(`worker enrollment ${JSON.stringify(params.id)}`);
      busAdminOf(deps); // before anything changes: a revoke that could not delete the RabbitMQ user would be half done
      await writeTransaction(deps.pool, async (tx) => {
        const before = await getEnrollment(tx, params.id);
        if (before === null || !coversEnrollment(principal, before)) throw notFound(`worker enrollment ${JSON.stringify(params.id)}`);
        if (await revokeEnrollment(tx, params.id)) {
          await audit(tx, principal, { action: 'worker.enrollment.revoke', target: `enrollment:${params.id}`, team: auditTeam(before.teams), before: audited(before) });
        }
      });
      let removed: string[];
      try {
        removed = await deleteEnrollmentLogins(deps, params.id);
      } catch (err) {
        if (err instanceof LoginServerError) {
          deps.logger.warn({ enrollmentId: params.id, server: err.server, err: err.message }, 'a revoked worker enrollment keeps a login: a login server failed');
          throw loginServerUnavailable(err, 'the enrollment is revoked (its credential no longer authenticates), but send the DELETE again to finish removing its logins');
        }
        throw err;
      }
      deps.logger.info({ enrollmentId: params.id, removedWorkers: removed, actor: principal?.name }, 'worker enrollment revoked');
      for (const workerId of removed) {
        // Brokers re-read the registry on it; they find the worker gone either way at their next read.
        await deps.redis.publish(deps.keys.channels.workersChanged, workerId).catch(() => deps.logger.warn({ workerId }, 'could not publish workers-changed'));
      }
      return { status: 204 };
    },
  }),
];
