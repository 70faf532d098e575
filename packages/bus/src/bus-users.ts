/**
 * The RabbitMQ users of worker enrollments (DESIGN R24), made and removed through RabbitMQ's
 * management HTTP API (plugin `rabbitmq_management`, port 15672). Why the management API and not
 * `rabbitmqctl`: admin-api runs in its own container or pod, away from the RabbitMQ nodes and
 * their Erlang cookie; the HTTP API is RabbitMQ's supported remote interface for users and
 * permissions, it answers for the whole cluster from any node, and its login is an ordinary
 * RabbitMQ user with the `administrator` tag that only admin-api holds.
 *
 * RabbitMQ then does the enforcing: it refuses a declare, bind, consume or publish outside the
 * user's permissions (ACCESS_REFUSED) and a publish whose `user_id` is not the connection's user
 * (PRECONDITION_FAILED), so a broker can trust `user_id` on every message it consumes.
 */
import { busUserOf, enrollmentBusPermissions } from '@ax/core';

/** Where the management API is and how admin-api logs in to it. */
export interface BusAdminOptions {
  /** `http(s)://user:password@host:15672` (AX_AMQP_MANAGEMENT_URL). */
  readonly managementUrl: string;
  /** The virtual host of the namespace's exchanges and queues (the path of AX_AMQP_URL; "/" by default). */
  readonly vhost: string;
  /** Per request; the API answers in milliseconds when healthy. */
  readonly timeoutMs?: number;
}

/** The management API answered something other than success (or did not answer). */
export class BusAdminError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
    this.name = 'BusAdminError';
  }
}

/** The vhost named by an `amqp://` URL: its path without the leading "/", decoded; "/" when empty. */
export function vhostOfAmqpUrl(amqpUrl: string): string {
  const path = new URL(amqpUrl).pathname.replace(/^\//, '');
  return path === '' ? '/' : decodeURIComponent(path);
}

/**
 * The management URL to use when `AX_AMQP_MANAGEMENT_URL` is not set: the first AMQP node's host
 * on port 15672 over http, with the AMQP URL's own login (the dev stack's guest).
 */
export function defaultManagementUrl(amqpUrl: string): string {
  const amqp = new URL(amqpUrl);
  const scheme = amqp.protocol === 'amqps:' ? 'https:' : 'http:';
  const login = amqp.username === '' ? 'guest:guest' : `${amqp.username}:${amqp.password}`;
  return `${scheme}//${login}@${amqp.hostname}:${amqp.protocol === 'amqps:' ? 15671 : 15672}`;
}

async function call(options: BusAdminOptions, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const base = new URL(options.managementUrl);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`).toString('base64')}`;
  base.username = '';
  base.password = '';
  const url = `${base.origin}${base.pathname.replace(/\/$/, '')}/api${path}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { authorization: auth, 'content-type': 'application/json', 'x-reason': 'ax: worker enrollment revoked' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
  } catch (err) {
    throw new BusAdminError(`RabbitMQ management API at ${base.origin} did not answer ${method} ${path}: ${(err as Error).message}`, null);
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, json };
}

function failed(what: string, status: number, json: unknown): BusAdminError {
  const reason = typeof json === 'object' && json !== null && 'reason' in json ? String(json.reason) : JSON.stringify(json);
  return new BusAdminError(`RabbitMQ management API refused to ${what}: ${status} ${reason}`, status);
}

const enc = encodeURIComponent;

/**
 * Creates (or resets) the RabbitMQ user of an enrollment with `password` and its R24 permissions
 * on the namespace's vhost. Idempotent: a retry after a partial failure ends in the same state.
 */
export async function putEnrollmentBusUser(options: BusAdminOptions, namespace: string, enrollmentId: string, password: string): Promise<void> {
  const user = busUserOf(namespace, enrollmentId);
  const created = await call(options, 'PUT', `/users/${enc(user)}`, { password, tags: '' });
  if (created.status >= 300) throw failed(`create user ${user}`, created.status, created.json);
  const permitted = await call(options, 'PUT', `/permissions/${enc(options.vhost)}/${enc(user)}`, enrollmentBusPermissions(namespace, enrollmentId));
  if (permitted.status >= 300) throw failed(`set the permissions of ${user}`, permitted.status, permitted.json);
}

/**
 * Deletes an enrollment's RabbitMQ user and closes its open connections, so its workers stop at
 * once (RabbitMQ closes a deleted user's connections itself in current versions; closing them
 * here as well does not depend on it). A user that does not exist is fine: revocation is final
 * and may be retried.
 */
export async function deleteEnrollmentBusUser(options: BusAdminOptions, namespace: string, enrollmentId: string): Promise<void> {
  const user = busUserOf(namespace, enrollmentId);
  const deleted = await call(options, 'DELETE', `/users/${enc(user)}`);
  if (deleted.status >= 300 && deleted.status !== 404) throw failed(`delete user ${user}`, deleted.status, deleted.json);
  await closeConnectionsOf(options, user);
}

/** Closes every connection of `user` (best to call after its user is gone, so none comes back). */
export async function closeConnectionsOf(options: BusAdminOptions, user: string): Promise<number> {
  const listed = await call(options, 'GET', `/connections?columns=name,user`);
  if (listed.status >= 300) throw failed('list connections', listed.status, listed.json);
  const rows = Array.isArray(listed.json) ? (listed.json as Array<{ name?: unknown; user?: unknown }>) : [];
  let closed = 0;
  for (const row of rows) {
    if (row.user !== user || typeof row.name !== 'string') continue;
    const gone = await call(options, 'DELETE', `/connections/${enc(row.name)}`);
    if (gone.status < 300 || gone.status === 404) closed++;
  }
  return closed;
}

/**
 * The names of every RabbitMQ user, in one call (the enrollment logins reconciler compares them
 * with the live enrollments instead of asking user by user).
 */
export async function listBusUserNames(options: BusAdminOptions): Promise<Set<string>> {
  const listed = await call(options, 'GET', '/users?columns=name');
  if (listed.status >= 300) throw failed('list users', listed.status, listed.json);
  const rows = Array.isArray(listed.json) ? (listed.json as Array<{ name?: unknown }>) : [];
  return new Set(rows.flatMap((row) => (typeof row.name === 'string' ? [row.name] : [])));
}

/** True when the management API answers with this login (a start-up check for admin-api). */
export async function busAdminReachable(options: BusAdminOptions): Promise<boolean> {
  try {
    return (await call(options, 'GET', '/whoami')).status === 200;
  } catch {
    return false;
  }
}
