// Instance states, the transition table, reason labels and event types.
export { ACTIVE_STATES, FINAL_STATES, INSTANCE_STATES, isFinal, isInstanceState } from './states.js';
export type { InstanceState } from './states.js';
export {
  TRANSITIONS,
  assertTransition,
  canTransition,
  findTransition,
  nextStates,
  statesBefore,
  transitionSources,
} from './transitions.js';
export type { TransitionName, TransitionRule } from './transitions.js';
export { REASONS, REASON_DESCRIPTIONS, isReason } from './reasons.js';
export type { Reason } from './reasons.js';
export { EVENT_TYPES, EVENT_TYPE_DESCRIPTIONS, isEventType } from './events.js';
export type { EventType } from './events.js';
