/** Lifecycle event types appended to `event_log` (DESIGN §2; ADMIN-API "Shapes of events"). */

/** Every event type, with when it is written. */
export const EVENT_TYPE_DESCRIPTIONS = {
  CREATED: 'the instance row was inserted (schedule, manual, dependency, rerun or backfill)',
  DEPS_MET: 'WAITING → PENDING: every parent edge is satisfied',
  DISPATCHED: 'published to a worker, ACK deadline set',
  RETURNED: 'the dispatch was unroutable and came back; re-routed without counting (R8)',
  ACKED: 'the worker ACKed the dispatch',
  ACK_TIMEOUT: 'no ACK by the deadline',
  REROUTED: 'DISPATCHED → PENDING for another worker (ACK timeout or refusal)',
  REFUSED: 'the worker refused the dispatch (EXPIRED, CLOCK_SKEW, SHUTTING_DOWN, DUPLICATE)',
  STARTED: 'the worker started the job',
  ASYNC_ACCEPTED: 'an HTTP job answered 202; the business reports later (R15)',
  SUCCEEDED: 'the attempt succeeded',
  FAILED: 'the attempt failed',
  TIMED_OUT: 'the attempt ran past its timeout',
  RETRY_SCHEDULED: 'a retry is due after the backoff delay',
  RETRY_DUE: 'RETRY_WAIT → PENDING',
  LOST_WORKER: 'the worker running it was declared lost (R14)',
  WORKER_RESTART: 'the worker restarted while it ran (R13)',
  CLOCK_SKEW: 'a clock skew refusal or detection',
  NO_WORKER: 'no eligible worker; the instance keeps waiting (R11)',
  TEAM_LIMIT: "its team's maxRunning instances are DISPATCHED or RUNNING; the instance keeps waiting (DESIGN §11)",
  DEFERRED: "held back below AX_BACKLOG_DEFER_BELOW_PRIORITY while its worker pool's backlog holds; keeps waiting PENDING (one per instance per hold; data.pool, data.since)",
  WAITING:
    "a due instance that is not dispatched is held for a new reason (one per change of reason, written by the brokers' backlog scan; data.reason, data.message; ADMIN-API \"Waiting instances\")",
  CANCEL_REQUESTED: 'a cancel was sent to the worker running it',
  CANCELED: 'the instance was canceled',
  RERUN_REQUESTED: 'a final instance was moved back for a rerun',
  SKIPPED: 'a missed slot was skipped by the misfire policy',
  COALESCED: 'a fire was merged into a waiting instance (block serial)',
  FENCED: 'a result or ACK of a superseded execution was recorded and not applied (§9, R17)',
  ADOPTED: 'a late SUCCESS of a superseded execution was adopted (R17)',
  LONG_RUNNING: 'the attempt passed 80 % of its timeout',
  SLA_MISSED: "not started / not finished within its task's sla after its slot (one per instance; data.reason START|FINISH)",
} as const;

/** An event type. */
export type EventType = keyof typeof EVENT_TYPE_DESCRIPTIONS;

/** Every event type, for enums and checks. */
export const EVENT_TYPES = Object.keys(EVENT_TYPE_DESCRIPTIONS) as EventType[];

/** Type guard for an event type read from storage or the wire. */
export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && Object.hasOwn(EVENT_TYPE_DESCRIPTIONS, value);
}
