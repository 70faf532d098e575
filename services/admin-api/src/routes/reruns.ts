/**
 * `POST /api/v1/reruns` (ADMIN-API.md "Reruns", R1, R18, R20): modes `instance`, `dag`,
 * `failed` and `backfill`, each with `dryRun` (200, nothing written) and a required `reason`.
 * The plan is computed in the same transaction that applies it, on rows locked `FOR UPDATE`.
 */
import { z } from 'zod';
import { bizDateOf, downstreamOf, isFinal, startOfBizDate, type Edge } from '@ax/core';
import {
  dueDaysOf,
  forgetRolledUpDays,
  getTask,
  getTaskById,
  insertManualInstance,
  insertRerunBatch,
  instancesAtSlots,
  instancesOfBizDate,
  listEdges,
  rerunInstance,
  type InstanceRecord,
  type TaskRecord,
} from '@ax/store';
import { audit } from '../audit.js';
import { compiledWithCalendar } from './calendars.js';
import { hasRole, type Principal } from '../auth.js';
import { mustSeeInstance, mustSeeTask, uncoveredTeams, visibleTeams } from '../team-scope.js';
import { ApiError, invalidState, notFound, validationFailed } from '../errors.js';
import { notifyInstancesReady } from '../notify.js';
import { defineRoute, type RouteSpec, type Tx } from '../route.js';
import { bizDateSchema, reasonSchema, taskNameSchema } from '../schemas.js';
import { rerunBatchRoutes } from './rerun-batches.js';
import { writeTransaction } from '../write-transaction.js';

/** Most slots one backfill may create or re-run. */
export const MAX_BACKFILL_SLOTS = 10_000;

const common = {
  reason: reasonSchema.describe('why (required; audited)'),
  forceDownstream: z.boolean().default(false).describe('dag: re-run succeeded downstream instances too (admin)'),
  dryRun: z.boolean().default(false).describe('list what would run; change nothing'),
};

export const rerunBodySchema = z.discriminatedUnion(
  'mode',
  [
    z.strictObject({ mode: z.literal('instance'), instanceId: z.union([z.string().regex(/^\d{1,20}$/, 'must be an instance id'), z.int().min(1)]).transform(String), ...common }),
    z.strictObject({ mode: z.literal('dag'), root: taskNameSchema, bizDate: bizDateSchema, ...common }),
    z.strictObject({ mode: z.literal('failed'), root: taskNameSchema.optional(), bizDate: bizDateSchema, ...common }),
    z.strictObject({
      mode: z.literal('backfill'),
      task: taskNameSchema,
      from: bizDateSchema,
      to: bizDateSchema,
      concurrency: z.int().min(1).max(1000).default(1).describe('most instances of the batch running at once, default 1'),
      ...common,
    }),
  ],
  { error: (iss) => (iss.code === 'invalid_union' ? 'mode must be one of instance, dag, failed, backfill' : undefined) },
);

type RerunBody = z.output<typeof rerunBodySchema>;

/** One line of a plan. */
type PlanItem =
  | { kind: 'rerun'; instance: InstanceRecord; to: 'PENDING' | 'WAITING' }
  | { kind: 'create'; task: TaskRecord; expectedMs: number; bizDate: string };

interface Plan {
  items: PlanItem[];
  target: string;
  concurrency: number | null;
  /** Team of the root (instance, task) the request named; null for `failed` without a root. */
  team: string | null;
}

/** The team of what a plan item touches. */
function teamOf(item: PlanItem): string | null {
  return item.kind === 'create' ? item.task.definition.team : item.instance.team;
}

/**
 * The teams a plan runs for: each item's ({@link teamOf}) and, for a re-run, its task's team now
 * (docs/teams.md "Instances and moved tasks"): the new run is of the task's current definition
 * (#47), so re-running an earlier run of a task moved to another team runs that team's task,
 * which a token of the earlier team alone may not do. A deleted task adds nothing.
 */
async function teamsRun(tx: Tx, items: readonly PlanItem[]): Promise<Array<string | null>> {
  const taskTeams = new Map<string, string | null>();
  for (const item of items) {
    if (item.kind !== 'rerun' || taskTeams.has(item.instance.taskId)) continue;
    taskTeams.set(item.instance.taskId, (await getTaskById(tx, item.instance.taskId))?.definition.team ?? null);
  }
  return [...items.map(teamOf), ...[...taskTeams.values()].filter((team): team is string => team !== null)];
}

/** Tasks upstream of each task within `set` (transitively, through any task). */
function hasUpstreamIn(task: string, set: ReadonlySet<string>, edges: readonly Edge[]): boolean {
  const parents = new Map<string, string[]>();
  for (const e of edges) parents.set(e.child, [...(parents.get(e.child) ?? []), e.parent]);
  const seen = new Set<string>([task]);
  const stack = [...(parents.get(task) ?? [])];
  while (stack.length > 0) {
    const p = stack.pop() as string;
    if (seen.has(p)) continue;
    seen.add(p);
    if (set.has(p)) return true;
    stack.push(...(parents.get(p) ?? []));
  }
  return false;
}

function nextDate(bizDate: string): string {
  const d = new Date(`${bizDate}T00:00:00.000Z`);
  return new Date(d.getTime() + 86_400_000).toISOString().slice(0, 10);
}

/**
 * What the request would run. The instance, root and task it names must be of the caller's
 * teams (404 otherwise); what lies downstream may be of other teams, which the caller checks
 * ({@link uncoveredTeams}). `failed` without a root only looks at the caller's teams.
 */
async function plan(tx: Tx, body: RerunBody, lock: boolean, principal: Principal | null): Promise<Plan> {
  switch (body.mode) {
    case 'instance': {
      const inst = await mustSeeInstance(tx, principal, body.instanceId, { forUpdate: lock });
      if (!isFinal(inst.state)) throw invalidState(`instance ${inst.id} is ${inst.state}; only a final instance can be re-run`, { state: inst.state });
      return { items: [{ kind: 'rerun', instance: inst, to: 'PENDING' }], target: `instance:${inst.id}`, concurrency: null, team: inst.team };
    }
    case 'dag': {
      const rootTask = await mustSeeTask(tx, principal, body.root);
      const edges = await listEdges(tx);
      const downstream = downstreamOf(body.root, edges);
      const rows = await instancesOfBizDate(tx, [body.root, ...downstream], body.bizDate, { forUpdate: lock });
      const roots = rows.filter((i) => i.taskName === body.root);
      if (roots.length === 0) throw notFound(`an instance of ${JSON.stringify(body.root)} on ${body.bizDate}`);
      const running = roots.find((i) => !isFinal(i.state));
      if (running !== undefined) {
        throw invalidState(`instance ${running.id} of ${body.root} is ${running.state}; only a final instance can be re-run`, { state: running.state, instanceId: running.id });
      }
      const order = new Map(downstream.map((name, index) => [name, index]));
      const below = rows
        .filter((i) => i.taskName !== body.root && isFinal(i.state) && (i.state !== 'SUCCESS' || body.forceDownstream))
        .sort((a, b) => (order.get(a.taskName) ?? 0) - (order.get(b.taskName) ?? 0) || a.expectedTime.getTime() - b.expectedTime.getTime());
      return {
        items: [...roots.map((instance) => ({ kind: 'rerun' as const, instance, to: 'PENDING' as const })), ...below.map((instance) => ({ kind: 'rerun' as const, instance, to: 'WAITING' as const }))],
        target: `dag:${body.root}@${body.bizDate}`,
        concurrency: null,
        team: rootTask.definition.team,
      };
    }
    case 'failed': {
      const edges = await listEdges(tx);
      let names: string[] | null = null;
      let team: string | null = null;
      if (body.root !== undefined) {
        team = (await mustSeeTask(tx, principal, body.root)).definition.team;
        names = [body.root, ...downstreamOf(body.root, edges)];
      }
      const rows = await instancesOfBizDate(tx, names, body.bizDate, {
        forUpdate: lock,
        states: ['FAILED', 'CANCELED'],
        // Without a root: the failed instances of the caller's teams (of every team for "*").
        ...(names === null ? { teams: visibleTeams(principal) } : {}),
      });
      const set = new Set(rows.map((i) => i.taskName));
      return {
        items: rows.map((instance) => ({ kind: 'rerun' as const, instance, to: hasUpstreamIn(instance.taskName, set, edges) ? ('WAITING' as const) : ('PENDING' as const) })),
        target: `failed:${body.root ?? '*'}@${body.bizDate}`,
        concurrency: null,
        team,
      };
    }
    case 'backfill': {
      if (body.from > body.to) throw validationFailed([{ path: 'to', message: 'to: must not be before from' }]);
      const task = await mustSeeTask(tx, principal, body.task);
      const def = task.definition;
      const tz = def.schedule.timezone;
      const startMs = startOfBizDate(body.from, tz, def.bizDateOffsetDays);
      const endMs = startOfBizDate(nextDate(body.to), tz, def.bizDateOffsetDays);
      const compiled = await compiledWithCalendar(tx, task); // a calendar's dates are not slots
      const fires = compiled
        .between(startMs - 1, endMs - 1, MAX_BACKFILL_SLOTS + 1)
        .filter((ms) => {
          const d = bizDateOf(ms, tz, def.bizDateOffsetDays);
          return d >= body.from && d <= body.to;
        });
      if (fires.length > MAX_BACKFILL_SLOTS) {
        throw validationFailed([{ path: 'to', message: `to: the range holds more than ${MAX_BACKFILL_SLOTS} slots; backfill it in parts` }]);
      }
      const existing = await instancesAtSlots(tx, def.name, fires, { forUpdate: lock });
      const items: PlanItem[] = [];
      for (const ms of fires) {
        const inst = existing.get(ms);
        if (inst === undefined) items.push({ kind: 'create', task, expectedMs: ms, bizDate: bizDateOf(ms, tz, def.bizDateOffsetDays) });
        else if (isFinal(inst.state)) items.push({ kind: 'rerun', instance: inst, to: 'PENDING' });
        // a slot that is not final is running or about to: it is left as it is
      }
      return { items, target: `backfill:${def.name}@${body.from}..${body.to}`, concurrency: body.concurrency, team: def.team };
    }
  }
}

function describeItem(item: PlanItem): Record<string, unknown> {
  if (item.kind === 'create') {
    return { action: 'create', taskName: item.task.definition.name, expectedTime: new Date(item.expectedMs).toISOString(), bizDate: item.bizDate, state: 'PENDING' };
  }
  const i = item.instance;
  return { action: 'rerun', id: i.id, taskName: i.taskName, expectedTime: i.expectedTime.toISOString(), bizDate: i.bizDate, from: i.state, state: item.to, runNo: i.runNo + 1 };
}

async function maxAttemptsOf(tx: Tx, cache: Map<string, number>, inst: InstanceRecord): Promise<number> {
  const cached = cache.get(inst.taskName);
  if (cached !== undefined) return cached;
  const task = await getTask(tx, inst.taskName);
  const value = task === null ? inst.maxAttempts : task.definition.retry.max + 1;
  cache.set(inst.taskName, value);
  return value;
}

async function apply(tx: Tx, body: RerunBody, p: Plan, actor: string): Promise<{ batchId: string; ids: string[]; pending: number }> {
  const batchId = await insertRerunBatch(tx, {
    mode: body.mode,
    reason: body.reason,
    actor,
    concurrency: p.concurrency,
    forceDownstream: body.forceDownstream,
    request: body,
  });
  const ids: string[] = [];
  let pending = 0;
  const attempts = new Map<string, number>();
  // The days the rerun instances count in now: they leave them (due again now), so a kept
  // rollup of those days is forgotten below, after the updates (stats-rollup.ts).
  const leftDays = await dueDaysOf(tx, p.items.flatMap((item) => (item.kind === 'create' ? [] : [item.instance.id])));
  for (const [index, item] of p.items.entries()) {
    // Due now on the database clock (R6), 1 ms apart: oldest first within the batch.
    const dueAfterMs = index;
    if (item.kind === 'create') {
      const def = item.task.definition;
      const created = await insertManualInstance(tx, {
        taskId: item.task.id,
        taskName: def.name,
        requestedAt: new Date(item.expectedMs),
        exact: true,
        bizDate: item.bizDate,
        params: def.params,
        priority: def.priority,
        maxAttempts: def.retry.max + 1,
        trigger: 'rerun',
        rerunBatchId: batchId,
        dueAfterMs,
        message: `backfill by ${actor}: ${body.reason}`,
      });
      if (created !== null) {
        ids.push(created.id);
        pending++;
      }
      continue;
    }
    const ok = await rerunInstance(tx, {
      id: item.instance.id,
      from: item.instance.state,
      to: item.to,
      maxAttempts: await maxAttemptsOf(tx, attempts, item.instance),
      batchId,
      dueAfterMs,
      actor,
      reason: body.reason,
    });
    if (!ok) throw invalidState(`instance ${item.instance.id} changed state meanwhile; try again`);
    ids.push(item.instance.id);
    if (item.to === 'PENDING') pending++;
  }
  await forgetRolledUpDays(tx, leftDays);
  return { batchId, ids, pending };
}

/** The one team all items belong to, or null. */
function singleTeam(items: readonly PlanItem[]): string | null {
  const teams = new Set(items.map(teamOf));
  const [only] = teams;
  return teams.size === 1 && only !== undefined ? only : null;
}

export const rerunRoutes: RouteSpec[] = [
  defineRoute<unknown, unknown, RerunBody>({
    method: 'post',
    path: '/api/v1/reruns',
    access: 'operator',
    tag: 'instances',
    summary: 'Re-run an instance, a DAG by business date, the failed instances of a date, or backfill a range',
    description: '`forceDownstream: true` needs the admin role. `dryRun: true` answers 200 with what would run and changes nothing.',
    body: { schema: rerunBodySchema },
    responses: {
      200: {
        description: 'dry run: what would run (existing instances by id, slots to create by taskName + expectedTime)',
        schema: z.object({
          instances: z.array(z.record(z.string(), z.unknown())).describe("what would run, of the token's teams"),
          forbiddenTeams: z.array(z.string()).describe('extension: teams the token does not cover whose instances the rerun would touch, or whose task it would run (a task moved to another team since), the real one is refused with 403 then'),
        }),
      },
      403: { description: '`FORBIDDEN`: the rerun would touch instances, or run tasks, of teams the token does not cover; `details.teams` names them' },
      202: { description: 'the instances that will run', schema: z.object({ instances: z.array(z.string()), batchId: z.string().nullable() }) },
      404: { description: 'no such instance, task, or root instance on that date' },
      409: { description: '`INVALID_STATE`: an instance to re-run is not final' },
    },
    handler: async ({ body, deps, principal }) => {
      if (body.forceDownstream && (principal === null || !hasRole(principal.role, 'admin'))) {
        throw new ApiError(403, 'FORBIDDEN', 'forceDownstream needs the admin role', { required: 'admin', role: principal?.role ?? null });
      }
      const actor = principal?.name ?? 'unknown';
      if (body.dryRun) {
        const { p, teams } = await writeTransaction(deps.pool, async (tx) => {
          const planned = await plan(tx, body, false, principal);
          return { p: planned, teams: await teamsRun(tx, planned.items) };
        });
        // Instances of teams the caller does not cover are not listed; their teams are.
        const forbiddenTeams = uncoveredTeams(principal, teams);
        const shown = p.items.filter((item) => !forbiddenTeams.includes(teamOf(item) ?? '(deleted task)'));
        return { status: 200, body: { instances: shown.map(describeItem), dryRun: true, forbiddenTeams } };
      }
      const outcome = await writeTransaction(deps.pool, async (tx) => {
        const p = await plan(tx, body, true, principal);
        const forbiddenTeams = uncoveredTeams(principal, await teamsRun(tx, p.items));
        if (forbiddenTeams.length > 0) {
          throw new ApiError(403, 'FORBIDDEN', `this rerun would touch instances, or run tasks, of teams the token does not cover: ${forbiddenTeams.join(', ')}; nothing was re-run`, {
            teams: forbiddenTeams,
          });
        }
        const applied = await apply(tx, body, p, actor);
        await audit(tx, principal, {
          action: `rerun.${body.mode}`,
          target: p.target,
          team: p.team ?? singleTeam(p.items),
          reason: body.reason,
          after: { batchId: applied.batchId, instances: applied.ids, forceDownstream: body.forceDownstream, ...(p.concurrency === null ? {} : { concurrency: p.concurrency }) },
        });
        return applied;
      });
      await notifyInstancesReady(deps, outcome.pending);
      return { status: 202, body: { instances: outcome.ids, batchId: outcome.batchId } };
    },
  }),
  // GET /reruns, GET /reruns/{id}, POST /reruns/{id}/cancel
  ...rerunBatchRoutes,
];
