import { describe, expect, it } from 'vitest';
import { IllegalTransitionError } from '../errors.js';
import { FINAL_STATES, INSTANCE_STATES, isFinal, isInstanceState, type InstanceState } from './states.js';
import {
  TRANSITIONS,
  assertTransition,
  canTransition,
  findTransition,
  nextStates,
  statesBefore,
  transitionSources,
  type TransitionName,
} from './transitions.js';

/** The expected machine, written out pair by pair from DESIGN §2 and §10 (not derived from the table). */
const LEGAL: ReadonlyArray<[InstanceState, InstanceState, TransitionName]> = [
  ['WAITING', 'PENDING', 'deps_met'],
  ['PENDING', 'DISPATCHED', 'dispatch'],
  ['DISPATCHED', 'RUNNING', 'ack'],
  ['DISPATCHED', 'PENDING', 'reroute'],
  ['RUNNING', 'PENDING', 'reroute'], // #23: a refusal after the ACK (the job never started)
  ['DISPATCHED', 'SUCCESS', 'succeed'],
  ['RUNNING', 'SUCCESS', 'succeed'],
  ['DISPATCHED', 'RETRY_WAIT', 'fail_retry'],
  ['RUNNING', 'RETRY_WAIT', 'fail_retry'],
  ['DISPATCHED', 'FAILED', 'fail_final'],
  ['RUNNING', 'FAILED', 'fail_final'],
  ['RETRY_WAIT', 'PENDING', 'retry_due'],
  ['WAITING', 'CANCELED', 'cancel'],
  ['PENDING', 'CANCELED', 'cancel'],
  ['DISPATCHED', 'CANCELED', 'cancel'],
  ['RUNNING', 'CANCELED', 'cancel'],
  ['RETRY_WAIT', 'CANCELED', 'cancel'],
  ['SUCCESS', 'PENDING', 'rerun'],
  ['FAILED', 'PENDING', 'rerun'],
  ['CANCELED', 'PENDING', 'rerun'],
  ['SUCCESS', 'WAITING', 'rerun_waiting'],
  ['FAILED', 'WAITING', 'rerun_waiting'],
  ['CANCELED', 'WAITING', 'rerun_waiting'],
];

const legalKeys = new Set(LEGAL.map(([from, to]) => `${from}>${to}`));
const ILLEGAL: Array<[InstanceState, InstanceState]> = INSTANCE_STATES.flatMap((from) =>
  INSTANCE_STATES.filter((to) => !legalKeys.has(`${from}>${to}`)).map((to): [InstanceState, InstanceState] => [from, to]),
);

describe('instance state machine', () => {
  it('covers the whole 8×8 matrix: 23 legal and 41 illegal pairs', () => {
    expect(INSTANCE_STATES).toHaveLength(8);
    expect(LEGAL).toHaveLength(23);
    expect(ILLEGAL).toHaveLength(41);
  });

  it.each(LEGAL)('allows %s → %s (%s)', (from, to, name) => {
    expect(canTransition(from, to)).toBe(true);
    expect(findTransition(from, to)?.name).toBe(name);
    expect(assertTransition(from, to).name).toBe(name);
  });

  it.each(ILLEGAL)('refuses %s → %s', (from, to) => {
    expect(canTransition(from, to)).toBe(false);
    expect(findTransition(from, to)).toBeUndefined();
    expect(() => assertTransition(from, to)).toThrow(IllegalTransitionError);
    expect(() => assertTransition(from, to)).toThrow(`illegal instance state transition from ${from} to ${to}`);
  });

  it('has no transition the expected list lacks', () => {
    const tablePairs = TRANSITIONS.flatMap((rule) => rule.from.map((from) => `${from}>${rule.to}`)).sort();
    expect(tablePairs).toEqual([...legalKeys].sort());
  });

  it('never moves a state to itself', () => {
    for (const state of INSTANCE_STATES) expect(canTransition(state, state)).toBe(false);
  });

  it('leaves final states only by a rerun', () => {
    for (const state of FINAL_STATES) {
      expect(TRANSITIONS.filter((rule) => rule.from.includes(state)).map((rule) => rule.name).sort()).toEqual(['rerun', 'rerun_waiting']);
    }
  });

  it('lets every non-final state be canceled', () => {
    for (const state of INSTANCE_STATES) expect(canTransition(state, 'CANCELED')).toBe(!isFinal(state));
  });

  it('answers the helper queries from the same table', () => {
    expect(nextStates('DISPATCHED').sort()).toEqual(['CANCELED', 'FAILED', 'PENDING', 'RETRY_WAIT', 'RUNNING', 'SUCCESS']);
    expect(statesBefore('SUCCESS').sort()).toEqual(['DISPATCHED', 'RUNNING']);
    expect(transitionSources('cancel')).toEqual(['WAITING', 'PENDING', 'DISPATCHED', 'RUNNING', 'RETRY_WAIT']);
  });

  it('carries both states on the error', () => {
    try {
      assertTransition('SUCCESS', 'RUNNING');
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ code: 'ILLEGAL_TRANSITION', from: 'SUCCESS', to: 'RUNNING' });
    }
  });
});

describe('states', () => {
  it('knows the final states', () => {
    expect([...FINAL_STATES].sort()).toEqual(['CANCELED', 'FAILED', 'SUCCESS']);
    expect(INSTANCE_STATES.filter(isFinal)).toEqual(['SUCCESS', 'FAILED', 'CANCELED']);
  });

  it('guards strings from storage', () => {
    expect(isInstanceState('RUNNING')).toBe(true);
    expect(isInstanceState('running')).toBe(false);
    expect(isInstanceState(3)).toBe(false);
  });
});
