/**
 * Why an instance waits (ADMIN-API.md "Waiting instances", #45): the sentence the console shows
 * next to the reason, and what an operator can do about it (docs/runbook.md "An instance stays
 * PENDING" says the same at length). Pure, so it is unit-tested without a browser.
 */
import type { Instance } from './types';

/** The `waiting` of an instance resource. */
export type Waiting = NonNullable<Instance['waiting']>;

/** What to do, per reason: one short hint. */
export const WAITING_HINTS: Readonly<Record<Waiting['reason'], string>> = {
  SERIAL_BUSY: 'An earlier run of this task still runs (block serial/queue). It starts when that one ends; cancel the earlier run if it hangs.',
  QUEUE_POSITION: 'It waits its turn: an earlier slot of its queue, or free worker slots. Add workers or slots if the wait keeps growing.',
  BATCH_CONCURRENCY: 'Its rerun batch runs as many as its concurrency allows; it starts when one of them ends.',
  TEAM_LIMIT: "Its team has its maxRunning instances running. Raise the team's maxRunning or wait for runs to end.",
  NO_WORKER: 'No live worker serves its team with all of its tags. Start or enroll a worker with them, or change the task\'s tags.',
  BACKLOG_HOLD: 'Held below the backlog deferral priority while more important work fills its pool. It starts when the hold clears.',
  RATE_LIMIT: 'Dispatch is rate-limited (AX_DISPATCH_RATE). Raise the limit if the backlog keeps growing.',
  DISPATCH_PAUSED: 'An admin paused all dispatching. Resume it on the Dashboard (admin).',
  UPSTREAM: 'It waits for its upstream tasks of the same business date (DAG).',
};

/** One line for a table cell's tooltip: `NO_WORKER since … — no live worker …`. */
export function waitingTitle(w: Waiting): string {
  return `${w.reason} since ${w.since}: ${w.message}`;
}
