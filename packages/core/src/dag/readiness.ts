/**
 * DAG readiness (DESIGN §3, R19): whether a child's `WAITING` instance of a biz date can run,
 * must keep waiting, or must be canceled with `UPSTREAM_FAILED`.
 */
import { isFinal, type InstanceState } from '../state/states.js';
import type { EdgeRule } from './edges.js';

/** What to do with the child's instance. */
export type Readiness = 'ready' | 'wait' | 'cancel';

/**
 * Whether one edge is satisfied, given the states of the parent's instances of the biz date
 * (a parent with several slots a day has several). The caller has already checked that all of
 * the parent's slots of that date exist (watermark, R19); `null` stands for a slot whose
 * instance is missing and counts as not finished.
 *
 * - `ALL_SUCCESS`: `ready` when every instance is `SUCCESS`; `cancel` as soon as one is
 *   `FAILED` or `CANCELED` (it can no longer be satisfied without a rerun); else `wait`.
 * - `ALL_DONE`: `ready` when every instance is final, whatever the outcome; else `wait`.
 *
 * No instances at all is `ready` (nothing to wait for).
 */
export function edgeSatisfied(rule: EdgeRule, parentStates: ReadonlyArray<InstanceState | null>): Readiness {
  if (rule === 'ALL_SUCCESS') {
    if (parentStates.some((s) => s === 'FAILED' || s === 'CANCELED')) return 'cancel';
    return parentStates.every((s) => s === 'SUCCESS') ? 'ready' : 'wait';
  }
  return parentStates.every((s) => s !== null && isFinal(s)) ? 'ready' : 'wait';
}

/**
 * A child's readiness over all of its edges: `cancel` if any edge says cancel, `ready` when
 * every edge is ready (or there are none), else `wait`.
 */
export function childReadiness(edges: ReadonlyArray<{ rule: EdgeRule; parentStates: ReadonlyArray<InstanceState | null> }>): Readiness {
  let readiness: Readiness = 'ready';
  for (const edge of edges) {
    const one = edgeSatisfied(edge.rule, edge.parentStates);
    if (one === 'cancel') return 'cancel';
    if (one === 'wait') readiness = 'wait';
  }
  return readiness;
}
