import type { ResultItem } from '@ax/core';
import { describe, expect, it } from 'vitest';
import { failureOf } from './result-failure.js';

const item = (over: Partial<ResultItem>): ResultItem =>
  ({ executionId: '01900000-0000-7000-8000-000000000001', instanceId: '01900000-0000-7000-8000-000000000002', outcome: 'FAILED', ...over }) as ResultItem;

describe('failureOf', () => {
  it('names the reason, event and detail of each failed outcome', () => {
    expect(failureOf(item({ outcome: 'TIMEOUT', error: 'after 600 s' }))).toEqual({ reason: 'TIMEOUT', eventType: 'TIMED_OUT', message: 'timed out: after 600 s' });
    expect(failureOf(item({ outcome: 'WORKER_RESTART' }))).toEqual({ reason: 'WORKER_RESTART', eventType: 'WORKER_RESTART', message: 'the worker restarted: no detail' });
    expect(failureOf(item({ outcome: 'FAILED', exitCode: 3 }))).toEqual({ reason: 'JOB_FAILED', eventType: 'FAILED', message: 'failed: exit code 3' });
    expect(failureOf(item({ outcome: 'CANCELED', exitCode: null }))).toEqual({ reason: 'JOB_FAILED', eventType: 'FAILED', message: 'canceled: no detail' });
  });
});
