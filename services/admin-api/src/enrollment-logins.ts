/**
 * The RabbitMQ and Redis users of a worker enrollment as admin-api makes and removes them
 * (DESIGN R24): the calls themselves are @ax/bus `putEnrollmentBusUser` / `deleteEnrollmentBusUser`
 * and @ax/redis `putEnrollmentRedisUser` / `deleteEnrollmentRedisUser`; this file adds what the
 * routes need around them — which server failed (the answer names it), and an undo that removes
 * whatever a failed create may have made, so nothing is left half-created.
 *
 * Passwords are derived (`enrollmentLoginPassword`), never stored, and never put in an error or
 * a log line: errors carry the server and the engine's reason only.
 */
import { enrollmentLoginPassword, redisUserOf, toError } from '@ax/core';
import { deleteEnrollmentBusUser, putEnrollmentBusUser, type BusAdminOptions } from '@ax/bus';
import { deleteEnrollmentRedisUser, putEnrollmentRedisUser } from '@ax/redis';
import type { AppDeps } from './deps.js';
import { ApiError } from './errors.js';

/** The server a login lives on. */
export type LoginServer = 'rabbitmq' | 'redis';

const SERVER_NAME: Record<LoginServer, string> = { rabbitmq: 'RabbitMQ', redis: 'Redis' };

/** A step on one server failed. */
export class LoginServerError extends Error {
  constructor(
    readonly server: LoginServer,
    readonly doing: string,
    cause: Error,
  ) {
    super(`${SERVER_NAME[server]} could not ${doing}: ${cause.message}`, { cause });
    this.name = 'LoginServerError';
  }
}

/** Seconds a caller is asked to wait before sending a request again after a login server failed. */
export const LOGIN_SERVER_RETRY_AFTER_SECONDS = 5;

/** 503 `UNAVAILABLE` naming the server (`details.server`) and what became of the request, with `Retry-After`. */
export function loginServerUnavailable(err: LoginServerError, outcome: string): ApiError {
  return new ApiError(503, 'UNAVAILABLE', `${err.message}; ${outcome}`, { server: err.server, reason: 'LOGIN_SERVER' }, { 'retry-after': String(LOGIN_SERVER_RETRY_AFTER_SECONDS) });
}

/** The management API of RabbitMQ admin-api uses, or 503 when it has none. */
export function busAdminOf(deps: AppDeps): BusAdminOptions {
  if (deps.busAdmin === undefined) throw new ApiError(503, 'UNAVAILABLE', 'the RabbitMQ management API is not configured (AX_AMQP_MANAGEMENT_URL): worker enrollments cannot be made or revoked', { server: 'rabbitmq' });
  return deps.busAdmin;
}

async function step<T>(server: LoginServer, doing: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw new LoginServerError(server, doing, toError(err));
  }
}

/** Which users a create has tried to make (a timed-out call may have made one). */
export interface Attempted {
  bus: boolean;
  redis: boolean;
}

/**
 * Makes (or resets) both users of enrollment `id`, RabbitMQ first; marks each in `attempted`
 * before its call. @throws LoginServerError naming the server that failed.
 */
export async function putEnrollmentLogins(deps: AppDeps, masterSecret: string, id: string, attempted: Attempted): Promise<void> {
  const ns = deps.keys.namespace;
  const busAdmin = busAdminOf(deps);
  attempted.bus = true;
  await step('rabbitmq', `create the RabbitMQ user of enrollment ${id}`, () => putEnrollmentBusUser(busAdmin, ns, id, enrollmentLoginPassword(masterSecret, 'amqp', ns, id)));
  attempted.redis = true;
  await step('redis', `create the Redis ACL user of enrollment ${id}`, () => putEnrollmentRedisUser(deps.redis, deps.keys, id, enrollmentLoginPassword(masterSecret, 'redis', ns, id)));
}

/**
 * Removes the users a failed create may have made. Never throws: a removal that fails is logged
 * at error with the enrollment id and server (the user then needs removing by hand; its password
 * was never shown to anyone).
 */
export async function undoEnrollmentLogins(deps: AppDeps, id: string, attempted: Attempted): Promise<void> {
  if (attempted.redis) {
    await deleteEnrollmentRedisUser(deps.redis, deps.keys, id).catch((err: unknown) =>
      deps.logger.error({ err: toError(err), enrollmentId: id, server: 'redis' }, 'a failed worker enrollment left its Redis ACL user behind; delete it by hand (ACL DELUSER)'),
    );
  }
  if (attempted.bus && deps.busAdmin !== undefined) {
    await deleteEnrollmentBusUser(deps.busAdmin, deps.keys.namespace, id).catch((err: unknown) =>
      deps.logger.error({ err: toError(err), enrollmentId: id, server: 'rabbitmq' }, 'a failed worker enrollment left its RabbitMQ user behind; delete it by hand'),
    );
  }
}

/**
 * Revokes both users of enrollment `id`: the RabbitMQ user is deleted and its connections closed;
 * the Redis user is deleted (Redis disconnects it) with its workers' registry entries, so brokers
 * find those workers gone. Both are tried even when the first fails; returns the worker ids
 * removed from the registry. Idempotent. @throws LoginServerError naming the first server that failed.
 */
export async function deleteEnrollmentLogins(deps: AppDeps, id: string): Promise<string[]> {
  const busAdmin = busAdminOf(deps);
  const results = await Promise.allSettled([
    step('rabbitmq', `delete the RabbitMQ user of enrollment ${id}`, () => deleteEnrollmentBusUser(busAdmin, deps.keys.namespace, id)),
    step('redis', `delete the Redis ACL user of enrollment ${id}`, () => deleteEnrollmentRedisUser(deps.redis, deps.keys, id)),
  ]);
  for (const r of results) if (r.status === 'rejected') throw r.reason as LoginServerError;
  const removed = results[1];
  return removed.status === 'fulfilled' ? removed.value : [];
}

/**
 * Makes the Redis user of live enrollment `id` again when the server admin-api is connected to
 * does not have it: Redis keeps ACL users in memory, per server (not in RDB/AOF, not replicated),
 * so a restart or a failover to a replica loses them. Called by the bootstrap, which workers poll,
 * and by the reconciler (enrollment-logins-reconciler.ts) when Redis is back and periodically. Answers whether it made the user. Never throws: a failure
 * is logged (without any password) and the bootstrap answers anyway.
 */
export async function restoreEnrollmentRedisUser(deps: Pick<AppDeps, 'redis' | 'keys' | 'logger'>, masterSecret: string, id: string): Promise<boolean> {
  try {
    if ((await deps.redis.call('ACL', 'GETUSER', redisUserOf(deps.keys.namespace, id))) !== null) return false;
    await putEnrollmentRedisUser(deps.redis, deps.keys, id, enrollmentLoginPassword(masterSecret, 'redis', deps.keys.namespace, id));
    deps.logger.warn({ enrollmentId: id }, 'the Redis ACL user of a live worker enrollment was missing (a Redis restart or failover); made it again');
    return true;
  } catch (err) {
    deps.logger.warn({ err: toError(err), enrollmentId: id, server: 'redis' }, 'could not check or restore the Redis ACL user of a worker enrollment');
    return false;
  }
}
