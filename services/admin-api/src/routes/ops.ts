/** Operations: workers and drain, global dispatch pause, today's figures, dead letters. */
import { z } from 'zod';
import { enrollmentOfWorkerId } from '@ax/core';
import { readRegistry, setDrained, readRegistration } from '@ax/redis';
import { DISPATCH_PAUSED_FLAG, dayStats, getSystemFlag, listDeadLetters, setSystemFlag } from '@ax/store';
import { audit } from '../audit.js';
import { notFound, validationFailed } from '../errors.js';
import { decodeCursor, pageOf, pageQueryShape } from '../pagination.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { idParams, listOf } from '../schemas.js';
import { statsKey } from '../stats-cache.js';
import { assertAllTeams, coversTeam, visibleTeams } from '../team-scope.js';
import { writeTransaction } from '../write-transaction.js';

const workerSchema = z.object({
  id: z.string(),
  host: z.string(),
  tags: z.array(z.string()),
  cores: z.int(),
  slots: z.int(),
  running: z.int(),
  avgDurationMs: z.number(),
  lastHeartbeat: z.string(),
  state: z.enum(['active', 'draining']),
  teams: z.array(z.string()).describe('the teams it serves (AX_WORKER_TEAMS); ["*"] = every team'),
  enrollment: z.string().nullable().describe('the id of the worker enrollment it runs under (the prefix of its id); null = an unenrolled worker'),
});

const pausedSchema = z.object({ paused: z.boolean() });

export const opsRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/api/v1/workers',
    access: 'viewer',
    tag: 'workers',
    summary: "The worker registry: workers serving every team, and those serving one of the token's teams",
    responses: { 200: { description: 'live workers', schema: listOf(workerSchema) } },
    handler: async ({ deps, principal }) => {
      // A worker of every team is shared: everyone sees it. One started with AX_WORKER_TEAMS is
      // the machine of those teams: tokens of other teams do not see it.
      const workers = (await readRegistry(deps.redis, deps.keys)).filter(
        (w) => w.teams === undefined || w.teams.length === 0 || w.teams.some((team) => coversTeam(principal, team)),
      );
      return {
        status: 200,
        body: {
          items: workers.map((w) => ({
            id: w.workerId,
            host: w.host,
            tags: w.tags,
            cores: w.cores,
            slots: w.slots,
            running: w.running,
            avgDurationMs: w.avgDurationMs5m,
            lastHeartbeat: w.at,
            state: w.draining ? 'draining' : 'active',
            version: w.version,
            startedAt: w.startedAt,
            clockOffsetMs: w.clockOffsetMs ?? null,
            teams: w.teams === undefined || w.teams.length === 0 ? ['*'] : [...w.teams],
            enrollment: enrollmentOfWorkerId(w.workerId),
          })),
          nextCursor: null,
        },
      };
    },
  }),
  defineRoute<{ id: string }>({
    method: 'post',
    path: '/api/v1/workers/{id}/drain',
    access: 'operator',
    tag: 'workers',
    summary: 'Stop routing new work to a worker',
    params: idParams,
    responses: {
      200: { description: 'drained', schema: z.object({ id: z.string(), state: z.literal('draining') }) },
      403: { description: '`FORBIDDEN`: the role is too low, or the token does not cover every team (every worker serves every team)' },
      404: { description: 'no such live worker' },
    },
    handler: async ({ params, deps, principal }) => {
      // Until AX_WORKER_TEAMS, every worker serves every team: draining one is an act on all teams.
      assertAllTeams(principal, 'draining a worker that serves every team');
      if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(params.id)) throw notFound(`worker ${JSON.stringify(params.id)}`);
      const worker = await readRegistration(deps.redis, deps.keys, params.id);
      if (worker === null) throw notFound(`worker ${JSON.stringify(params.id)}`);
      await setDrained(deps.redis, deps.keys, params.id, true);
      await writeTransaction(deps.pool, (tx) => audit(tx, principal, { action: 'worker.drain', target: `worker:${params.id}`, team: null, after: { state: 'draining' } }));
      try {
        await deps.redis.publish(deps.keys.channels.workersChanged, params.id);
      } catch {
        deps.logger.warn({ workerId: params.id }, 'could not publish workers-changed');
      }
      return { status: 200, body: { id: params.id, state: 'draining' } };
    },
  }),
  ...(['pause', 'resume'] as const).map((action) =>
    defineRoute({
      method: 'post',
      path: `/api/v1/dispatch/${action}`,
      access: 'admin',
      tag: 'dispatch',
      summary: action === 'pause' ? 'Stop all dispatching' : 'Start dispatching again',
      description: 'Needs a token of every team ("*").',
      responses: { 200: { description: 'the switch', schema: pausedSchema }, 403: { description: '`FORBIDDEN`: the role is too low, or the token does not cover every team' } },
      handler: async ({ deps, principal }) => {
        assertAllTeams(principal, 'the global dispatch pause');
        const paused = action === 'pause';
        await writeTransaction(deps.pool, async (tx) => {
          const before = (await getSystemFlag(tx, DISPATCH_PAUSED_FLAG)) === true;
          await setSystemFlag(tx, DISPATCH_PAUSED_FLAG, paused, principal?.name ?? null);
          await audit(tx, principal, { action: `dispatch.${action}`, target: 'dispatch', team: null, before: { paused: before }, after: { paused } });
        });
        return { status: 200, body: { paused } };
      },
    }),
  ),
  defineRoute({
    method: 'get',
    path: '/api/v1/dispatch',
    access: 'viewer',
    tag: 'dispatch',
    extension: true,
    summary: 'Whether dispatching is paused (extension)',
    responses: { 200: { description: 'the switch', schema: pausedSchema } },
    handler: async ({ deps }) => ({ status: 200, body: { paused: (await getSystemFlag(deps.pool, DISPATCH_PAUSED_FLAG)) === true } }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/stats/today',
    access: 'viewer',
    tag: 'stats',
    summary: "Today's figures (the instances that became due this UTC day), of the token's teams",
    description:
      'An instance became due at its `due_at`; a dependency instance when its parents were satisfied (created, or promoted from WAITING: its `DEPS_MET` event), never at the midnight of its biz date.',
    responses: {
      200: {
        description: 'figures',
        schema: z.object({
          total: z.int(),
          succeeded: z.int(),
          failed: z.int(),
          running: z.int().describe('DISPATCHED or RUNNING'),
          avgTriggerDelayMs: z.number().nullable().describe('mean of (start of the current execution − when the instance became due) over started instances, ms'),
          maxDurationMs: z.number().nullable().describe("the longest execution (started → ended) of the day's instances, ms"),
          topFailing: z.array(z.object({ task: z.string(), count: z.int() })),
          day: z.string().describe('extension: the UTC day, YYYY-MM-DD'),
        }),
      },
    },
    handler: async ({ deps, principal }) => {
      const now = new Date(deps.now());
      const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
      const day = dayStart.toISOString().slice(0, 10);
      const teams = visibleTeams(principal);
      const figures = await deps.statsCache.get(statsKey('today', day, teams), () => dayStats(deps.pool, dayStart, 5, teams));
      return { status: 200, body: { ...figures, day } };
    },
  }),
  defineRoute<unknown, { limit: number; cursor?: string }>({
    method: 'get',
    path: '/api/v1/dead-letters',
    access: 'operator',
    tag: 'dispatch',
    summary: 'Poison messages seen, newest first',
    description: 'Needs a token of every team ("*"): a message is of no known team.',
    query: z.object({ ...pageQueryShape }),
    responses: {
      200: {
        description: 'a page of dead letters',
        schema: listOf(z.object({ id: z.string(), at: z.string(), sourceQueue: z.string(), reason: z.string(), payload: z.string().nullable(), headers: z.unknown() })),
      },
    },
    handler: async ({ query, deps, principal }) => {
      assertAllTeams(principal, 'reading dead letters');
      const before = decodeCursor(query.cursor);
      if (before === null || (before !== undefined && !/^\d{1,20}$/.test(before))) throw validationFailed([{ path: 'cursor', message: 'cursor: not a cursor this API returned' }]);
      const rows = await listDeadLetters(deps.pool, { ...(before === undefined ? {} : { beforeId: before }), limit: query.limit + 1 });
      return { status: 200, body: pageOf(rows, query.limit, (r) => r.id, (r) => ({ ...r, at: r.at.toISOString() })) };
    },
  }),
];
