/**
 * Dependency timeout (R19): a `WAITING` instance whose due time is more than its task's
 * `dependencyTimeoutSeconds` ago is canceled with `UPSTREAM_MISSING` and an alert is raised
 * (`alert_log`, kind `UPSTREAM_MISSING`, one per instance). A parent that was disabled,
 * coalesced or discarded therefore never leaves a child waiting forever. The predicate is a
 * column comparison on the database clock (R6/R7): the scheduler's own clock decides nothing.
 * Instances are matched to their task by `task_id`; one whose task was deleted waits
 * `AX_DEPENDENCY_TIMEOUT_S`.
 */
import { raiseAlert, waitingPastDependencyTimeout } from '@ax/store';
import type { EngineContext } from './context.js';
import { transition } from './dag.js';

/** Cancels timed-out WAITING instances; returns how many. */
export async function cancelTimedOutWaiting(ctx: EngineContext): Promise<number> {
  const rows = await waitingPastDependencyTimeout(ctx.pool, ctx.config.dependencyTimeoutSeconds, 500);
  let canceled = 0;
  for (const r of rows) {
    const id = r.id;
    const message = `waited more than ${r.dependencyTimeoutSeconds} s for its upstream tasks`;
    if (!(await transition(ctx, id, 'CANCELED', 'UPSTREAM_MISSING', 'CANCELED', message))) continue;
    canceled += 1;
    await raiseAlert(ctx.pool, {
      kind: 'UPSTREAM_MISSING',
      severity: 'warning',
      instanceId: id,
      taskName: r.taskName,
      message: `instance ${id} of ${r.taskName} ${message}; canceled with UPSTREAM_MISSING`,
    });
    ctx.logger.warn({ taskName: r.taskName, instanceId: id }, 'dependency timeout: UPSTREAM_MISSING');
  }
  if (canceled > 0) ctx.metrics.dag.inc({ kind: 'upstream_missing' }, canceled);
  return canceled;
}
