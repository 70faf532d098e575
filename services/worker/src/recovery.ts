/**
 * Start-up after a crash (R13): executions the outbox still holds as received, acked or
 * running were interrupted. For running ones, a surviving process group of our own (checked by
 * the leader's recorded start time, so a reused pid is never touched) is killed BEFORE the
 * execution is reported `WORKER_RESTART`, so the broker's retry never runs beside the old copy.
 * Accepted-async executions (HTTP 202, R15) are finished and never reported this way.
 */
import type { Logger } from '@ax/kit';
import type { Outbox } from './outbox.js';
import { isOwnGroup, terminateGroup } from './process-group.js';
import { resultItem } from './result-items.js';

/** Kills survivors and queues `WORKER_RESTART` results; returns how many executions it reported. */
export async function recoverAfterRestart(outbox: Outbox, logger: Logger, killGraceMs = 2_000): Promise<number> {
  const interrupted = [...outbox.dispatchesIn('running'), ...outbox.dispatchesIn('acked'), ...outbox.dispatchesIn('received')];
  let reported = 0;
  for (const row of interrupted) {
    if (row.accepted) continue;
    const log = logger.child({ executionId: row.executionId, instanceId: row.instanceId, taskName: row.item.taskName });
    let error = row.state === 'running' ? 'the worker restarted while the job ran' : 'the worker restarted before the job started';
    if (row.pgid !== null && row.procStart !== null) {
      if (isOwnGroup(row.pgid, row.procStart)) {
        log.warn({ pgid: row.pgid }, 'killing the surviving process group of an interrupted job (R13)');
        await terminateGroup(row.pgid, killGraceMs);
        error += `; its surviving process group ${row.pgid} was killed`;
      } else {
        log.info({ pgid: row.pgid }, 'the process group of the interrupted job is gone');
      }
    }
    const now = Date.now();
    outbox.finish(row.executionId, 'done', 'result', resultItem(row.item, { outcome: 'WORKER_RESTART', exitCode: null, error }, undefined, now), now);
    reported += 1;
  }
  return reported;
}
