/**
 * Puts the RabbitMQ and Redis users of every live worker enrollment back when a server lost them
 * (DESIGN R24, issue #44). Redis keeps ACL users in memory, per server: a Redis restarted empty
 * or a Sentinel failover to a replica that never had them loses every enrollment's login, and
 * the enrolled workers then fail to authenticate on each reconnect. A RabbitMQ node restored
 * empty (a new cluster, a reset) loses the enrollment users the same way.
 *
 * admin-api holds the master secret the passwords derive from and the rights to make users, so it
 * runs this: at start, whenever its own Redis client becomes ready again (a restart or failover
 * is seen at once; with Sentinel the client is then on the new primary, where the users must be)
 * and every `intervalMs` (AX_ENROLLMENT_RECONCILE_INTERVAL_MS) for what a reconnect does not show,
 * such as a RabbitMQ node emptied behind its management API. A pass is cheap: one MySQL query,
 * one `ACL GETUSER` per live enrollment and one management API listing of users.
 */
import { listBusUserNames, putEnrollmentBusUser } from '@ax/bus';
import { busUserOf, enrollmentLoginPassword, toError } from '@ax/core';
import { deleteEnrollmentRedisUser } from '@ax/redis';
import { getEnrollment, listEnrollments } from '@ax/store';
import type { AppDeps } from './deps.js';
import { restoreEnrollmentRedisUser } from './enrollment-logins.js';

/** Default of AX_ENROLLMENT_RECONCILE_INTERVAL_MS. */
export const DEFAULT_ENROLLMENT_RECONCILE_INTERVAL_MS = 10_000;

/** What one pass made again. */
export interface ReconcilePass {
  readonly live: number;
  readonly redisRestored: readonly string[];
  readonly busRestored: readonly string[];
}

export interface EnrollmentLoginsReconciler {
  /** One pass now (passes never overlap: a call during a pass waits for the next one). */
  runOnce(): Promise<ReconcilePass>;
  stop(): Promise<void>;
}

type ReconcilerDeps = Pick<AppDeps, 'pool' | 'redis' | 'keys' | 'logger' | 'busAdmin'>;

/**
 * Starts the reconciler: a pass now, on each `ready` of `deps.redis`, and every `intervalMs`
 * (0 = only at start and on Redis reconnects). Never throws; a failing pass is logged at warn
 * once per distinct reason and tried again at the next trigger.
 */
export function startEnrollmentLoginsReconciler(deps: ReconcilerDeps, masterSecret: string, intervalMs: number): EnrollmentLoginsReconciler {
  const log = deps.logger.child({ component: 'enrollment-logins-reconciler' });
  const ns = deps.keys.namespace;
  let running: Promise<ReconcilePass> | undefined;
  /** The one pass that follows the running one, shared by every trigger that came during it. */
  let next: Promise<ReconcilePass> | undefined;
  let stopped = false;
  let lastProblem = '';

  const warnOnce = (problem: string, err: Error): void => {
    if (problem === lastProblem) return;
    lastProblem = problem;
    log.warn({ err }, problem);
  };

  /** Undoes a user just made for an enrollment a revoke marked meanwhile (the revoke deletes users after marking the row). */
  const stillLive = async (id: string): Promise<boolean> => {
    const now = await getEnrollment(deps.pool, id);
    return now !== null && now.revokedAt === null;
  };

  const pass = async (): Promise<ReconcilePass> => {
    const live = await listEnrollments(deps.pool);
    const redisRestored: string[] = [];
    for (const e of live) {
      if (!(await restoreEnrollmentRedisUser(deps, masterSecret, e.id))) continue;
      if (await stillLive(e.id)) redisRestored.push(e.id);
      else await deleteEnrollmentRedisUser(deps.redis, deps.keys, e.id);
    }
    const busRestored: string[] = [];
    if (deps.busAdmin !== undefined && live.length > 0) {
      const existing = await listBusUserNames(deps.busAdmin);
      for (const e of live) {
        if (existing.has(busUserOf(ns, e.id)) || !(await stillLive(e.id))) continue;
        await putEnrollmentBusUser(deps.busAdmin, ns, e.id, enrollmentLoginPassword(masterSecret, 'amqp', ns, e.id));
        busRestored.push(e.id);
        log.warn({ enrollmentId: e.id }, 'the RabbitMQ user of a live worker enrollment was missing (a node restored empty?); made it again');
      }
    }
    lastProblem = '';
    return { live: live.length, redisRestored, busRestored };
  };

  const runOnce = (): Promise<ReconcilePass> => {
    if (running === undefined) {
      running = pass().finally(() => {
        running = undefined;
      });
      return running;
    }
    next ??= running
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return runOnce();
      });
    return next;
  };

  const trigger = async (): Promise<void> => {
    if (stopped) return;
    try {
      await runOnce();
    } catch (err) {
      const error = toError(err);
      warnOnce(`could not check the logins of worker enrollments (tried again at the next interval or Redis reconnect): ${error.message}`, error);
    }
  };

  const onReady = (): void => void trigger();
  deps.redis.on('ready', onReady);
  const timer = intervalMs > 0 ? setInterval(() => void trigger(), intervalMs) : undefined;
  timer?.unref();
  if (deps.redis.status === 'ready') void trigger();

  return {
    runOnce,
    async stop() {
      stopped = true;
      if (timer !== undefined) clearInterval(timer);
      deps.redis.off('ready', onReady);
      await running?.catch(() => undefined);
    },
  };
}
