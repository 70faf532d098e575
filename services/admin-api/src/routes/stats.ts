/** Dashboard charts (extension): runs, failures and fire lag per hour of one UTC day. */
import { z } from 'zod';
import { validationFailed } from '../errors.js';
import { hourlyStats } from '../hourly-stats.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { bizDateSchema } from '../schemas.js';
import { statsKey } from '../stats-cache.js';
import { visibleTeams } from '../team-scope.js';

const hourSchema = z.object({
  hour: z.string().describe('start of the hour, ISO UTC'),
  runs: z.int(),
  succeeded: z.int(),
  failed: z.int(),
  avgFireLagMs: z.number().nullable().describe('instance commit − expected time of scheduled instances'),
  avgTriggerDelayMs: z
    .number()
    .nullable()
    .describe("start of the current execution − when the instance became due (due_at; a dependency instance: when its parents were satisfied), ms"),
});

export const statsRoutes: RouteSpec[] = [
  defineRoute<unknown, { day?: string }>({
    method: 'get',
    path: '/api/v1/stats/hourly',
    access: 'viewer',
    tag: 'stats',
    extension: true,
    summary: 'Per-hour figures of a UTC day, by the hour each instance became due (extension)',
    query: z.object({ day: bizDateSchema.optional().describe('the UTC day, YYYY-MM-DD; default today') }),
    responses: { 200: { description: '24 hours, oldest first', schema: z.object({ day: z.string(), hours: z.array(hourSchema) }) } },
    handler: async ({ query, deps, principal }) => {
      const now = new Date(deps.now());
      const day = query.day ?? now.toISOString().slice(0, 10);
      const dayStart = new Date(`${day}T00:00:00.000Z`);
      if (Number.isNaN(dayStart.getTime())) throw validationFailed([{ path: 'day', message: 'day: must be a date YYYY-MM-DD' }]);
      const teams = visibleTeams(principal);
      const hours = await deps.statsCache.get(statsKey('hourly', day, teams), () => hourlyStats(deps.pool, dayStart, teams, now.getTime()));
      return { status: 200, body: { day, hours } };
    },
  }),
];
