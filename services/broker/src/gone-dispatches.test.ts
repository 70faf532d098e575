import { describe, expect, it } from 'vitest';
import { decideExpiredDispatch, type ExpiredDispatchFacts } from './gone-dispatches.js';

const deadline = new Date('2026-12-02T03:00:00.000Z');
const facts = (over: Partial<ExpiredDispatchFacts> = {}): ExpiredDispatchFacts => ({
  gone: false,
  consumerMissing: false,
  entry: { at: '2026-12-02T03:00:02.500Z', runningExecutionIds: [] },
  executionId: 'e1',
  ackDeadline: deadline,
  skewLimitMs: 2_000,
  ...over,
});

describe('what an expired dispatch (R8, no ACK) that its worker took becomes (#23)', () => {
  it('re-routed when a heartbeat written after the worker could last accept it does not list it', () => {
    expect(decideExpiredDispatch(facts())).toBe('reroute');
  });

  it('waits while the worker lists it (it holds the dispatch: a slow ACK)', () => {
    expect(decideExpiredDispatch(facts({ entry: { at: '2026-12-02T03:00:09.000Z', runningExecutionIds: ['e0', 'e1'] } }))).toBe('wait');
  });

  it('waits while the worker has been silent since before the deadline plus the clock allowance (frozen: it may have started it)', () => {
    expect(decideExpiredDispatch(facts({ entry: { at: '2026-12-02T03:00:01.900Z', runningExecutionIds: [] } }))).toBe('wait');
    expect(decideExpiredDispatch(facts({ entry: { at: '2026-12-02T02:59:55.000Z', runningExecutionIds: [] } }))).toBe('wait');
  });

  it('counted lost (a started attempt) once its entry is gone or the worker is found gone', () => {
    expect(decideExpiredDispatch(facts({ entry: null }))).toBe('lost');
    expect(decideExpiredDispatch(facts({ gone: true, consumerMissing: true }))).toBe('lost');
  });

  it('waits while the worker is alive without its RabbitMQ link, or when the registry could not be read', () => {
    expect(decideExpiredDispatch(facts({ consumerMissing: true }))).toBe('wait');
    expect(decideExpiredDispatch(facts({ entry: undefined }))).toBe('wait');
  });

  it('an entry with an unreadable time proves nothing', () => {
    expect(decideExpiredDispatch(facts({ entry: { at: 'not a time', runningExecutionIds: [] } }))).toBe('wait');
  });
});
