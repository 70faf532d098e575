/** Task endpoints: create, replace, list, get, preview, delete, enable/disable, YAML import. */
import { z } from 'zod';
import { INSTANCE_STATES, MANAGED_BY_PATTERN, MAX_TASK_YAML_DOCUMENTS, parseTaskDefinition, taskDefinitionSchema, teamNameSchema, type Issue, type TaskDefinition } from '@ax/core';
import {
  bumpDagVersion,
  lastRunsOf,
  deleteTask,
  getCalendar,
  getTask,
  getTeam,
  insertTask,
  listIncomingEdges,
  listTasks,
  setTasksManagedBy,
  lockDag,
  replaceTask,
  setTaskEnabled,
  type Queryable,
  type TaskRecord,
} from '@ax/store';
import { audit } from '../audit.js';
import { hasRole } from '../auth.js';
import { writeDependsOn, type DependsOnOutcome } from './edges.js';
import { compiledWithCalendar } from './calendars.js';
import { ApiError, notFound, validationFailed } from '../errors.js';
import { notifyTaskChanged } from '../notify.js';
import { decodeCursor, pageQueryShape, pageSkipping } from '../pagination.js';
import { restoreRedactedSecrets } from '../redacted-secrets.js';
import { httpAllowIssue } from '../http-allow.js';
import { redactFor, stableStringify, taskResource } from '../resources.js';
import { defineRoute, type Parsed, type RouteSpec, type Tx } from '../route.js';
import type { Principal } from '../auth.js';
import { coversTeam, mustSeeTask, visibleTeams } from '../team-scope.js';
import { listOf, nameParams, reasonSchema, taskReplaceSchema, taskResourceSchema } from '../schemas.js';
import { writeTransaction } from '../write-transaction.js';
import { parseImportYaml } from '../yaml-body.js';

const LAST_RUN = z
  .object({ instanceId: z.string(), state: z.enum(INSTANCE_STATES), endedAt: z.string().nullable() })
  .nullable()
  .describe('extension: the latest instance of the task (the last created, by `createdAt`, then id), null when it has none');

export const auditView = (t: TaskRecord): Record<string, unknown> => taskResource(t, { redact: true });

/** `dependsOn` of each task as the caller sees it: its incoming edges from parents of teams it covers. */
async function dependsOnByTask(db: Queryable, principal: Principal | null, tasks: readonly TaskRecord[]): Promise<Map<string, Array<{ task: string; rule: string }>>> {
  const out = new Map<string, Array<{ task: string; rule: string }>>(tasks.map((t) => [t.definition.name, []]));
  for (const e of await listIncomingEdges(db, tasks.map((t) => t.definition.name))) {
    if (coversTeam(principal, e.parentTeam)) out.get(e.child)?.push({ task: e.parent, rule: e.rule });
  }
  return out;
}

/** The task resource with its `dependsOn` (so an exported task applies back with its edges). */
export async function resourceOf(db: Queryable, principal: Principal | null, task: TaskRecord): Promise<Record<string, unknown>> {
  const deps = await dependsOnByTask(db, principal, [task]);
  return withParents(taskResource(task, { redact: redactFor(principal?.role) }), deps.get(task.definition.name));
}

/** Adds `dependsOn` to a resource when the task has parents the caller sees (absent = none). */
function withParents(resource: Record<string, unknown>, parents: ReadonlyArray<{ task: string; rule: string }> | undefined): Record<string, unknown> {
  return parents === undefined || parents.length === 0 ? resource : { ...resource, dependsOn: parents };
}

/** The definition without `dependsOn` (what the `task` row stores), for comparing with a stored one. */
export function storedPart(def: TaskDefinition): TaskDefinition {
  const { dependsOn: _edges, ...rest } = def;
  return rest;
}

/** Thrown inside a dry-run import so its transaction rolls back; carries the answer. */
class DryRunRollback extends Error {
  constructor(readonly outcome: ImportOutcome) {
    super('dry run: rolled back');
    this.name = 'DryRunRollback';
  }
}

/** The answer of an import. */
interface ImportOutcome {
  created: string[];
  updated: string[];
  unchanged: string[];
  deleted: string[];
  edges: DependsOnOutcome;
  dryRun: boolean;
}

/** Resource fields beyond core's `TASK_RESOURCE_FIELDS` that a PUT body may carry back (ignored). */
const READ_ONLY_COUNTERS: readonly string[] = ['skippedCount', 'coalescedCount', 'pausedReason', 'calendarSkippedCount', 'managedBy'];

/**
 * 400 on `calendar` unless it names a calendar of the task's own team: a task cannot use (and
 * so probe, through its preview) another team's calendar; the message is the same whether the
 * name is free or another team's.
 */
export async function assertCalendarUsable(db: Queryable, def: TaskDefinition, document?: number): Promise<void> {
  if (def.calendar === null) return;
  const calendar = await getCalendar(db, def.calendar);
  if (calendar === null || calendar.team !== def.team) {
    const where = document === undefined ? '' : `document ${document}: `;
    throw validationFailed([{ path: 'calendar', message: `${where}calendar: no calendar ${JSON.stringify(def.calendar)} in team ${JSON.stringify(def.team)} (PUT /api/v1/calendars/{name} first)` }]);
  }
}

/** 400 on `exec.url` of an `http` task whose team's `httpAllow` does not admit its host (http-allow.ts). */
export async function assertHttpAllowed(db: Queryable, def: TaskDefinition, document?: number): Promise<void> {
  if (def.exec.type !== 'http') return;
  const team = await getTeam(db, def.team);
  const issue = httpAllowIssue(def, team?.httpAllow ?? null, document === undefined ? '' : `document ${document}: `);
  if (issue !== undefined) throw validationFailed([issue]);
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

/** Who saves a definition, recorded with its version (GET /tasks/{name}/versions). */
export function savedBy(principal: Principal | null): { actor: string | null } {
  return { actor: principal?.name ?? null };
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
export async function assertTeamUsable(tx: Tx, principal: Principal | null, team: string): Promise<void> {
  if (!coversTeam(principal, team)) {
    // The same answer whether the team exists or not, plus the token's own teams: a team token
    // that left `team` out got the default, `default`, and only this line tells it why (#47).
    const own = principal === null || principal.teams === '*' ? [] : principal.teams;
    const hint = own.length === 0 ? '' : `; this token's teams: ${own.join(', ')} (set "team: ${own[0]}")`;
    throw new ApiError(404, 'NOT_FOUND', `team ${JSON.stringify(team)} does not exist${hint}`, { path: 'team' });
  }
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

const EDGE = z.object({ parent: z.string(), child: z.string(), rule: z.enum(['ALL_SUCCESS', 'ALL_DONE']) });

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
      const created = await writeTransaction(deps.pool, async (tx) => {
        if (definition.dependsOn !== undefined) await lockDag(tx); // its edges are written with it (R19)
        await assertTeamUsable(tx, principal, definition.team);
        await assertCalendarUsable(tx, definition);
        await assertHttpAllowed(tx, definition);
        const task = await insertTask(tx, definition, savedBy(principal));
        await audit(tx, principal, { action: 'task.create', target: `task:${task.definition.name}`, team: task.definition.team, after: auditView(task) });
        if (definition.dependsOn !== undefined) {
          await writeDependsOn(tx, principal, [{ child: definition.name, team: definition.team, parents: definition.dependsOn }]);
        }
        return { task, resource: await resourceOf(tx, principal, task) };
      });
      await notifyTaskChanged(deps, [created.task.definition.name]);
      return { status: 201, body: created.resource };
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
      const dependsOn = body.definition.dependsOn;
      const updated = await writeTransaction(deps.pool, async (tx) => {
        if (dependsOn !== undefined) await lockDag(tx); // its edges change with it (R19)
        const before = await mustSeeTask(tx, principal, params.name, { forUpdate: true });
        if (body.definition.team !== before.definition.team) await assertTeamUsable(tx, principal, body.definition.team);
        await assertCalendarUsable(tx, body.definition);
        await assertHttpAllowed(tx, body.definition);
        const after = await replaceTask(tx, withStoredSecrets(body.definition, before.definition), body.version, savedBy(principal));
        await audit(tx, principal, { action: 'task.replace', target: `task:${params.name}`, team: after.definition.team, before: auditView(before), after: auditView(after) });
        if (dependsOn !== undefined) await writeDependsOn(tx, principal, [{ child: params.name, team: after.definition.team, parents: dependsOn }]);
        return resourceOf(tx, principal, after);
      });
      await notifyTaskChanged(deps, [params.name]);
      return { status: 200, body: updated };
    },
  }),
  defineRoute<unknown, { enabled?: boolean; tag?: string; q?: string; team?: string; managedBy?: string; limit: number; cursor?: string }>({
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
      managedBy: z
        .string()
        .regex(MANAGED_BY_PATTERN, 'managedBy must be 1 to 128 letters, digits and . _ : / @ -')
        .optional()
        .describe('extension: only tasks carrying this managed-by marker (`axctl apply --source`)'),
      ...pageQueryShape,
    }),
    responses: { 200: { description: 'a page of tasks, each with `lastRun` (extension)', schema: listOf(taskResourceSchema.extend({ lastRun: LAST_RUN })) } },
    handler: async ({ query, deps, principal }) => {
      const after = decodeCursor(query.cursor);
      if (after === null) throw validationFailed([{ path: 'cursor', message: 'cursor: not a cursor this API returned' }]);
      // Stored definitions are shown as stored, without zod (#46); a row that cannot be read is
      // left out and logged with its name, and the page goes on past it.
      const unreadable: Array<{ key: string; index: number }> = [];
      const rows = await listTasks(deps.pool, {
        ...(query.enabled === undefined ? {} : { enabled: query.enabled }),
        ...(query.tag === undefined ? {} : { tag: query.tag }),
        ...(query.q === undefined ? {} : { q: query.q }),
        ...(query.managedBy === undefined ? {} : { managedBy: query.managedBy }),
        ...(after === undefined ? {} : { afterName: after }),
        teams: listedTeams(principal, query.team),
        limit: query.limit + 1,
        trusted: true,
        onUnreadable: (error, index) => {
          unreadable.push({ key: error.taskName, index });
          deps.logger.error({ err: error, task: error.taskName }, 'a stored task cannot be read; it is left out of the list');
        },
      });
      const redact = redactFor(principal?.role);
      const parents = await dependsOnByTask(deps.pool, principal, rows);
      const lastRuns = await lastRunsOf(deps.pool, rows.slice(0, query.limit).map((t) => t.definition.name));
      return {
        status: 200,
        body: pageSkipping(rows, unreadable, query.limit, (t) => t.definition.name, (t) => ({ ...withParents(taskResource(t, { redact }), parents.get(t.definition.name)), lastRun: lastRuns.get(t.definition.name) ?? null })),
      };
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
      return { status: 200, body: await resourceOf(deps.pool, principal, task) };
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
      await writeTransaction(deps.pool, async (tx) => {
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
    defineRoute<{ name: string }, unknown, { reason?: string }>({
      method: 'post',
      path: `/api/v1/tasks/{name}/${action}`,
      access: 'operator',
      tag: 'tasks',
      summary: action === 'enable' ? 'Switch scheduling on' : 'Switch scheduling off',
      params: nameParams,
      body: { optional: true, schema: z.strictObject({ reason: reasonSchema.optional().describe('why (audited)') }) },
      responses: { 200: { description: 'the task', schema: taskResourceSchema }, 404: { description: 'no such task' } },
      handler: async ({ params, deps, principal, body }) => {
        const after = await writeTransaction(deps.pool, async (tx) => {
          const before = await mustSeeTask(tx, principal, params.name, { forUpdate: true });
          const changed = (await setTaskEnabled(tx, params.name, action === 'enable', savedBy(principal))) ?? before;
          await audit(tx, principal, {
            action: `task.${action}`,
            target: `task:${params.name}`,
            team: before.definition.team,
            before: auditView(before),
            after: auditView(changed),
            reason: body?.reason ?? null,
          });
          return resourceOf(tx, principal, changed);
        });
        await notifyTaskChanged(deps, [params.name]);
        return { status: 200, body: after };
      },
    }),
  ),
  defineRoute<unknown, { dryRun: boolean; prune: boolean; team?: string; managedBy?: string }, TaskDefinition[]>({
    method: 'post',
    path: '/api/v1/tasks/import',
    access: 'operator',
    tag: 'tasks',
    summary: 'Import task definitions from YAML (one or more `---` documents; all or nothing, `dependsOn` edges included)',
    query: z.object({
      dryRun: z
        .enum(['true', 'false'], { error: 'dryRun must be true or false' })
        .default('false')
        .transform((v) => v === 'true')
        .describe('extension: check everything (parents, cycles, teams) and answer what would change; nothing is written'),
      prune: z
        .enum(['true', 'false'], { error: 'prune must be true or false' })
        .default('false')
        .transform((v) => v === 'true')
        .describe('extension (admin, with `managedBy`): also delete the tasks of the token\'s teams (of `team` if given) that carry the marker `managedBy` and that the YAML does not name, in the same transaction'),
      team: teamNameSchema.optional().describe('extension: with `prune`, only tasks of this team are deleted'),
      managedBy: z
        .string()
        .regex(MANAGED_BY_PATTERN, 'managedBy must be 1 to 128 letters, digits and . _ : / @ -')
        .optional()
        .describe('extension: the marker of the source (`axctl apply --source`): every task of the YAML is marked with it, and `prune` deletes only tasks carrying it (a task made in the console never is)'),
    }),
    body: {
      kind: 'yaml',
      schema: z.string().describe('YAML documents, each a task definition'),
      parse: (raw) => parseImportYaml(String(raw)),
    },
    responses: {
      200: {
        description: 'what changed (with `dryRun`: what would change)',
        schema: z.object({
          created: z.array(z.string()),
          updated: z.array(z.string()),
          unchanged: z.array(z.string()),
          deleted: z.array(z.string()).optional().describe('extension (with prune, dryRun or dependsOn): tasks deleted by `prune`'),
          edges: z
            .object({ added: z.array(EDGE), changed: z.array(EDGE), removed: z.array(EDGE) })
            .optional()
            .describe('extension: incoming edges written for the documents that carry `dependsOn`'),
          dryRun: z.boolean().optional().describe('extension: true when nothing was written'),
        }),
      },
      400: { description: '`VALIDATION_FAILED`; each issue names its document (and line); a `dependsOn` parent that does not exist (or is not visible)', schema: z.object({ error: z.object({ details: z.object({ issues: z.array(YAML_ISSUE) }) }) }) },
      403: { description: '`prune` without the admin role' },
      413: { description: `\`PAYLOAD_TOO_LARGE\`: over 1 MiB, or more than ${MAX_TASK_YAML_DOCUMENTS} documents (\`details.limit\` \`bytes\` or \`documents\`, \`details.max\`); nothing was read past the limit` },
      409: { description: '`CYCLE`: the `dependsOn` of the documents would close a cycle, `details.cycle` names it; nothing is written' },
    },
    handler: async ({ body, query, deps, principal }) => {
      if (body.length === 0) throw validationFailed([{ path: '', message: 'the YAML holds no task definition' }]);
      if (query.prune && (principal === null || !hasRole(principal.role, 'admin'))) {
        throw new ApiError(403, 'FORBIDDEN', `prune deletes tasks: this needs the admin role; the token has ${principal?.role ?? 'none'}`, { required: 'admin', role: principal?.role ?? null });
      }
      if (query.prune && query.managedBy === undefined) {
        throw validationFailed([{ path: 'managedBy', message: 'managedBy: prune deletes only the tasks an import marked; name the marker (axctl apply sends its --source)' }]);
      }
      const withEdges = query.prune || body.some((d) => d.dependsOn !== undefined);
      let outcome: ImportOutcome;
      try {
        outcome = await writeTransaction(deps.pool, async (tx) => {
          if (withEdges) await lockDag(tx); // edges are written with the tasks (R19); taken first, as DELETE does
          // Every document is checked against its stored task before anything is written (all or nothing).
          const planned: Array<{ def: TaskDefinition; current: TaskRecord | null; document: number }> = [];
          const issues: Issue[] = [];
          for (const [index, received] of body.entries()) {
            const current = await getTask(tx, received.name, { forUpdate: true });
            // A task of a team the caller does not cover is not disclosed: it is as taken as any
            // other name (409, like a create), never read or replaced.
            if (current !== null && !coversTeam(principal, current.definition.team)) {
              throw new ApiError(409, 'ALREADY_EXISTS', `task ${JSON.stringify(received.name)} already exists`, { name: received.name });
            }
            if (current === null || current.definition.team !== received.team) await assertTeamUsable(tx, principal, received.team);
            await assertCalendarUsable(tx, received, index + 1);
            await assertHttpAllowed(tx, received, index + 1);
            const restored = restoreRedactedSecrets(received, current?.definition ?? null);
            if (restored.ok) planned.push({ def: restored.value, current, document: index + 1 });
            else issues.push(...restored.issues);
          }
          if (issues.length > 0) throw validationFailed(issues);
          const named = new Set(body.map((d) => d.name));
          const pruned = query.prune
            ? (await listTasks(tx, { teams: listedTeams(principal, query.team) })).filter((t) => !named.has(t.definition.name) && t.managedBy === query.managedBy)
            : [];
          const created: string[] = [];
          const updated: string[] = [];
          const unchanged: string[] = [];
          for (const { def, current } of planned) {
            if (current === null) {
              const task = await insertTask(tx, def, savedBy(principal));
              await audit(tx, principal, { action: 'task.create', target: `task:${def.name}`, team: def.team, reason: 'import', after: auditView(task) });
              created.push(def.name);
            } else if (stableStringify(current.definition) === stableStringify(storedPart(def))) {
              unchanged.push(def.name);
            } else {
              const task = await replaceTask(tx, def, current.version, savedBy(principal));
              await audit(tx, principal, { action: 'task.replace', target: `task:${def.name}`, team: def.team, reason: 'import', before: auditView(current), after: auditView(task) });
              updated.push(def.name);
            }
          }
          const edges = await writeDependsOn(
            tx,
            principal,
            planned.flatMap(({ def, document }) => (def.dependsOn === undefined ? [] : [{ child: def.name, team: def.team, parents: def.dependsOn, where: `document ${document}: ` }])),
            { written: named, deleted: new Set(pruned.map((t) => t.definition.name)), reason: 'import' },
          );
          // A task whose definition is the same but whose parents changed is updated too.
          for (const edge of [...edges.added, ...edges.changed, ...edges.removed]) {
            const at = unchanged.indexOf(edge.child);
            if (at >= 0) updated.push(...unchanged.splice(at, 1));
          }
          const deleted: string[] = [];
          for (const task of pruned) {
            await deleteTask(tx, task.definition.name);
            await audit(tx, principal, { action: 'task.delete', target: `task:${task.definition.name}`, team: task.definition.team, reason: 'import prune', before: auditView(task) });
            deleted.push(task.definition.name);
          }
          if (deleted.length > 0) await bumpDagVersion(tx); // their edges went with them
          // The source now manages every task it names (a console-made task it names too: from
          // here on the files are its source, and it leaves with them).
          if (query.managedBy !== undefined) await setTasksManagedBy(tx, [...named], query.managedBy);
          const result: ImportOutcome = { created, updated, unchanged, deleted, edges, dryRun: query.dryRun };
          if (query.dryRun) throw new DryRunRollback(result);
          return result;
        });
      } catch (err) {
        if (err instanceof DryRunRollback) return { status: 200, body: err.outcome };
        throw err;
      }
      // The contract's three lists; the extensions only when asked for or when edges were written.
      const plain = !query.prune && !withEdges;
      const children = [...outcome.edges.added, ...outcome.edges.changed, ...outcome.edges.removed].map((e) => e.child);
      await notifyTaskChanged(deps, [...new Set([...outcome.created, ...outcome.updated, ...outcome.deleted, ...children])]);
      return { status: 200, body: plain ? { created: outcome.created, updated: outcome.updated, unchanged: outcome.unchanged } : outcome };
    },
  }),
];
