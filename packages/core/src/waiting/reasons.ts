/**
 * Why a due instance that is not dispatched waits (ADMIN-API.md "Waiting instances", DESIGN
 * R23). The enum is part of the API contract: tools outside the project switch on it.
 */

/** Every reason, in the contract's order. */
export const WAITING_REASONS = [
  'SERIAL_BUSY',
  'QUEUE_POSITION',
  'BATCH_CONCURRENCY',
  'TEAM_LIMIT',
  'NO_WORKER',
  'BACKLOG_HOLD',
  'RATE_LIMIT',
  'DISPATCH_PAUSED',
  'UPSTREAM',
] as const;

/** One reason. */
export type WaitingReason = (typeof WAITING_REASONS)[number];

/** True for a string of the enum (a stored value is checked before it is shown). */
export function isWaitingReason(value: unknown): value is WaitingReason {
  return typeof value === 'string' && (WAITING_REASONS as readonly string[]).includes(value);
}

/** What a held instance says about itself: the reason and one sentence naming the concrete cause. */
export interface WaitingVerdict {
  readonly reason: WaitingReason;
  readonly message: string;
}

/**
 * A held instance due for longer than this counts as late in `GET /status` and on the console's
 * dashboard: one minute is past any claim round, scan period or retry of a healthy stack, so a
 * late run always has a cause an operator should read (its `waiting.reason`).
 */
export const LATE_AFTER_SECONDS = 60;
