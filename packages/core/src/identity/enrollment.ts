/**
 * Worker enrollments (ADMIN-API.md "Workers", DESIGN R24/R25): the one place that says how an
 * enrollment's names, logins and permissions are spelled. admin-api creates the logins from
 * these, the worker connects with what admin-api hands it, the broker attributes messages with
 * them: every side reads the same functions, so none can drift.
 *
 * - An enrollment id is `enr-` + 12 of `[a-z0-9]`; it never changes and is never reused.
 * - Its credential is `axw_<id>_<43 chars base64url>`; only its SHA-256 is stored.
 * - A worker of the enrollment has the id `<enrollment id>.<local id>` (`AX_WORKER_ID` is the
 *   local part), so its queues (`<ns>.worker.<workerId>…`) and Redis keys (`<ns>:worker:<workerId>`)
 *   start with the enrollment id, and RabbitMQ permissions and Redis ACL key patterns can name
 *   exactly them. The broker knows a message's expected sender from the execution's worker id.
 * - Its RabbitMQ user and its Redis ACL user are both `<ns>.<enrollment id>`; their passwords are
 *   derived from the master secret (admin-api alone holds it), so nothing stores them and
 *   admin-api can hand them out again to every replica of the enrollment.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';

/** `enr-` + 12 lower-case letters or digits. */
export const ENROLLMENT_ID_PATTERN = /^enr-[a-z0-9]{12}$/;
/** An enrollment's name: what an operator calls it (unique among live enrollments). */
export const ENROLLMENT_NAME_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
/** `axw_<id>_<secret>`: the id in clear (for logs and lookup errors), the secret base64url. */
export const WORKER_CREDENTIAL_PATTERN = /^axw_(enr-[a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A new random enrollment id. */
export function newEnrollmentId(): string {
  const bytes = randomBytes(12);
  let id = 'enr-';
  for (const b of bytes) id += ID_ALPHABET[b % ID_ALPHABET.length];
  return id;
}

/** A new credential for enrollment `id` (shown once to its creator). */
export function newWorkerCredential(id: string): string {
  if (!ENROLLMENT_ID_PATTERN.test(id)) throw new RangeError(`invalid enrollment id ${JSON.stringify(id)}`);
  return `axw_${id}_${randomBytes(32).toString('base64url')}`;
}

/** The enrollment id a credential names, or null when it is not shaped like a credential. */
export function enrollmentOfCredential(credential: string): string | null {
  return WORKER_CREDENTIAL_PATTERN.exec(credential.trim())?.[1] ?? null;
}

/** SHA-256 (hex) of a credential: what the database keeps. */
export function credentialHash(credential: string): string {
  return createHash('sha256').update(credential.trim()).digest('hex');
}

/** The id of local worker `localId` of enrollment `enrollmentId`: `<enrollment id>.<local id>`. */
export function enrolledWorkerId(enrollmentId: string, localId: string): string {
  if (!ENROLLMENT_ID_PATTERN.test(enrollmentId)) throw new RangeError(`invalid enrollment id ${JSON.stringify(enrollmentId)}`);
  return `${enrollmentId}.${localId}`;
}

/** The enrollment a worker id belongs to, or null for a worker id of no enrollment. */
export function enrollmentOfWorkerId(workerId: string): string | null {
  const dot = workerId.indexOf('.');
  if (dot !== 16) return null; // 'enr-' + 12
  const id = workerId.slice(0, dot);
  return ENROLLMENT_ID_PATTERN.test(id) && workerId.length > dot + 1 ? id : null;
}

/** The RabbitMQ user of an enrollment in namespace `ns`: `<ns>.<id>`. */
export function busUserOf(namespace: string, enrollmentId: string): string {
  return `${namespace}.${enrollmentId}`;
}

/** The Redis ACL user of an enrollment in namespace `ns`: `<ns>.<id>`. */
export function redisUserOf(namespace: string, enrollmentId: string): string {
  return `${namespace}.${enrollmentId}`;
}

/** Which login a derived password is for. */
export type EnrollmentLogin = 'amqp' | 'redis';

/**
 * The password of an enrollment's RabbitMQ or Redis user: base64url of
 * HMAC-SHA256(master secret, "ax-enrollment-login\n<kind>\n<ns>\n<id>"). Derived, so nothing
 * stores it; a revoked enrollment's user is deleted, and its id is never reused.
 */
export function enrollmentLoginPassword(masterSecret: string, kind: EnrollmentLogin, namespace: string, enrollmentId: string): string {
  return createHmac('sha256', masterSecret).update(`ax-enrollment-login\n${kind}\n${namespace}\n${enrollmentId}`).digest('base64url');
}

/** Escapes a literal for a regular expression (RabbitMQ permission patterns are PCRE-like). */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** RabbitMQ permissions (configure, write, read regular expressions) of a vhost for one user. */
export interface BusPermissions {
  readonly configure: string;
  readonly write: string;
  readonly read: string;
}

/**
 * The permissions of an enrollment's RabbitMQ user (R24): declare, read and delete only its own
 * workers' queues (`<ns>.worker.<id>.…`); publish only to the events and logs exchanges (and
 * the dead-letter exchange, which RabbitMQ asks of whoever declares a queue that dead-letters
 * there). It cannot read any exchange, so it cannot bind a queue to the dispatch, events or logs
 * exchange; it cannot publish to the dispatch exchange or the default exchange, so it cannot
 * send a dispatch. Brokers send dispatches by queue name on the default exchange, which needs
 * no binding made by the worker.
 */
export function enrollmentBusPermissions(namespace: string, enrollmentId: string): BusPermissions {
  const ns = literal(namespace);
  const own = `${ns}\\.worker\\.${literal(enrollmentId)}\\..+`;
  return {
    configure: `^${own}$`,
    write: `^(${own}|${ns}\\.events|${ns}\\.logs|${ns}\\.dlx)$`,
    read: `^${own}$`,
  };
}
