/** Reason labels stored in `task_instance.reason` and carried by events (DESIGN §2). */

/** Every reason label, with what it means. */
export const REASON_DESCRIPTIONS = {
  TIMEOUT: 'the attempt ran past timeoutSeconds and was killed',
  JOB_FAILED: 'the job itself reported failure (non-zero exit, HTTP error or success:false)',
  LOST_WORKER: 'the worker running it stopped heartbeating and no longer lists it (R14)',
  WORKER_RESTART: 'the worker restarted while it ran and killed what survived (R13)',
  CLOCK_SKEW: "the worker refused it because its clock is off (R8, R16)",
  EXPIRED: 'the worker received it after its ACK deadline and dropped it (R8)',
  SHUTTING_DOWN: 'the worker refused it because it is stopping',
  ACK_TIMEOUT: 'no worker ACKed it within the deadline, re-routes exhausted (R11)',
  NO_WORKER: 'no eligible worker (the instance waits, it is not failed; R11)',
  UPSTREAM_FAILED: 'a parent instance failed under ALL_SUCCESS (§3)',
  UPSTREAM_MISSING: 'the parents did not finish within dependencyTimeoutSeconds (R19)',
  TOO_LATE: 'claimed later than maxLatenessSeconds after its slot (R5)',
  DISCARDED: 'block strategy discard: an earlier instance was still running (R4)',
  COVERED: 'block strategy cover: a newer instance replaced this running one (R4)',
  SUPERSEDED: 'a late SUCCESS of an earlier execution was adopted instead (R17)',
  CANCELED_BY_USER: 'canceled through the admin API',
  TASK_DELETED: 'its task was deleted before it ran',
} as const;

/** A reason label. */
export type Reason = keyof typeof REASON_DESCRIPTIONS;

/** Every reason label, for enums and checks. */
export const REASONS = Object.keys(REASON_DESCRIPTIONS) as Reason[];

/** Type guard for a label read from storage or the wire. */
export function isReason(value: unknown): value is Reason {
  return typeof value === 'string' && Object.hasOwn(REASON_DESCRIPTIONS, value);
}
