/**
 * The global dispatch pause and `GET /status` (ADMIN-API.md "Operations", issue #47): what an
 * operator needs to see before anything else — is dispatch paused (since when, by whom, why),
 * how many workers are live and draining, how much due work waits and for how long, how much of
 * it is late — for the token's teams.
 */
import { z } from 'zod';
import { LATE_AFTER_SECONDS } from '@ax/core';
import { backlogSummary, readDispatchPause, writeDispatchPause, type DispatchPause } from '@ax/store';
import { audit } from '../audit.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { reasonSchema } from '../schemas.js';
import { assertAllTeams, visibleTeams } from '../team-scope.js';
import { visibleWorkers } from '../worker-visibility.js';
import { writeTransaction } from '../write-transaction.js';

const pauseSchema = z.object({
  paused: z.boolean(),
  since: z.string().optional().describe('when it was switched to this state (absent: never switched)'),
  by: z.string().optional().describe('the token name that switched it'),
  reason: z.string().optional().describe('why, as given with the pause (only while paused)'),
});

/** A pause as the API answers it: absent fields rather than nulls. */
function pauseBody(p: DispatchPause): z.infer<typeof pauseSchema> {
  return {
    paused: p.paused,
    ...(p.since === null ? {} : { since: p.since.toISOString() }),
    ...(p.by === null ? {} : { by: p.by }),
    ...(p.reason === null ? {} : { reason: p.reason }),
  };
}

const statusSchema = z.object({
  dispatch: pauseSchema,
  workers: z.object({ live: z.int(), draining: z.int() }).describe("live workers the token sees (shared ones and its teams' own) and how many of them are draining"),
  backlog: z
    .object({ waiting: z.int(), oldestDueSeconds: z.int() })
    .describe("due instances of the token's teams that wait (each carries `waiting.reason`), and how long the oldest has been due"),
  late: z.int().describe(`of those, the ones due for more than ${LATE_AFTER_SECONDS} s`),
  traceUrlTemplate: z
    .string()
    .nullable()
    .describe('extension: `AX_TRACE_URL_TEMPLATE`, the URL of one trace in the tracing UI with `{traceId}` where an instance\'s `traceId` goes (docs/observability.md); null when unset'),
});

export const dispatchStatusRoutes: RouteSpec[] = [
  ...(['pause', 'resume'] as const).map((action) =>
    defineRoute<unknown, unknown, { reason?: string }>({
      method: 'post',
      path: `/api/v1/dispatch/${action}`,
      access: 'admin',
      tag: 'dispatch',
      summary: action === 'pause' ? 'Stop all dispatching' : 'Start dispatching again',
      description: 'Needs a token of every team ("*"). The reason is audited and shown by `GET /status` and the console while paused.',
      body: { optional: true, schema: z.strictObject({ reason: reasonSchema.optional().describe('why (audited; shown while paused)') }) },
      responses: { 200: { description: 'the switch', schema: pauseSchema }, 403: { description: '`FORBIDDEN`: the role is too low, or the token does not cover every team' } },
      handler: async ({ deps, principal, body }) => {
        assertAllTeams(principal, 'the global dispatch pause');
        const paused = action === 'pause';
        const reason = body?.reason ?? null;
        const after = await writeTransaction(deps.pool, async (tx) => {
          const before = await readDispatchPause(tx);
          await writeDispatchPause(tx, paused, principal?.name ?? null, reason);
          await audit(tx, principal, {
            action: `dispatch.${action}`,
            target: 'dispatch',
            team: null,
            before: { paused: before.paused },
            after: { paused, ...(reason === null ? {} : { reason }) },
          });
          return readDispatchPause(tx);
        });
        return { status: 200, body: pauseBody(after) };
      },
    }),
  ),
  defineRoute({
    method: 'get',
    path: '/api/v1/dispatch',
    access: 'viewer',
    tag: 'dispatch',
    extension: true,
    summary: 'Whether dispatching is paused, since when, by whom and why (extension)',
    responses: { 200: { description: 'the switch', schema: pauseSchema } },
    handler: async ({ deps }) => ({ status: 200, body: pauseBody(await readDispatchPause(deps.pool)) }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/status',
    access: 'viewer',
    tag: 'dispatch',
    summary: "The platform at a glance, for the token's teams: pause, workers, backlog, late runs",
    description: `\`backlog\` counts the due instances the brokers' backlog scan found held (each with its \`waiting.reason\`, see "Waiting instances"; the scan runs every AX_BACKLOG_SCAN_MS). \`late\`: those due for more than ${LATE_AFTER_SECONDS} s.`,
    responses: { 200: { description: 'status', schema: statusSchema } },
    handler: async ({ deps, principal }) => {
      const [pause, workers, backlog] = await Promise.all([
        readDispatchPause(deps.pool),
        visibleWorkers(deps, principal),
        backlogSummary(deps.pool, visibleTeams(principal), LATE_AFTER_SECONDS),
      ]);
      return {
        status: 200,
        body: {
          dispatch: pauseBody(pause),
          workers: { live: workers.length, draining: workers.filter(({ worker }) => worker.draining).length },
          backlog: { waiting: backlog.waiting, oldestDueSeconds: backlog.oldestDueSeconds },
          late: backlog.late,
          traceUrlTemplate: deps.traceUrlTemplate ?? null,
        },
      };
    },
  }),
];
