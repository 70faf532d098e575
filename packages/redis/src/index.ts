// @ax/redis: what ax keeps in Redis besides plain keys — the worker registry and its leases.
export {
  isDrained,
  publishRegistration,
  readRegistration,
  readRegistry,
  removeRegistration,
  setDrained,
} from './registry.js';
export type { WorkerRegistration } from './registry.js';
