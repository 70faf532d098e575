/**
 * HMAC endpoints for business code (ADMIN-API.md "HTTP executors", R15, R18): async reports
 * (published to the brokers as a `result` with origin `report`) and the run claim. The
 * signature is verified by the route layer (`access: 'hmac'`) before the body is parsed. A relayed
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

export const executionRoutes: RouteSpec[] = [
  defineRoute<{ executionId: string }, unknown, { success: boolean; message?: string; data?: Record<string, unknown> }>({
    method: 'post',
    path: '/api/v1/executions/{executionId}/report',
    access: 'hmac',
    tag: 'executions',
    summary: 'Asynchronous result of an HTTP executor (signed with the executor secret)',
    params: executionParams,
    headers: { 'X-Ax-Timestamp': 'unix ms; at most 5 minutes from the server clock', 'X-Ax-Signature': 'sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">' },
    body: {
      schema: z.object({
        success: z.boolean(),
        message: z.string().max(4096).optional(),
        data: z.record(z.string(), z.unknown()).optional(),
      }),
    },
    responses: {
      200: { description: 'accepted; `{"duplicate":true}` for a repeat', schema: z.object({ accepted: z.boolean().optional(), duplicate: z.boolean() }) },
      404: { description: 'no such execution' },
    },
    handler: async ({ params, body, deps }) => {
      const execution = await mustGetExecution(deps, params.executionId);
      if (deps.bus === null) throw new ApiError(503, 'UNAVAILABLE', 'reports cannot be relayed: RabbitMQ is not configured');
      const key = reportKey(deps, execution.executionId);
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
        // the entry commits only once the broker confirmed the result: no entry for a report not relayed
        await withTransaction(deps.pool, async (tx) => {
          const instance = await getInstance(tx, execution.instanceId);
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
    headers: { 'X-Ax-Timestamp': 'unix ms; at most 5 minutes from the server clock', 'X-Ax-Signature': 'sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">' },
    responses: {
      200: { description: 'granted', schema: z.object({ granted: z.literal(true) }) },
      404: { description: 'no such execution' },
      409: { description: '`CLAIMED`: another live execution holds the run, or this one is no longer live' },
    },
    handler: async ({ params, deps }) => {
      const execution = await mustGetExecution(deps, params.executionId);
      const outcome = await withTransaction(deps.pool, async (tx) => {
        // lock the instance first: the claim is decided against its current execution
        const instance = await getInstance(tx, execution.instanceId, { forUpdate: true });
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
