/** Task endpoints: create, replace, list, get, preview, delete, enable/disable, YAML import. */
import { z } from 'zod';
import { parseTaskDefinition, parseTaskYaml, taskDefinitionSchema, teamNameSchema, type Issue, type TaskDefinition } from '@ax/core';
import {
  bumpDagVersion,
  deleteTask,
  getCalendar,
  getTask,
  getTeam,
  insertTask,
  listTasks,
  lockDag,
  replaceTask,
  setTaskEnabled,
  withTransaction,
  type Queryable,
  type TaskRecord,
} from '@ax/store';
import { audit } from '../audit.js';
import { compiledWithCalendar } from './calendars.js';
import { ApiError, notFound, validationFailed } from '../errors.js';
import { notifyTaskChanged } from '../notify.js';
import { decodeCursor, pageOf, pageQueryShape } from '../pagination.js';
import { restoreRedactedSecrets } from '../redacted-secrets.js';
import { redactFor, stableStringify, taskResource } from '../resources.js';
import { defineRoute, type Parsed, type RouteSpec, type Tx } from '../route.js';
import type { Principal } from '../auth.js';
import { assertTeamVisible, coversTeam, mustSeeTask, visibleTeams } from '../team-scope.js';
import { listOf, nameParams, taskReplaceSchema, taskResourceSchema } from '../schemas.js';

const auditView = (t: TaskRecord): Record<string, unknown> => taskResource(t, { redact: true });

/** Resource fields beyond core's `TASK_RESOURCE_FIELDS` that a PUT body may carry back (ignored). */
const READ_ONLY_COUNTERS: readonly string[] = ['skippedCount', 'coalescedCount', 'pausedReason', 'calendarSkippedCount'];

/**
 * 400 on `calendar` unless it names a calendar of the task's own team: a task cannot use (and
 * so probe, through its preview) another team's calendar; the message is the same whether the
 * name is free or another team's.
 */
async function assertCalendarUsable(db: Queryable, def: TaskDefinition, document?: number): Promise<void> {
  if (def.calendar === null) return;
  const calendar = await getCalendar(db, def.calendar);
  if (calendar === null || calendar.team !== def.team) {
    const where = document === undefined ? '' : `document ${document}: `;
    throw validationFailed([{ path: 'calendar', message: `${where}calendar: no calendar ${JSON.stringify(def.calendar)} in team ${JSON.stringify(def.team)} (PUT /api/v1/calendars/{name} first)` }]);
  }
}

/** The PUT body: the definition plus the current `version`. */
function parseReplaceBody(raw: unknown): Parsed<{ definition: TaskDefinition; version: number }> {
  const issues: Issue[] = [];
  let version = 0;
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    const v = (raw as Record<string, unknown>)['version'];
    if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 4_294_967_295) version = v;
    else issues.push({ path: 'version', message: 'version: required, the current version of the task (an integer ≥ 1) as last read' });
  }
  // A task resource read back (GET → edit → PUT) also carries the read-only counters.
  const candidate =
    raw !== null && typeof raw === 'object' && !Array.isArray(raw)
      ? Object.fromEntries(Object.entries(raw as Record<string, unknown>).filter(([k]) => !READ_ONLY_COUNTERS.includes(k)))
      : raw;
  const parsed = parseTaskDefinition(candidate, { allowResourceFields: true });
  if (!parsed.ok) issues.push(...parsed.issues);
  if (issues.length > 0 || !parsed.ok) return { ok: false, issues };
  return { ok: true, value: { definition: parsed.value, version } };
}

/** `definition` with its `"***"` secrets restored from `stored`, or 400 naming each field without one. */
function withStoredSecrets(definition: TaskDefinition, stored: TaskDefinition | null): TaskDefinition {
  const restored = restoreRedactedSecrets(definition, stored);
  if (!restored.ok) throw validationFailed(restored.issues);
  return restored.value;
}

/**
 * 404 unless `team` exists and the caller covers it: a task is created in (or moved to) a team
 * the caller acts for; a team it does not cover answers as a missing one.
 */
async function assertTeamUsable(tx: Tx, principal: Principal | null, team: string): Promise<void> {
  assertTeamVisible(principal, team, `team ${JSON.stringify(team)}`);
  if ((await getTeam(tx, team)) === null) throw notFound(`team ${JSON.stringify(team)}`);
}

/**
 * The teams a list shows: the caller's, narrowed to `team` when the query names one; a team
 * the caller does not cover gives an empty list, the same answer as a team that does not exist.
 */
export function listedTeams(principal: Principal | null, team: string | undefined): readonly string[] | null {
  if (team === undefined) return visibleTeams(principal);
  return coversTeam(principal, team) ? [team] : [];
}

const YAML_ISSUE = z.object({ path: z.string(), message: z.string(), document: z.int().optional(), line: z.int().optional() });

export const taskRoutes: RouteSpec[] = [
  defineRoute<unknown, unknown, TaskDefinition>({
    method: 'post',
    path: '/api/v1/tasks',
    access: 'operator',
    tag: 'tasks',
    summary: 'Create a task',
    body: { schema: taskDefinitionSchema, parse: (raw) => parseTaskDefinition(raw) },
    responses: {
      201: { description: 'the task', schema: taskResourceSchema },
      404: { description: '`team` does not exist or is not one the token covers' },
      409: { description: '`ALREADY_EXISTS`: a task of that name exists' },
    },
    handler: async ({ body, deps, principal }) => {
      const definition = withStoredSecrets(body, null); // a new task: a "***" has nothing to keep
      const created = await withTransaction(deps.pool, async (tx) => {
        await assertTeamUsable(tx, principal, definition.team);
        await assertCalendarUsable(tx, definition);
        const task = await insertTask(tx, definition);
        await audit(tx, principal, { action: 'task.create', target: `task:${task.definition.name}`, team: task.definition.team, after: auditView(task) });
        return task;
      });
      await notifyTaskChanged(deps, [created.definition.name]);
      return { status: 201, body: taskResource(created, { redact: redactFor(principal?.role) }) };
    },
  }),
  defineRoute<{ name: string }, unknown, { definition: TaskDefinition; version: number }>({
    method: 'put',
    path: '/api/v1/tasks/{name}',
    access: 'operator',
    tag: 'tasks',
    summary: 'Replace a task; the body carries the current `version`',
    params: nameParams,
    body: { schema: taskReplaceSchema, parse: parseReplaceBody },
    responses: {
      200: { description: 'the task at its new version', schema: taskResourceSchema },
      404: { description: 'no such task, or its team (or the new `team`) is not one the token covers' },
      409: { description: '`VERSION_CONFLICT`: the task is at another version' },
    },
    handler: async ({ params, body, deps, principal }) => {
      if (body.definition.name !== params.name) {
        throw validationFailed([{ path: 'name', message: `name: must be ${JSON.stringify(params.name)}, the task named in the path (renaming is not supported)` }]);
      }
      const updated = await withTransaction(deps.pool, async (tx) => {
        const before = await mustSeeTask(tx, principal, params.name, { forUpdate: true });
        if (body.definition.team !== before.definition.team) await assertTeamUsable(tx, principal, body.definition.team);
        await assertCalendarUsable(tx, body.definition);
        const after = await replaceTask(tx, withStoredSecrets(body.definition, before.definition), body.version);
        await audit(tx, principal, { action: 'task.replace', target: `task:${params.name}`, team: after.definition.team, before: auditView(before), after: auditView(after) });
        return after;
      });
      await notifyTaskChanged(deps, [params.name]);
      return { status: 200, body: taskResource(updated, { redact: redactFor(principal?.role) }) };
    },
  }),
  defineRoute<unknown, { enabled?: boolean; tag?: string; q?: string; team?: string; limit: number; cursor?: string }>({
    method: 'get',
    path: '/api/v1/tasks',
    access: 'viewer',
    tag: 'tasks',
    summary: 'List tasks (by name)',
    query: z.object({
      enabled: z
        .enum(['true', 'false'], { error: 'enabled must be true or false' })
        .transform((v) => v === 'true')
        .optional(),
      tag: z.string().max(64).optional(),
      q: z.string().max(200).optional().describe('substring of the name or description'),
      team: teamNameSchema.optional().describe("extension: only tasks of this team (none if the token does not cover it)"),
      ...pageQueryShape,
    }),
    responses: { 200: { description: 'a page of tasks', schema: listOf(taskResourceSchema) } },
    handler: async ({ query, deps, principal }) => {
      const after = decodeCursor(query.cursor);
      if (after === null) throw validationFailed([{ path: 'cursor', message: 'cursor: not a cursor this API returned' }]);
      const rows = await listTasks(deps.pool, {
        ...(query.enabled === undefined ? {} : { enabled: query.enabled }),
        ...(query.tag === undefined ? {} : { tag: query.tag }),
        ...(query.q === undefined ? {} : { q: query.q }),
        ...(after === undefined ? {} : { afterName: after }),
        teams: listedTeams(principal, query.team),
        limit: query.limit + 1,
      });
      const redact = redactFor(principal?.role);
      return { status: 200, body: pageOf(rows, query.limit, (t) => t.definition.name, (t) => taskResource(t, { redact })) };
    },
  }),
  defineRoute<{ name: string }>({
    method: 'get',
    path: '/api/v1/tasks/{name}',
    access: 'viewer',
    tag: 'tasks',
    summary: 'One task',
    params: nameParams,
    responses: { 200: { description: 'the task', schema: taskResourceSchema }, 404: { description: 'no such task' } },
    handler: async ({ params, deps, principal }) => {
      const task = await mustSeeTask(deps.pool, principal, params.name);
      return { status: 200, body: taskResource(task, { redact: redactFor(principal?.role) }) };
    },
  }),
  defineRoute<{ name: string }, { count: number; after?: string }>({
    method: 'get',
    path: '/api/v1/tasks/{name}/preview',
    access: 'viewer',
    tag: 'tasks',
    summary: 'The next fire times of a task (without the dates of its calendar)',
    params: nameParams,
    query: z.object({
      count: z.coerce.number().int().min(1).max(100).default(5).describe('how many, 1..100, default 5'),
      after: z.iso.datetime({ offset: true }).optional().describe('extension: fire times after this instant (default now)'),
    }),
    responses: {
      200: { description: 'the next fire times', schema: z.object({ fireTimes: z.array(z.string()) }) },
      404: { description: 'no such task' },
    },
    handler: async ({ params, query, deps, principal }) => {
      const task = await mustSeeTask(deps.pool, principal, params.name);
      const afterMs = query.after === undefined ? deps.now() : Date.parse(query.after);
      const compiled = await compiledWithCalendar(deps.pool, task); // a calendar's dates are not fires
      const times = compiled.between(afterMs, Infinity, query.count);
      return { status: 200, body: { fireTimes: times.map((ms) => new Date(ms).toISOString()) } };
    },
  }),
  defineRoute<{ name: string }>({
    method: 'delete',
    path: '/api/v1/tasks/{name}',
    access: 'admin',
    tag: 'tasks',
    summary: 'Delete a task (its edges go too; instances stay)',
    params: nameParams,
    responses: { 204: { description: 'deleted' }, 404: { description: 'no such task' } },
    handler: async ({ params, deps, principal }) => {
      await withTransaction(deps.pool, async (tx) => {
        await lockDag(tx); // its edges go with it: serialise with edge writes (R19)
        const before = await mustSeeTask(tx, principal, params.name, { forUpdate: true });
        await deleteTask(tx, params.name);
        await bumpDagVersion(tx);
        await audit(tx, principal, { action: 'task.delete', target: `task:${params.name}`, team: before.definition.team, before: auditView(before) });
      });
      await notifyTaskChanged(deps, [params.name]);
      return { status: 204 };
    },
  }),
  ...(['enable', 'disable'] as const).map((action) =>
    defineRoute<{ name: string }>({
      method: 'post',
      path: `/api/v1/tasks/{name}/${action}`,
      access: 'operator',
      tag: 'tasks',
      summary: action === 'enable' ? 'Switch scheduling on' : 'Switch scheduling off',
      params: nameParams,
      responses: { 200: { description: 'the task', schema: taskResourceSchema }, 404: { description: 'no such task' } },
      handler: async ({ params, deps, principal }) => {
        const after = await withTransaction(deps.pool, async (tx) => {
          const before = await mustSeeTask(tx, principal, params.name, { forUpdate: true });
          const changed = (await setTaskEnabled(tx, params.name, action === 'enable')) ?? before;
          await audit(tx, principal, { action: `task.${action}`, target: `task:${params.name}`, team: before.definition.team, before: auditView(before), after: auditView(changed) });
          return changed;
        });
        await notifyTaskChanged(deps, [params.name]);
        return { status: 200, body: taskResource(after, { redact: redactFor(principal?.role) }) };
      },
    }),
  ),
  defineRoute<unknown, unknown, TaskDefinition[]>({
    method: 'post',
    path: '/api/v1/tasks/import',
    access: 'operator',
    tag: 'tasks',
    summary: 'Import task definitions from YAML (one or more `---` documents; all or nothing)',
    body: {
      kind: 'yaml',
      schema: z.string().describe('YAML documents, each a task definition'),
      parse: (raw) => {
        const result = parseTaskYaml(String(raw));
        if (result.ok) return result;
        return {
          ok: false,
          issues: result.issues.map((i) => ({
            path: i.path,
            // core's message already names the document ("document 2: priority: …"); add the line.
            message: i.line === undefined ? i.message : `${i.message} (line ${i.line})`,
            ...(i.document === undefined ? {} : { document: i.document }),
            ...(i.line === undefined ? {} : { line: i.line }),
          })),
        };
      },
    },
    responses: {
      200: {
        description: 'what changed',
        schema: z.object({ created: z.array(z.string()), updated: z.array(z.string()), unchanged: z.array(z.string()) }),
      },
      400: { description: '`VALIDATION_FAILED`; each issue names its document (and line)', schema: z.object({ error: z.object({ details: z.object({ issues: z.array(YAML_ISSUE) }) }) }) },
    },
    handler: async ({ body, deps, principal }) => {
      if (body.length === 0) throw validationFailed([{ path: '', message: 'the YAML holds no task definition' }]);
      const outcome = await withTransaction(deps.pool, async (tx) => {
        // Every document is checked against its stored task before anything is written (all or nothing).
        const planned: Array<{ def: TaskDefinition; current: TaskRecord | null }> = [];
        const issues: Issue[] = [];
        for (const received of body) {
          const current = await getTask(tx, received.name, { forUpdate: true });
          // A task of a team the caller does not cover is not disclosed: it is as taken as any
          // other name (409, like a create), never read or replaced.
          if (current !== null && !coversTeam(principal, current.definition.team)) {
            throw new ApiError(409, 'ALREADY_EXISTS', `task ${JSON.stringify(received.name)} already exists`, { name: received.name });
          }
          if (current === null || current.definition.team !== received.team) await assertTeamUsable(tx, principal, received.team);
          await assertCalendarUsable(tx, received, planned.length + issues.length + 1);
          const restored = restoreRedactedSecrets(received, current?.definition ?? null);
          if (restored.ok) planned.push({ def: restored.value, current });
          else issues.push(...restored.issues);
        }
        if (issues.length > 0) throw validationFailed(issues);
        const created: string[] = [];
        const updated: string[] = [];
        const unchanged: string[] = [];
        for (const { def, current } of planned) {
          if (current === null) {
            const task = await insertTask(tx, def);
            await audit(tx, principal, { action: 'task.create', target: `task:${def.name}`, team: def.team, reason: 'import', after: auditView(task) });
            created.push(def.name);
          } else if (stableStringify(current.definition) === stableStringify(def)) {
            unchanged.push(def.name);
          } else {
            const task = await replaceTask(tx, def, current.version);
            await audit(tx, principal, { action: 'task.replace', target: `task:${def.name}`, team: def.team, reason: 'import', before: auditView(current), after: auditView(task) });
            updated.push(def.name);
          }
        }
        return { created, updated, unchanged };
      });
      await notifyTaskChanged(deps, [...outcome.created, ...outcome.updated]);
      return { status: 200, body: outcome };
    },
  }),
];

