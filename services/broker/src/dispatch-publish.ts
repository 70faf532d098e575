/**
 * The publish half of a dispatch (DESIGN §4): after the claim committed, one message per worker
 * and chunk (R10), mandatory and confirmed, by queue name on the default exchange (R24); the
 * confirm starts the ACK deadline (R8, `ack-clocks.ts`). Also the cancel a covered run's worker
 * gets.
 */
import { MESSAGE_VERSION, acceptedKeyVersions, encodeTrustedMessage, idempotencyKeyOf, type DispatchItem, type DispatchMessage } from '@ax/core';
import { requestCancel } from '@ax/bus';
import { toError, type AxSpan } from '@ax/kit';
import type { ActiveRun } from '@ax/store';
import type { BrokerContext } from './context.js';
import type { Planned } from './claim-plan.js';
import { logTraceId, startDispatchSpan } from './dispatch-spans.js';
import { restartShardAckClocks } from './shard-queries.js';

/** Builds the dispatch item of a planned instance. */
function itemOf(ctx: BrokerContext, p: Planned, ackDeadline: Date, traceparent: string): DispatchItem {
  const expectedTime = p.instance.expectedTime.toISOString();
  const team = ctx.teams.get(p.task.definition.team);
  const grace = team.previousKeyValidUntil;
  return {
    ...(p.shard === undefined ? {} : { shardIndex: p.shard.index, shardTotal: p.shard.total }),
    executionId: p.executionId,
    instanceId: p.instance.id,
    taskName: p.instance.taskName,
    taskId: p.instance.taskId,
    team: team.name,
    keyVersion: team.keyVersion,
    // the team row's list, never the task's (#44): the worker narrows its allowlist with it
    ...(team.httpAllow === null ? {} : { httpAllow: [...team.httpAllow] }),
    ...(grace !== null && acceptedKeyVersions(team, p.instance.dbNow.getTime()).length > 1 ? { previousKeyValidUntil: grace.toISOString() } : {}),
    expectedTime,
    bizDate: p.instance.bizDate,
    attempt: p.attempt ?? p.instance.attempt,
    maxAttempts: p.instance.maxAttempts,
    runNo: p.instance.runNo,
    priority: Math.min(9, Math.max(0, p.instance.priority)),
    params: p.instance.params,
    exec: p.task.definition.exec,
    timeoutSeconds: p.task.definition.timeoutSeconds,
    ackDeadline: ackDeadline.toISOString(),
    traceId: logTraceId(traceparent, p.executionId),
    traceparent,
    idempotencyKey: idempotencyKeyOf(p.instance.taskName, expectedTime, p.instance.runNo),
    // This broker stores output that results carry (result-output.ts): a short job's output
    // needs no `log` message.
    outputInResult: true,
  };
}

/** Publishes the plan, one message per worker and chunk (R10), then queues the start of the ACK deadlines (R8, `ack-clocks.ts`). */
export async function publishPlanned(ctx: BrokerContext, planned: readonly Planned[]): Promise<void> {
  const byWorker = new Map<string, Planned[]>();
  for (const p of planned) byWorker.set(p.worker.id, [...(byWorker.get(p.worker.id) ?? []), p]);
  const chunks: Planned[][] = [];
  for (const list of byWorker.values()) {
    for (let i = 0; i < list.length; i += ctx.config.maxItemsPerDispatch) chunks.push(list.slice(i, i + ctx.config.maxItemsPerDispatch));
  }
  await Promise.all(
    chunks.map(async (chunk) => {
      const first = chunk[0] as Planned;
      const messageDeadline = new Date(first.instance.dbNow.getTime() + ctx.config.ackTimeoutMs);
      const spans = chunk.map((p) =>
        startDispatchSpan(ctx.tracer, p.parentTrace ?? p.instance.traceParent, { executionId: p.executionId, workerId: p.worker.id, attempt: p.attempt ?? p.instance.attempt, shardIndex: p.shard?.index }),
      );
      const message: DispatchMessage = {
        v: MESSAGE_VERSION,
        kind: 'dispatch',
        workerId: first.worker.id,
        items: chunk.map((p, i) => itemOf(ctx, p, messageDeadline, (spans[i] as AxSpan).traceparent)),
      };
      try {
      // Trusted: every part of an item comes from a validated definition or a stored instance
      // (validated when created); the worker validates the message again on receipt.
      // By queue name on the default exchange (R24): no binding needed, so enrolled workers get
      // it; mandatory, so a queue that is gone returns it (R8, handleReturned).
        await ctx.bus.publish('', ctx.bus.topology.workerQueue(first.worker.id), encodeTrustedMessage(message), {
          mandatory: true,
          priority: Math.max(...chunk.map((p) => p.instance.priority)),
          messageId: first.executionId,
        });
      } catch (error) {
        for (const span of spans) span.fail(toError(error).message);
        throw error;
      } finally {
        const endMs = Date.now();
        for (const span of spans) span.end(endMs);
      }
      ctx.metrics.dispatchMessages.inc();
      ctx.metrics.dispatches.inc({ worker: first.worker.id }, chunk.length);
      ctx.ackClocks.confirmed(
        chunk.map((p) => ({ instanceId: p.instance.id, executionId: p.executionId })),
        messageDeadline,
      );
      await restartShardAckClocks(ctx.pool, chunk.flatMap((p) => (p.shard === undefined ? [] : [p.executionId])));
    }),
  );
}

/** Cancels a covered or superseded run on its worker (best effort: lease expiry is the backstop). */
export async function cancelRun(ctx: BrokerContext, run: ActiveRun, reason: string): Promise<void> {
  if (run.workerId === null || run.executionId === null) return;
  try {
    await ctx.reservations.release(run.workerId, [run.executionId]);
    await requestCancel(ctx.bus, { workerId: run.workerId, executionIds: [run.executionId], reason });
  } catch (error) {
    ctx.logger.warn({ err: toError(error), executionId: run.executionId, workerId: run.workerId }, 'cancel not sent');
  }
}
