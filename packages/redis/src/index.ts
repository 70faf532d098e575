// @ax/redis: what ax keeps in Redis besides plain keys — the worker registry and its leases.
export {
  isDrained,
  publishRegistration,
  readRegistration,
  readRegistry,
  removeRegistration,
  setDrained,
  workerSetOf,
} from './registry.js';
export { deleteEnrollmentRedisUser, enrollmentAclRules, putEnrollmentRedisUser } from './acl-users.js';
export type { WorkerRegistration } from './registry.js';
