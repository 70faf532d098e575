/**
 * A failed attempt (DESIGN §4): with attempts left → RETRY_WAIT with `due_at` = now + backoff
 * with jitter (on the database clock); otherwise FAILED and a FINAL_FAILURE alert (and the
 * task's `pauseAfterFailures` check, pause-on-failures.ts). Shared by
 * results, lease expiry (LOST_WORKER) and async attempt deadlines.
 */
import { DEFAULT_RETRY, retryDelayMs, type EventType, type InstanceState, type Reason } from '@ax/core';
import { NOW, nowPlusMs, raiseAlert, transitionInstance, type NewEvent, type Queryable } from '@ax/store';
import type { BrokerContext } from './context.js';
import { pauseOnFinalFailure } from './pause-on-failures.js';
import { wakeDelayMs } from './wakeups.js';

/** The instance an attempt failed on. */
export interface FailingInstance {
  readonly instanceId: string;
  readonly taskName: string;
  readonly state: InstanceState;
  readonly executionId: string;
  readonly workerId: string | null;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly retry: { backoffSeconds: number; factor: number; jitterSeconds: number } | null;
}

/** How the attempt failed. */
export interface Failure {
  readonly reason: Reason;
  readonly eventType: EventType;
  readonly message: string;
  /** Retry even without attempts left, keeping the attempt number (LOST_WORKER re-dispatch). */
  readonly redispatch?: boolean;
}


/**
 * Applies the failure; returns 'retry', 'final' or 'lost' (the instance had moved on), and
 * pushes the events to append.
 */
export async function failAttempt(
  ctx: BrokerContext,
  conn: Queryable,
  inst: FailingInstance,
  failure: Failure,
  events: NewEvent[],
): Promise<'retry' | 'final' | 'lost'> {
  const base = { instanceId: inst.instanceId, executionId: inst.executionId, workerId: inst.workerId };
  if (failure.redispatch === true || inst.attempt < inst.maxAttempts) {
    const delayMs = failure.redispatch === true ? 0 : retryDelayMs(inst.retry ?? DEFAULT_RETRY, inst.attempt, ctx.random, ctx.config.backoffCapMs);
    const won = await transitionInstance(conn, {
      id: inst.instanceId,
      from: inst.state,
      to: 'RETRY_WAIT',
      fenceExecutionId: inst.executionId,
      set: {
        reason: failure.reason,
        ...(failure.redispatch === true ? {} : { attempt: { expr: 'attempt + 1' } }),
        due_at: nowPlusMs(delayMs),
        reroute_count: 0,
        ack_deadline: null,
        lease_until: null,
      },
    });
    if (!won) return 'lost';
    events.push(
      { ...base, type: failure.eventType, message: failure.message, data: { reason: failure.reason, attempt: inst.attempt } },
      { ...base, type: 'RETRY_SCHEDULED', message: `retry in ${delayMs} ms`, data: { delayMs, nextAttempt: failure.redispatch === true ? inst.attempt : inst.attempt + 1 } },
    );
    ctx.metrics.retries.inc({ cause: failure.reason });
    // on time rather than at the next timers poll; a wake before this transaction commits
    // finds nothing due and sets the next one from what it reads (runRetriesOnce)
    ctx.wakeRetriesIn(wakeDelayMs(delayMs));
    return 'retry';
  }
  const won = await transitionInstance(conn, {
    id: inst.instanceId,
    from: inst.state,
    to: 'FAILED',
    fenceExecutionId: inst.executionId,
    set: { reason: failure.reason, ended_at: NOW, ack_deadline: null, lease_until: null },
  });
  if (!won) return 'lost';
  events.push({ ...base, type: failure.eventType, message: failure.message, data: { reason: failure.reason, attempt: inst.attempt, final: true } });
  await raiseAlert(conn, {
    kind: 'FINAL_FAILURE',
    severity: 'critical',
    instanceId: inst.instanceId,
    taskName: inst.taskName,
    workerId: inst.workerId,
    message: `${inst.taskName} instance ${inst.instanceId} failed for good after attempt ${inst.attempt}/${inst.maxAttempts} (${failure.reason}): ${failure.message}`.slice(0, 2_000),
  });
  await pauseOnFinalFailure(ctx, conn, inst.instanceId);
  return 'final';
}
