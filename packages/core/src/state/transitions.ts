/**
 * The instance state machine as ONE table (DESIGN §2 and §10). Every write of an instance's
 * state is a conditional `UPDATE … WHERE id=? AND state=?` whose (from, to) pair must be in
 * this table; `assertTransition` is the check the store runs before it.
 */
import { IllegalTransitionError } from '../errors.js';
import type { InstanceState } from './states.js';

/** One named transition and the states it may start from. */
export interface TransitionRule {
  /** Stable name, used in logs and tests. */
  readonly name: TransitionName;
  readonly from: readonly InstanceState[];
  readonly to: InstanceState;
  /** When it happens and which rule of DESIGN.md allows it. */
  readonly description: string;
}

/** Names of the transitions. */
export type TransitionName =
  | 'deps_met'
  | 'dispatch'
  | 'ack'
  | 'reroute'
  | 'succeed'
  | 'fail_retry'
  | 'fail_final'
  | 'retry_due'
  | 'cancel'
  | 'rerun'
  | 'rerun_waiting';

/** The transition table. A (from, to) pair not listed here is illegal. */
export const TRANSITIONS: readonly TransitionRule[] = [
  {
    name: 'deps_met',
    from: ['WAITING'],
    to: 'PENDING',
    description: 'every parent edge is satisfied for the biz date (§3, R19)',
  },
  {
    name: 'dispatch',
    from: ['PENDING'],
    to: 'DISPATCHED',
    description: 'claimed by a broker and published to a worker, with an ACK deadline (§4)',
  },
  {
    name: 'ack',
    from: ['DISPATCHED'],
    to: 'RUNNING',
    description: 'the worker ACKed: received, will run (§4)',
  },
  {
    name: 'reroute',
    from: ['DISPATCHED', 'RUNNING'],
    to: 'PENDING',
    description:
      'no ACK by the deadline (re-route, capped), a refusal EXPIRED/CLOCK_SKEW, or an unroutable publish; not an attempt (R8, R16). From RUNNING only by a refusal after the ACK: the worker found at the start that it must not run the job (#23)',
  },
  {
    name: 'succeed',
    from: ['DISPATCHED', 'RUNNING'],
    to: 'SUCCESS',
    description: 'a SUCCESS result of the current execution; results may overtake ACKs (R16)',
  },
  {
    name: 'fail_retry',
    from: ['DISPATCHED', 'RUNNING'],
    to: 'RETRY_WAIT',
    description: 'a failed attempt (failure, TIMEOUT, LOST_WORKER, WORKER_RESTART) with attempts left (§4, R16)',
  },
  {
    name: 'fail_final',
    from: ['DISPATCHED', 'RUNNING'],
    to: 'FAILED',
    description: 'a failed attempt with no attempts left, or re-routes exhausted (ACK_TIMEOUT, R11)',
  },
  {
    name: 'retry_due',
    from: ['RETRY_WAIT'],
    to: 'PENDING',
    description: 'the backoff delay is over (due_at reached on the database clock, R7)',
  },
  {
    name: 'cancel',
    from: ['WAITING', 'PENDING', 'DISPATCHED', 'RUNNING', 'RETRY_WAIT'],
    to: 'CANCELED',
    description:
      'by a user, an upstream failure, block discard/cover, TOO_LATE, UPSTREAM_MISSING; from any non-final state (§2, R4, R5, R19)',
  },
  {
    name: 'rerun',
    from: ['SUCCESS', 'FAILED', 'CANCELED'],
    to: 'PENDING',
    description: 'a rerun of a final instance, with a fresh attempt budget and runNo + 1 (§2, R18)',
  },
  {
    name: 'rerun_waiting',
    from: ['SUCCESS', 'FAILED', 'CANCELED'],
    to: 'WAITING',
    description: 'a downstream instance of a dag rerun waits for its parents again (R20)',
  },
];

const BY_PAIR = new Map<string, TransitionRule>();
for (const rule of TRANSITIONS) {
  for (const from of rule.from) {
    const key = `${from}>${rule.to}`;
    if (BY_PAIR.has(key)) throw new Error(`transition table lists ${from} → ${rule.to} twice`);
    BY_PAIR.set(key, rule);
  }
}

/** The rule that allows `from → to`, or undefined when it is illegal. */
export function findTransition(from: InstanceState, to: InstanceState): TransitionRule | undefined {
  return BY_PAIR.get(`${from}>${to}`);
}

/** True when the table allows `from → to`. */
export function canTransition(from: InstanceState, to: InstanceState): boolean {
  return BY_PAIR.has(`${from}>${to}`);
}

/**
 * Returns the rule that allows `from → to`.
 *
 * @throws IllegalTransitionError naming both states when the table does not allow it.
 */
export function assertTransition(from: InstanceState, to: InstanceState): TransitionRule {
  const rule = BY_PAIR.get(`${from}>${to}`);
  if (rule === undefined) throw new IllegalTransitionError(from, to);
  return rule;
}

/** The states `from` may move to, in table order. */
export function nextStates(from: InstanceState): InstanceState[] {
  return TRANSITIONS.filter((rule) => rule.from.includes(from)).map((rule) => rule.to);
}

/** The states that may move to `to` (for `UPDATE … WHERE state IN (…)`). */
export function statesBefore(to: InstanceState): InstanceState[] {
  return TRANSITIONS.filter((rule) => rule.to === to).flatMap((rule) => rule.from);
}

/** The states a named transition may start from (for `UPDATE … WHERE state IN (…)`). */
export function transitionSources(name: TransitionName): readonly InstanceState[] {
  return TRANSITIONS.filter((rule) => rule.name === name).flatMap((rule) => rule.from);
}
