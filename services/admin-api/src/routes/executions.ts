/**
 * HMAC endpoints for business code (ADMIN-API.md "HTTP executors", R15, R18): async reports
 * (published to the brokers as a `result` with origin `report`) and the run claim. The
 * signature (v2, a team's executor key) is verified by the route layer (`access: 'hmac'`,
 * hmac-verify.ts) before the body is parsed; here the execution must be that team's (else 401,
 * as for a wrong key), and a report must be for the current execution that answered 202 (else
 * 409 `NOT_ASYNC`: a shell job, a synchronous answer, a superseded or finished execution). A relayed
 * report and a granted claim are audited as `executor:<team>` (the team of the execution's task);
 * a duplicate report or a refused claim writes nothing.
 */
import { z } from 'zod';
import { encodeMessage, toError } from '@ax/core';
import { claimRun, getExecution, getInstance, withTransaction } from '@ax/store';
import { auditExecutor } from '../audit.js';
import { ApiError, notFound } from '../errors.js';
import { defineRoute, type RouteSpec } from '../route.js';
import type { AppDeps } from '../deps.js';
import { publishConfirmed } from '../publish.js';
import { writeTransaction } from '../write-transaction.js';

const executionParams = z.object({ executionId: z.string().max(64) });

/** How long a report is remembered for deduplication. */
const REPORT_DEDUP_TTL_SECONDS = 7 * 86_400;

function reportKey(deps: AppDeps, executionId: string): string {
  return `${deps.keys.namespace}:report:${executionId}`;
}

async function mustGetExecution(deps: AppDeps, executionId: string) {
  const execution = await getExecution(deps.pool, executionId);
  if (execution === null) throw notFound(`execution ${JSON.stringify(executionId)}`);
  return execution;
}

/** A key of team B does not sign for team A's executions: refused like a wrong key. */
function mustBeSignedByItsTeam(signedTeam: string | null, executionTeam: string | null): void {
  if (signedTeam === null || signedTeam !== executionTeam) {
    throw new ApiError(401, 'BAD_SIGNATURE', "signed with another team's executor key", { reason: 'WRONG_TEAM' });
  }
}

const SIGNED_HEADERS = {
  'X-Ax-Team': "the team of the execution's task",
  'X-Ax-Key-Version': "the version of that team's executor key used",
  'X-Ax-Timestamp': 'unix ms; at most 5 minutes from the server clock',
  'X-Ax-Signature': 'v2=<hex HMAC-SHA256(key, "v2\\n<timestamp>\\nPOST\\n<path>\\n<body>")>',
};

export const executionRoutes: RouteSpec[] = [
  defineRoute<{ executionId: string }, unknown, { success: boolean; message?: string; data?: Record<string, unknown> }>({
    method: 'post',
    path: '/api/v1/executions/{executionId}/report',
    access: 'hmac',
    tag: 'executions',
    summary: "Asynchronous result of an HTTP executor that answered 202 (signed v2 with its team's executor key)",
    params: executionParams,
    headers: SIGNED_HEADERS,
    body: {
      schema: z.object({
        success: z.boolean(),
        message: z.string().max(4096).optional(),
        data: z.record(z.string(), z.unknown()).optional(),
      }),
    },
    responses: {
      200: { description: 'accepted; `{"duplicate":true}` for a repeat', schema: z.object({ accepted: z.boolean().optional(), duplicate: z.boolean() }) },
      401: { description: '`BAD_SIGNATURE`: missing, v1, stale, wrong, or signed with another team\'s key' },
      404: { description: 'no such execution' },
      409: { description: '`NOT_ASYNC`: the execution did not answer 202, or is no longer the current one (a report sent right after the 202 may arrive first: retry it)' },
    },
    handler: async ({ params, body, deps, signedTeam }) => {
      const execution = await mustGetExecution(deps, params.executionId);
      const instance = await getInstance(deps.pool, execution.instanceId);
      mustBeSignedByItsTeam(signedTeam, instance?.team ?? null);
      if (deps.bus === null) throw new ApiError(503, 'UNAVAILABLE', 'reports cannot be relayed: RabbitMQ is not configured');
      const key = reportKey(deps, execution.executionId);
      // a repeat of a relayed report is answered as before, whatever the execution's state now
      if ((await deps.redis.exists(key)) === 1) return { status: 200, body: { duplicate: true } };
      const current = instance !== null && (execution.shardIndex !== null || instance.currentExecutionId === execution.executionId);
      if (execution.state !== 'ASYNC' || !current || (instance.state !== 'RUNNING' && instance.state !== 'DISPATCHED')) {
        throw new ApiError(409, 'NOT_ASYNC', `execution ${execution.executionId} is not the current execution of an HTTP call answered 202 (it is ${execution.state})`, {
          state: execution.state,
        });
      }
      const first = await deps.redis.set(key, String(deps.now()), 'EX', REPORT_DEDUP_TTL_SECONDS, 'NX');
      // a duplicate relays nothing and so is not audited: one entry per relayed report
      if (first === null) return { status: 200, body: { duplicate: true } };
      const outcome = body.success ? 'SUCCESS' : 'FAILED';
      const message = encodeMessage({
        v: 1,
        kind: 'result',
        workerId: execution.workerId,
        origin: 'report',
        items: [
          {
            executionId: execution.executionId,
            instanceId: execution.instanceId,
            outcome,
            ...(body.success || body.message === undefined ? {} : { error: body.message }),
            ...(body.data === undefined ? {} : { data: body.data }),
            endedAt: new Date(deps.now()).toISOString(),
          },
        ],
      });
      const { bus } = deps;
      try {
        // the entry commits only once the broker confirmed the result: no entry for a report not relayed.
        // Not run again on a lock conflict (it publishes): the 503 below asks the caller to retry.
        await withTransaction(deps.pool, async (tx) => {
          await auditExecutor(tx, {
            action: 'execution.report',
            target: `execution:${execution.executionId}`,
            team: instance?.team ?? null,
            after: { instanceId: execution.instanceId, outcome },
          });
          await publishConfirmed(deps, bus.topology.eventsExchange, 'result', message, { messageId: execution.executionId });
        });
      } catch (err) {
        await deps.redis.del(key).catch(() => 0);
        deps.logger.error({ err: toError(err), executionId: execution.executionId }, 'could not relay a report');
        throw new ApiError(503, 'UNAVAILABLE', 'the report could not be relayed; retry it');
      }
      deps.logger.info({ executionId: execution.executionId, instanceId: execution.instanceId, success: body.success }, 'report relayed');
      return { status: 200, body: { accepted: true, duplicate: false } };
    },
  }),
  defineRoute<{ executionId: string }>({
    method: 'post',
    path: '/api/v1/executions/{executionId}/claim',
    access: 'hmac',
    tag: 'executions',
    summary: 'Claim the run (instance, runNo[, shard]) for this execution: granted to one live execution',
    params: executionParams,
    headers: SIGNED_HEADERS,
    responses: {
      200: { description: 'granted', schema: z.object({ granted: z.literal(true) }) },
      401: { description: '`BAD_SIGNATURE`: missing, v1, stale, wrong, or signed with another team\'s key' },
      404: { description: 'no such execution' },
      409: { description: '`CLAIMED`: another live execution holds the run, or this one is no longer live' },
    },
    handler: async ({ params, deps, signedTeam }) => {
      const execution = await mustGetExecution(deps, params.executionId);
      const outcome = await writeTransaction(deps.pool, async (tx) => {
        // lock the instance first: the claim is decided against its current execution
        const instance = await getInstance(tx, execution.instanceId, { forUpdate: true });
        mustBeSignedByItsTeam(signedTeam, instance?.team ?? null);
        const decision = await claimRun(tx, execution);
        if (decision.granted) {
          await auditExecutor(tx, {
            action: 'execution.claim',
            target: `execution:${execution.executionId}`,
            team: instance?.team ?? null,
            after: { granted: true, instanceId: execution.instanceId, runNo: execution.runNo, ...(execution.shardIndex === null ? {} : { shardIndex: execution.shardIndex }) },
          });
        }
        return decision;
      });
      if (outcome.granted) return { status: 200, body: { granted: true } };
      throw new ApiError(
        409,
        'CLAIMED',
        outcome.why === 'HELD' ? 'another execution holds this run' : 'this execution is no longer the live execution of its run',
        { granted: false, reason: outcome.why },
      );
    },
  }),
];
