/** Instance states (DESIGN §2) and which of them are final. */

/** Every state an instance can be in, in lifecycle order. */
export const INSTANCE_STATES = [
  'WAITING',
  'PENDING',
  'DISPATCHED',
  'RUNNING',
  'RETRY_WAIT',
  'SUCCESS',
  'FAILED',
  'CANCELED',
] as const;

/**
 * The state of a task instance:
 * - `WAITING`: its upstream (DAG parents) is not satisfied yet;
 * - `PENDING`: due (or waiting for a worker) and not claimed;
 * - `DISPATCHED`: published to a worker, waiting for its ACK;
 * - `RUNNING`: ACKed by the worker;
 * - `RETRY_WAIT`: an attempt failed, the next one is due at `due_at`;
 * - `SUCCESS`, `FAILED`, `CANCELED`: final.
 */
export type InstanceState = (typeof INSTANCE_STATES)[number];

/** States an instance leaves only through a rerun. */
export const FINAL_STATES: readonly InstanceState[] = ['SUCCESS', 'FAILED', 'CANCELED'];

/** States an instance can still leave on its own (everything not final). */
export const ACTIVE_STATES: readonly InstanceState[] = INSTANCE_STATES.filter((s) => !FINAL_STATES.includes(s));

/** True for `SUCCESS`, `FAILED` and `CANCELED`. */
export function isFinal(state: InstanceState): boolean {
  return FINAL_STATES.includes(state);
}

/** Type guard for a string read from storage or the wire. */
export function isInstanceState(value: unknown): value is InstanceState {
  return typeof value === 'string' && (INSTANCE_STATES as readonly string[]).includes(value);
}
