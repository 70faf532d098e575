import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, isEventType } from './events.js';
import { REASONS, isReason } from './reasons.js';

describe('reason labels', () => {
  it('include every label DESIGN.md and the brief name', () => {
    for (const label of [
      'TIMEOUT',
      'LOST_WORKER',
      'CLOCK_SKEW',
      'UPSTREAM_FAILED',
      'UPSTREAM_MISSING',
      'ACK_TIMEOUT',
      'TOO_LATE',
      'DISCARDED',
      'CANCELED_BY_USER',
      'WORKER_RESTART',
      'EXPIRED',
      'COVERED',
      'NO_WORKER',
    ]) {
      expect(isReason(label)).toBe(true);
    }
    expect(isReason('toString')).toBe(false);
    expect(new Set(REASONS).size).toBe(REASONS.length);
  });
});

describe('event types', () => {
  it('include every type DESIGN.md and the brief name', () => {
    for (const type of [
      'CREATED',
      'DISPATCHED',
      'ACKED',
      'ACK_TIMEOUT',
      'STARTED',
      'SUCCEEDED',
      'FAILED',
      'TIMED_OUT',
      'RETRY_SCHEDULED',
      'LOST_WORKER',
      'CLOCK_SKEW',
      'CANCELED',
      'RERUN_REQUESTED',
      'NO_WORKER',
      'TEAM_LIMIT',
      'DEFERRED',
      'SKIPPED',
      'COALESCED',
      'REFUSED',
      'FENCED',
    ]) {
      expect(isEventType(type)).toBe(true);
    }
    expect(isEventType('constructor')).toBe(false);
    expect(new Set(EVENT_TYPES).size).toBe(EVENT_TYPES.length);
  });
});
