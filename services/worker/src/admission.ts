/**
 * Whether a received dispatch item may run (R8, §5, R24): pure, so it is tested with plain
 * numbers. Checked in this order: a team the worker does not serve (enrolled workers), shutting
 * down, clock skewed, ACK deadline (nearly) past.
 */
import { DEFAULT_TEAM, type DispatchItem } from '@ax/core';
import { describeScope, scopeServes, type TeamScope } from './enrollment/bootstrap-answer.js';

/** Margin before the ACK deadline under which a dispatch is refused `EXPIRED` (R8). */
export const ACK_MARGIN_MS = 1_000;

/** The worker's state that admission depends on. */
export interface AdmissionState {
  readonly shuttingDown: boolean;
  readonly skewed: boolean;
  /** Last measured clock offset against Redis `TIME`, ms. */
  readonly offsetMs: number | undefined;
  readonly skewLimitMs: number;
  /**
   * The teams an enrolled worker serves (its enrollment's, narrowed by AX_WORKER_TEAMS): an item
   * of another team is refused, never run (R24). Undefined (an unenrolled worker): not checked.
   */
  readonly teams?: TeamScope;
}

/** Why an item is refused. */
export interface Refusal {
  readonly reason: 'EXPIRED' | 'CLOCK_SKEW' | 'SHUTTING_DOWN';
  readonly detail: string;
}

/** The refusal of an item received at `nowMs` (the worker's own clock), or null to ACK and run it. */
export function refusalFor(item: Pick<DispatchItem, 'ackDeadline'> & Partial<Pick<DispatchItem, 'team'>>, nowMs: number, state: AdmissionState): Refusal | null {
  const team = item.team ?? DEFAULT_TEAM;
  if (state.teams !== undefined && !scopeServes(state.teams, team)) {
    // Re-routed without an attempt, like EXPIRED: the broker gives it to a worker of that team.
    return { reason: 'EXPIRED', detail: `not run: team ${team} is not one this worker serves (${describeScope(state.teams)}; DESIGN R24)` };
  }
  if (state.shuttingDown) return { reason: 'SHUTTING_DOWN', detail: 'the worker is shutting down' };
  if (state.skewed) {
    return { reason: 'CLOCK_SKEW', detail: `clock offset ${state.offsetMs ?? '?'} ms against Redis TIME (limit ${state.skewLimitMs} ms)` };
  }
  if (nowMs > Date.parse(item.ackDeadline) - ACK_MARGIN_MS) {
    return { reason: 'EXPIRED', detail: `received at ${new Date(nowMs).toISOString()}, ACK deadline ${item.ackDeadline} (margin ${ACK_MARGIN_MS} ms)` };
  }
  return null;
}
