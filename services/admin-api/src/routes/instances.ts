/** Instance endpoints: list, detail (executions, events, output tail), cancel, and manual triggers. */
import { z } from 'zod';
import { INSTANCE_STATES, TASK_NAME_PATTERN, bizDateOf, encodeMessage, teamNameSchema, toError, topologicalOrder } from '@ax/core';
import {
  bindIdempotencyKey,
  cancelInstance,
  currentRunTimes,
  dagGridCells,
  insertManualInstance,
  listExecutions,
  listInstanceEvents,
  listInstances,
  logSizesOfExecutions,
  reserveIdempotencyKey,
  waitingOfInstances,
  type TaskEdgeRow,
} from '@ax/store';
import { audit } from '../audit.js';
import { ApiError, invalidState, validationFailed } from '../errors.js';
import { notifyInstancesReady } from '../notify.js';
import { decodeCursor, pageOf, pageQueryShape } from '../pagination.js';
import { eventResource, executionResource, instanceResource } from '../resources.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { bizDateSchema, eventSchema, executionSchema, idParams, instanceSchema, instantSchema, listOf, nameParams } from '../schemas.js';
import type { AppDeps } from '../deps.js';
import { publishConfirmed } from '../publish.js';
import { mustSeeInstance, mustSeeTask, mustSeeTaskName, visibleTeams } from '../team-scope.js';
import { visibleEdges, visibleReachableFrom } from '../dag-scope.js';
import { listedTeams } from './tasks.js';
import { writeTransaction } from '../write-transaction.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** What created an instance (the `trigger` of the instance resource; a backfill slot is a `rerun`). */
export const INSTANCE_TRIGGERS = ['schedule', 'manual', 'dependency', 'rerun'] as const;

/** Task names in code-unit order (they are ASCII: lower case, digits, `_`, `.`, `-`). */
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Tasks a DAG grid shows at most (rows). */
const MAX_GRID_TASKS = 500;

const gridCellSchema = z.object({
  task: z.string(),
  bizDate: z.string(),
  instanceId: z.string().describe('the latest slot of the task on that business date'),
  state: z.enum(INSTANCE_STATES),
  expectedTime: z.string(),
  durationMs: z.number().nullable().describe("its current execution's run time (started → ended), ms; null until both are known"),
  slots: z.int().describe('how many slots the task has on that business date'),
});

/** Publishes a `cancel` to the worker's control queue; logged (not fatal) when it cannot. */
async function sendCancel(deps: AppDeps, workerId: string, executionId: string): Promise<boolean> {
  if (deps.bus === null) {
    deps.logger.warn({ workerId, executionId }, 'no RabbitMQ publisher: the cancel was not sent to the worker');
    return false;
  }
  try {
    const body = encodeMessage({ v: 1, kind: 'cancel', workerId, executionIds: [executionId], reason: 'CANCELED_BY_USER' });
    // By queue name on the default exchange, as brokers send cancels: an enrolled worker's control
    // queue is bound to nothing (its RabbitMQ user may not bind, R24).
    await publishConfirmed(deps, '', deps.bus.topology.controlQueue(workerId), body, { messageId: `cancel:${executionId}` });
    return true;
  } catch (err) {
    deps.logger.error({ err: toError(err), workerId, executionId }, 'could not send a cancel to the worker');
    return false;
  }
}

export const instanceRoutes: RouteSpec[] = [
  defineRoute<unknown, { task?: string; team?: string; state?: string; bizDate?: string; worker?: string; trigger?: string; from?: string; to?: string; limit: number; cursor?: string }>({
    method: 'get',
    path: '/api/v1/instances',
    access: 'viewer',
    tag: 'instances',
    summary: 'List instances, newest first',
    query: z.object({
      // A value no task can have (a comma list, capitals) is refused by name instead of
      // answering an empty list that reads as "no runs".
      task: z.string().regex(TASK_NAME_PATTERN, `must be one task name (${TASK_NAME_PATTERN.source})`).optional(),
      team: teamNameSchema.optional().describe("extension: only instances of this team's tasks (none if the token does not cover it)"),
      state: z
        .string()
        .max(200)
        .optional()
        .refine((s) => s === undefined || s.split(',').every((p) => (INSTANCE_STATES as readonly string[]).includes(p)), {
          message: `must be one of ${INSTANCE_STATES.join(', ')} (extension: a comma list)`,
        }),
      bizDate: bizDateSchema.optional(),
      worker: z
        .string()
        .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,254}$/, 'must be a worker id')
        .optional()
        .describe('extension: only instances whose current execution ran on this worker'),
      trigger: z
        .string()
        .max(100)
        .optional()
        .refine((s) => s === undefined || s.split(',').every((p) => (INSTANCE_TRIGGERS as readonly string[]).includes(p)), {
          message: `must be one of ${INSTANCE_TRIGGERS.join(', ')} (a comma list)`,
        })
        .describe('extension: only instances created by this trigger (a comma list)'),
      from: instantSchema.optional().describe('expected time at or after'),
      to: instantSchema.optional().describe('expected time before'),
      ...pageQueryShape,
    }),
    responses: { 200: { description: 'a page of instances', schema: listOf(instanceSchema) } },
    handler: async ({ query, deps, principal }) => {
      const before = decodeCursor(query.cursor);
      if (before === null || (before !== undefined && !/^\d{1,20}$/.test(before))) {
        throw validationFailed([{ path: 'cursor', message: 'cursor: not a cursor this API returned' }]);
      }
      const rows = await listInstances(deps.pool, {
        ...(query.task === undefined ? {} : { taskName: query.task }),
        ...(query.state === undefined ? {} : { states: query.state.split(',') }),
        ...(query.bizDate === undefined ? {} : { bizDate: query.bizDate }),
        ...(query.worker === undefined ? {} : { workerId: query.worker }),
        ...(query.trigger === undefined ? {} : { triggers: query.trigger.split(',') }),
        ...(query.from === undefined ? {} : { from: new Date(query.from) }),
        ...(query.to === undefined ? {} : { to: new Date(query.to) }),
        ...(before === undefined ? {} : { beforeId: before }),
        teams: listedTeams(principal, query.team),
        limit: query.limit + 1,
      });
      const shown = rows.slice(0, query.limit).map((i) => i.id);
      const [runs, waits] = await Promise.all([currentRunTimes(deps.pool, shown), waitingOfInstances(deps.pool, shown)]);
      return { status: 200, body: pageOf(rows, query.limit, (i) => i.id, (i) => instanceResource(i, runs.get(i.id), waits.get(i.id))) };
    },
  }),
  defineRoute<unknown, { root?: string; days: number; to?: string }>({
    method: 'get',
    path: '/api/v1/dag/grid',
    access: 'viewer',
    tag: 'dag',
    extension: true,
    summary: "The DAG grid (extension): tasks down, their latest business dates across, each cell the latest slot's state and duration",
    description:
      "Tasks of the DAG reachable from `root` (without: every task with an edge), of the token's teams only, parents first; the `days` latest business dates that have an instance of one of them (at or before `to`), oldest first. One statement reads the cells.",
    query: z.object({
      root: z.string().min(1).max(128).optional(),
      days: z.coerce.number().int().min(1).max(90).default(14).describe('how many business dates, 1–90 (default 14)'),
      to: bizDateSchema.optional().describe('the newest business date to show'),
    }),
    responses: {
      200: {
        description: 'the grid',
        schema: z.object({ root: z.string().nullable(), days: z.int(), bizDates: z.array(z.string()), tasks: z.array(z.string()), cells: z.array(gridCellSchema) }),
      },
      404: { description: 'no such root task' },
    },
    handler: async ({ query, deps, principal }) => {
      const teams = visibleTeams(principal);
      let nodes: string[];
      let shownEdges: TaskEdgeRow[];
      if (query.root === undefined) {
        shownEdges = await visibleEdges(deps.pool, principal);
        nodes = [...new Set(shownEdges.flatMap((e) => [e.parent, e.child]))].sort(byName);
      } else {
        await mustSeeTaskName(deps.pool, principal, query.root); // its team only: the grid shows no definition
        const reach = await visibleReachableFrom(deps.pool, principal, query.root);
        nodes = reach.nodes;
        shownEdges = reach.edges;
      }
      let ordered: string[];
      try {
        ordered = topologicalOrder(nodes, shownEdges);
      } catch {
        ordered = nodes; // a cycle (refused on write; stored before that check): keep the list order
      }
      const tasks = ordered.slice(0, MAX_GRID_TASKS);
      const grid = await dagGridCells(deps.pool, { taskNames: tasks, days: query.days, teams, ...(query.to === undefined ? {} : { toBizDate: query.to }) });
      return {
        status: 200,
        body: {
          root: query.root ?? null,
          days: query.days,
          bizDates: [...grid.bizDates].reverse(),
          tasks,
          cells: grid.cells.map((c) => ({
            task: c.taskName,
            bizDate: c.bizDate,
            instanceId: c.instanceId,
            state: c.state,
            expectedTime: c.expectedTime.toISOString(),
            durationMs: c.durationMs,
            slots: c.slots,
          })),
        },
      };
    },
  }),
  defineRoute<{ id: string }>({
    method: 'get',
    path: '/api/v1/instances/{id}',
    access: 'viewer',
    tag: 'instances',
    summary: 'One instance with its executions, events and output tail',
    params: idParams,
    responses: {
      200: {
        description: 'the instance',
        schema: instanceSchema.extend({
          executions: z.array(executionSchema),
          events: z.array(eventSchema),
          outputTail: z.string().nullable(),
        }),
      },
      404: { description: 'no such instance' },
    },
    handler: async ({ params, deps, principal }) => {
      const inst = await mustSeeInstance(deps.pool, principal, params.id);
      const [executions, events, runs, waits] = await Promise.all([
        listExecutions(deps.pool, inst.id),
        listInstanceEvents(deps.pool, inst.id),
        currentRunTimes(deps.pool, [inst.id]),
        waitingOfInstances(deps.pool, [inst.id]),
      ]);
      const logSizes = await logSizesOfExecutions(deps.pool, executions.map((e) => e.executionId));
      const last = executions[executions.length - 1];
      return {
        status: 200,
        body: {
          ...instanceResource(inst, runs.get(inst.id), waits.get(inst.id)),
          executions: executions.map((e) => ({ ...executionResource(e), logSize: logSizes.get(e.executionId) ?? 0 })),
          events: events.map(eventResource),
          outputTail: last?.outputTail ?? null,
        },
      };
    },
  }),
  defineRoute<{ id: string }>({
    method: 'post',
    path: '/api/v1/instances/{id}/cancel',
    access: 'operator',
    tag: 'instances',
    summary: 'Cancel an instance; a running one is killed on its worker',
    params: idParams,
    responses: {
      200: { description: 'the canceled instance', schema: instanceSchema },
      404: { description: 'no such instance' },
      409: { description: '`INVALID_STATE`: the instance is final' },
    },
    handler: async ({ params, deps, principal }) => {
      const outcome = await writeTransaction(deps.pool, async (tx) => {
        const inst = await mustSeeInstance(tx, principal, params.id, { forUpdate: true });
        const result = await cancelInstance(tx, inst, principal?.name ?? 'unknown');
        if (result.kind === 'final') throw invalidState(`instance ${inst.id} is ${inst.state}, a final state`, { state: inst.state });
        if (result.kind === 'lost_race') throw invalidState(`instance ${inst.id} changed state meanwhile; read it again`);
        await audit(tx, principal, {
          action: 'instance.cancel',
          target: `instance:${inst.id}`,
          team: inst.team,
          before: { state: inst.state },
          after: { state: 'CANCELED', reason: 'CANCELED_BY_USER' },
        });
        return result;
      });
      if (outcome.workerId !== null && outcome.executionId !== null) await sendCancel(deps, outcome.workerId, outcome.executionId);
      const canceled = await mustSeeInstance(deps.pool, principal, params.id);
      return { status: 200, body: instanceResource(canceled, (await currentRunTimes(deps.pool, [canceled.id])).get(canceled.id)) };
    },
  }),
  defineRoute<{ name: string }, unknown, { params?: Record<string, unknown>; bizDate?: string }>({
    method: 'post',
    path: '/api/v1/tasks/{name}/trigger',
    access: 'operator',
    tag: 'instances',
    summary: 'Run a task now (an `Idempotency-Key` header makes a repeat within 24 h return the same instance)',
    params: nameParams,
    headers: { 'Idempotency-Key': 'optional; a repeat of the same key for the same task within 24 h returns the same instance' },
    body: {
      optional: true,
      schema: z.strictObject({
        params: z.record(z.string(), z.unknown()).optional().describe('merged over the task params'),
        bizDate: bizDateSchema.optional(),
      }),
    },
    responses: {
      202: { description: 'the instance', schema: instanceSchema },
      404: { description: 'no such task' },
    },
    handler: async ({ params, body, deps, principal, req, res }) => {
      const key = req.headers['idempotency-key'];
      if (key !== undefined && (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key))) {
        throw validationFailed([{ path: 'Idempotency-Key', message: 'Idempotency-Key: 1 to 255 visible ASCII characters' }]);
      }
      const outcome = await writeTransaction(deps.pool, async (tx) => {
        const task = await mustSeeTask(tx, principal, params.name);
        if (key !== undefined) {
          const existing = await reserveIdempotencyKey(tx, task.definition.name, key);
          if (existing !== null) return { id: existing, replayed: true };
        }
        const requestedAt = new Date(deps.now());
        const def = task.definition;
        const created = await insertManualInstance(tx, {
          taskId: task.id,
          taskName: def.name,
          requestedAt,
          bizDate: body.bizDate ?? bizDateOf(requestedAt.getTime(), def.schedule.timezone, def.bizDateOffsetDays),
          params: { ...def.params, ...(body.params ?? {}) },
          priority: def.priority,
          maxAttempts: def.retry.max + 1,
          trigger: 'manual',
          message: `triggered by ${principal?.name ?? 'unknown'}`,
        });
        if (created === null) throw new ApiError(500, 'INTERNAL', 'no slot for the trigger');
        if (key !== undefined) await bindIdempotencyKey(tx, def.name, key, created.id);
        await audit(tx, principal, {
          action: 'task.trigger',
          target: `task:${def.name}`,
          team: def.team,
          after: { instanceId: created.id, expectedTime: created.expectedTime.toISOString(), ...(body.bizDate ? { bizDate: body.bizDate } : {}) },
        });
        return { id: created.id, replayed: false };
      });
      if (outcome.replayed) res.setHeader('idempotent-replayed', 'true');
      else await notifyInstancesReady(deps, 1);
      const triggered = await mustSeeInstance(deps.pool, principal, outcome.id);
      return { status: 202, body: instanceResource(triggered, (await currentRunTimes(deps.pool, [triggered.id])).get(triggered.id)) };
    },
  }),
];
