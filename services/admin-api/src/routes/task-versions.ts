/**
 * Task versions (ADMIN-API.md, issue #47 "Task versions"): every saved definition of a task,
 * newest first, one of them, and a rollback that saves an old definition as a new version.
 * Versions are kept by @ax/store (task-versions.ts: the newest TASK_VERSIONS_KEPT per task).
 */
import { z } from 'zod';
import { redactTaskSecrets, taskDefinitionSchema } from '@ax/core';
import { getTaskVersion, listTaskVersions, replaceTask, type TaskVersionRecord } from '@ax/store';
import { audit } from '../audit.js';
import { notFound, validationFailed } from '../errors.js';
import { notifyTaskChanged } from '../notify.js';
import { decodeCursor, encodeCursor, pageQueryShape } from '../pagination.js';
import { redactFor, stableStringify } from '../resources.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { listOf, reasonSchema, taskResourceSchema } from '../schemas.js';
import type { Principal } from '../auth.js';
import { coversTeam, mustSeeTask } from '../team-scope.js';
import { writeTransaction } from '../write-transaction.js';
import { assertCalendarUsable, assertHttpAllowed, assertTeamUsable, auditView, resourceOf, savedBy, storedPart } from './tasks.js';

const VERSION_MESSAGE = 'must be a task version (an integer ≥ 1)';
const versionNumber = z.coerce.number({ error: VERSION_MESSAGE }).int(VERSION_MESSAGE).min(1, VERSION_MESSAGE).max(4_294_967_295, VERSION_MESSAGE);

const versionSchema = z.object({
  version: z.int(),
  at: z.string().describe('when it was saved'),
  actor: z.string().nullable().describe('the token name that saved it; null = the system (pauseAfterFailures, a calendar change) or saved before versions were recorded'),
  definition: taskDefinitionSchema.describe('the definition as saved (stored secrets redacted for viewers, as by GET /tasks/{name})'),
});

const versionParams = z.object({ name: z.string().max(256), v: versionNumber });

/**
 * Whether the caller may see a version: a task moved between teams keeps its history, and the
 * versions saved while it belonged to a team the caller does not cover stay that team's (they
 * may hold its literal secrets); they are left out of lists and answer 404.
 */
function visible(principal: Principal | null, v: TaskVersionRecord): boolean {
  return coversTeam(principal, v.definition.team);
}

/** A version as the API answers it, redacted like the task resource for the caller's role. */
function versionBody(v: TaskVersionRecord, redact: boolean): z.infer<typeof versionSchema> {
  return { version: v.version, at: v.at.toISOString(), actor: v.actor, definition: redact ? redactTaskSecrets(v.definition) : v.definition };
}

export const taskVersionRoutes: RouteSpec[] = [
  defineRoute<{ name: string }, { limit: number; cursor?: string }>({
    method: 'get',
    path: '/api/v1/tasks/{name}/versions',
    access: 'viewer',
    tag: 'tasks',
    summary: 'Every kept definition of a task, newest first',
    params: z.object({ name: z.string().max(256) }),
    query: z.object(pageQueryShape),
    responses: { 200: { description: 'the versions', schema: listOf(versionSchema) }, 404: { description: 'no such task' } },
    handler: async ({ params, query, deps, principal }) => {
      const task = await mustSeeTask(deps.pool, principal, params.name);
      const cursor = decodeCursor(query.cursor);
      if (cursor === null || (cursor !== undefined && !/^[1-9]\d{0,9}$/.test(cursor))) {
        throw validationFailed([{ path: 'cursor', message: 'cursor: malformed (pass nextCursor of the previous page)' }]);
      }
      const rows = await listTaskVersions(deps.pool, task, { beforeVersion: cursor === undefined ? undefined : Number(cursor), limit: query.limit + 1 });
      const redact = redactFor(principal?.role);
      // The cursor follows the rows read, not the ones shown: a page may be short (versions of
      // another team left out) and still have a next one.
      const page = rows.slice(0, query.limit);
      const last = page.at(-1);
      return {
        status: 200,
        body: {
          items: page.filter((v) => visible(principal, v)).map((v) => versionBody(v, redact)),
          nextCursor: rows.length > query.limit && last !== undefined ? encodeCursor(String(last.version)) : null,
        },
      };
    },
  }),
  defineRoute<{ name: string; v: number }>({
    method: 'get',
    path: '/api/v1/tasks/{name}/versions/{v}',
    access: 'viewer',
    tag: 'tasks',
    summary: 'One kept definition of a task',
    params: versionParams,
    responses: { 200: { description: 'the version', schema: versionSchema }, 404: { description: 'no such task, or that version is not kept' } },
    handler: async ({ params, deps, principal }) => {
      const task = await mustSeeTask(deps.pool, principal, params.name);
      const version = await getTaskVersion(deps.pool, task, params.v);
      if (version === null || !visible(principal, version)) throw notFound(`version ${params.v} of task ${JSON.stringify(params.name)}`);
      return { status: 200, body: versionBody(version, redactFor(principal?.role)) };
    },
  }),
  defineRoute<{ name: string }, unknown, { version: number; reason?: string }>({
    method: 'post',
    path: '/api/v1/tasks/{name}/rollback',
    access: 'operator',
    tag: 'tasks',
    summary: 'Save a kept definition of a task again, as a new version',
    description:
      'The definition of `version` (its stored secrets included, never "***") replaces the current one under the same checks as PUT ' +
      "(team, calendar, the team's httpAllow); edges are not part of a version and stay as they are. Audited as `task.rollback` " +
      'with the versions and the reason. Rolling back to a definition equal to the current one saves nothing and answers the task unchanged.',
    params: z.object({ name: z.string().max(256) }),
    body: { schema: z.strictObject({ version: versionNumber.describe('the kept version to restore'), reason: reasonSchema.optional().describe('why (audited)') }) },
    responses: {
      200: { description: 'the task at its new version (or unchanged)', schema: taskResourceSchema },
      404: { description: 'no such task, or that version is not kept' },
    },
    handler: async ({ params, body, deps, principal }) => {
      const outcome = await writeTransaction(deps.pool, async (tx) => {
        const before = await mustSeeTask(tx, principal, params.name, { forUpdate: true });
        const target = await getTaskVersion(tx, before, body.version);
        if (target === null || !visible(principal, target)) throw notFound(`version ${body.version} of task ${JSON.stringify(params.name)}`);
        const definition = storedPart(target.definition);
        if (stableStringify(definition) === stableStringify(before.definition)) {
          return { changed: false, resource: await resourceOf(tx, principal, before) };
        }
        if (definition.team !== before.definition.team) await assertTeamUsable(tx, principal, definition.team);
        await assertCalendarUsable(tx, definition);
        await assertHttpAllowed(tx, definition);
        const after = await replaceTask(tx, definition, before.version, savedBy(principal));
        await audit(tx, principal, {
          action: 'task.rollback',
          target: `task:${params.name}`,
          team: after.definition.team,
          reason: body.reason ?? null,
          before: auditView(before),
          after: { ...auditView(after), rolledBackTo: target.version },
        });
        return { changed: true, resource: await resourceOf(tx, principal, after) };
      });
      if (outcome.changed) await notifyTaskChanged(deps, [params.name]);
      return { status: 200, body: outcome.resource };
    },
  }),
];
