/**
 * Attribution of worker replies (DESIGN R24, ENROLLMENT-CONTRACT point 4): which RabbitMQ user
 * may speak for an execution. RabbitMQ validates a message's `user_id` (a publisher cannot name
 * another user), so the broker compares it with the enrollment of the worker the execution was
 * dispatched to:
 *
 * - an execution of an enrolled worker (`<enrollment id>.<local id>`): only that enrollment's
 *   user (`busUserOf(ns, enrollment)`);
 * - an execution of an unenrolled worker: a message without `user_id` or from a user that is not
 *   an enrollment's (the service logins; unenrolled workers keep working, contract point 6);
 * - a heartbeat: as an execution of the worker it names.
 *
 * An enrollment user that omits `user_id` is indistinguishable from a legacy unenrolled worker,
 * so it can still name an unenrolled worker's execution (whose id it would have to know) until
 * every publisher stamps its user; it can never speak for an enrolled worker's.
 */
import { busUserOf, enrollmentOfWorkerId } from './enrollment.js';

/** `<ns>.enr-<12>`: how every enrollment user is spelled (any namespace). */
const ENROLLMENT_USER = /\.enr-[a-z0-9]{12}$/;

/** True when `userId` is the RabbitMQ user of a worker enrollment (of any namespace). */
export function isEnrollmentUser(userId: string | undefined): boolean {
  return userId !== undefined && ENROLLMENT_USER.test(userId);
}

/**
 * True when a message whose validated `user_id` is `sender` (undefined: none) may speak for an
 * execution dispatched to `workerId` (or a heartbeat of `workerId`) in namespace `namespace`.
 */
export function isAttributed(namespace: string, sender: string | undefined, workerId: string): boolean {
  const enrollment = enrollmentOfWorkerId(workerId);
  if (enrollment !== null) return sender === busUserOf(namespace, enrollment);
  return !isEnrollmentUser(sender);
}

/**
 * True when `sender` may relay a business's report (a result with origin `report`, R15): only a
 * service login (admin-api), never an enrollment user, whatever worker the execution ran on.
 */
export function mayRelayReport(sender: string | undefined): boolean {
  return !isEnrollmentUser(sender);
}
