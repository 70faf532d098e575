/** Operations: the worker registry, today's figures, dead letters (drain: worker-drain.ts; pause and status: dispatch-status.ts). */
import { z } from 'zod';
import { enrollmentOfWorkerId } from '@ax/core';
import { dayStats, listDeadLetters } from '@ax/store';
import { validationFailed } from '../errors.js';
import { decodeCursor, pageOf, pageQueryShape } from '../pagination.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { listOf } from '../schemas.js';
import { statsKey } from '../stats-cache.js';
import { assertAllTeams, visibleTeams } from '../team-scope.js';
import { visibleWorkers } from '../worker-visibility.js';

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
  teams: z
    .array(z.string())
    .describe('the teams it serves: those of its enrollment (the server\'s record), narrowed by AX_WORKER_TEAMS; an unenrolled worker\'s AX_WORKER_TEAMS; ["*"] = every team; [] = none (its enrollment is revoked or has no team left)'),
  enrollment: z.string().nullable().describe('the id of the worker enrollment it runs under (the prefix of its id); null = an unenrolled worker'),
});

export const opsRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/api/v1/workers',
    access: 'viewer',
    tag: 'workers',
    summary: "The worker registry: workers serving every team, and those serving one of the token's teams",
    responses: { 200: { description: 'live workers', schema: listOf(workerSchema) } },
    handler: async ({ deps, principal }) => {
      const workers = (await visibleWorkers(deps, principal)).map(({ worker: w, teams }) => ({ w, teams }));
      return {
        status: 200,
        body: {
          items: workers.map(({ w, teams }) => ({
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
            teams,
            enrollment: enrollmentOfWorkerId(w.workerId),
          })),
          nextCursor: null,
        },
      };
    },
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
