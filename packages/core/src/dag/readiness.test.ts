import { describe, expect, it } from 'vitest';
import type { InstanceState } from '../state/states.js';
import { childReadiness, edgeSatisfied } from './readiness.js';

describe('edgeSatisfied', () => {
  it.each<[InstanceState[], 'ready' | 'wait' | 'cancel']>([
    [['SUCCESS'], 'ready'],
    [['SUCCESS', 'SUCCESS'], 'ready'],
    [['SUCCESS', 'RUNNING'], 'wait'],
    [['WAITING'], 'wait'],
    [['RETRY_WAIT'], 'wait'],
    [['FAILED'], 'cancel'],
    [['CANCELED'], 'cancel'],
    [['RUNNING', 'FAILED'], 'cancel'],
    [[], 'ready'],
  ])('ALL_SUCCESS with %j → %s', (states, expected) => {
    expect(edgeSatisfied('ALL_SUCCESS', states)).toBe(expected);
  });

  it.each<[InstanceState[], 'ready' | 'wait']>([
    [['SUCCESS'], 'ready'],
    [['FAILED', 'CANCELED', 'SUCCESS'], 'ready'],
    [['FAILED', 'RUNNING'], 'wait'],
    [['PENDING'], 'wait'],
    [[], 'ready'],
  ])('ALL_DONE with %j → %s', (states, expected) => {
    expect(edgeSatisfied('ALL_DONE', states)).toBe(expected);
  });

  it('treats a missing instance (null) as not finished', () => {
    expect(edgeSatisfied('ALL_SUCCESS', ['SUCCESS', null])).toBe('wait');
    expect(edgeSatisfied('ALL_DONE', [null])).toBe('wait');
    expect(edgeSatisfied('ALL_SUCCESS', [null, 'FAILED'])).toBe('cancel');
  });
});

describe('childReadiness', () => {
  it('combines edges: any cancel cancels, all ready is ready, else wait', () => {
    expect(childReadiness([])).toBe('ready');
    expect(childReadiness([{ rule: 'ALL_SUCCESS', parentStates: ['SUCCESS'] }, { rule: 'ALL_DONE', parentStates: ['FAILED'] }])).toBe('ready');
    expect(childReadiness([{ rule: 'ALL_SUCCESS', parentStates: ['SUCCESS'] }, { rule: 'ALL_DONE', parentStates: ['RUNNING'] }])).toBe('wait');
    expect(childReadiness([{ rule: 'ALL_DONE', parentStates: ['RUNNING'] }, { rule: 'ALL_SUCCESS', parentStates: ['FAILED'] }])).toBe('cancel');
  });
});
