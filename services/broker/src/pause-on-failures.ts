/**
 * `pauseAfterFailures` on the broker side: every final failure (results, lost workers, async
 * deadlines, exhausted ACK re-routes) asks the store whether it made N consecutive failures of
 * its task, in the transaction that wrote FAILED; the store pauses the task with one
 * conditional write and raises the one `TASK_PAUSED` alert (queries/task-pause.ts). The
 * schedulers are told at once (`task-changed`); one that re-reads before the commit still holds
 * the old version, whose slots the version guard refuses (R3) until its next resync.
 */
import { toError } from '@ax/kit';
import { pauseTaskAfterFailures, type Queryable } from '@ax/store';
import type { BrokerContext } from './context.js';

/** Call after `instanceId` became FAILED (final), inside the same transaction. */
export async function pauseOnFinalFailure(ctx: BrokerContext, conn: Queryable, instanceId: string): Promise<void> {
  const paused = await pauseTaskAfterFailures(conn, instanceId);
  if (paused === null) return;
  ctx.logger.warn({ taskName: paused.taskName, instanceId, failures: paused.failures }, 'task paused after consecutive failures (pauseAfterFailures)');
  ctx.redis.publish(ctx.keys.channels.taskChanged, paused.taskName).catch((error: unknown) => {
    ctx.logger.warn({ err: toError(error), taskName: paused.taskName }, 'task-changed not published after a pause (schedulers re-read on their resync)');
  });
}
