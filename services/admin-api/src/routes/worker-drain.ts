/**
 * Drain and undrain (ADMIN-API.md "Workers"): stop or resume routing new work to one live
 * worker. The mark names the process it drained (@ax/redis `setDrained`), so a drain ends when
 * that worker process exits: the runbook's "drain, then restart" brings the worker back serving.
 */
import { z } from 'zod';
import { setDrained } from '@ax/redis';
import { audit } from '../audit.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { idParams } from '../schemas.js';
import { workerToActOn } from '../worker-visibility.js';
import { writeTransaction } from '../write-transaction.js';
import type { AppDeps } from '../deps.js';

const ACTIONS = [
  { action: 'drain', state: 'draining', summary: 'Stop routing new work to a worker (until undrained, or until that worker process exits)' },
  { action: 'undrain', state: 'active', summary: 'Route new work to a drained worker again' },
] as const;

/** Tells brokers at once (they also re-read the registry every few seconds). */
async function announce(deps: AppDeps, workerId: string): Promise<void> {
  try {
    await deps.redis.publish(deps.keys.channels.workersChanged, workerId);
  } catch {
    deps.logger.warn({ workerId }, 'could not publish workers-changed');
  }
}

export const workerDrainRoutes: RouteSpec[] = ACTIONS.map(({ action, state, summary }) =>
  defineRoute<{ id: string }>({
    method: 'post',
    path: `/api/v1/workers/{id}/${action}`,
    access: 'operator',
    tag: 'workers',
    summary,
    description:
      'A worker that serves every team needs a token of every team ("*"); one enrolled for (or narrowed to) some teams needs a token that covers each of them. Undraining a worker that is not drained answers 200 all the same.',
    params: idParams,
    responses: {
      200: { description: `the worker is ${state}`, schema: z.object({ id: z.string(), state: z.literal(state) }) },
      403: { description: '`FORBIDDEN`: the role is too low, or the token does not cover every team the worker serves' },
      404: { description: 'no such live worker (or one the token does not see)' },
    },
    handler: async ({ params, deps, principal }) => {
      const { worker } = await workerToActOn(deps, principal, params.id, action === 'drain' ? 'draining' : 'undraining');
      const wasDraining = worker.draining === true;
      await setDrained(deps.redis, deps.keys, params.id, action === 'drain' ? worker.startedAt : null);
      await writeTransaction(deps.pool, (tx) =>
        audit(tx, principal, {
          action: `worker.${action}`,
          target: `worker:${params.id}`,
          team: null,
          before: { state: wasDraining ? 'draining' : 'active' },
          after: { state, process: worker.startedAt },
        }),
      );
      await announce(deps, params.id);
      return { status: 200, body: { id: params.id, state } };
    },
  }),
);
