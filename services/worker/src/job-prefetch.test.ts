import { describe, expect, it } from 'vitest';
import { loadConfig } from '@ax/kit';
import { workerEnvFields } from './env.js';
import { heldEntries } from './job-prefetch.js';

describe('AX_WORKER_JOB_PREFETCH (R9 prefetch)', () => {
  const base = { AX_JOB_ISOLATION: 'off' };

  it('R9 defaults to the worker slots, may be 0, and a bad value names the variable', () => {
    expect(loadConfig(workerEnvFields, { ...base, AX_WORKER_SLOTS: '7' }).jobPrefetch).toBe(7);
    expect(loadConfig(workerEnvFields, { ...base, AX_WORKER_SLOTS: '7', AX_WORKER_JOB_PREFETCH: '0' }).jobPrefetch).toBe(0);
    expect(loadConfig(workerEnvFields, { ...base, AX_WORKER_SLOTS: '7', AX_WORKER_JOB_PREFETCH: '20' }).jobPrefetch).toBe(20);
    expect(() => loadConfig(workerEnvFields, { ...base, AX_WORKER_JOB_PREFETCH: '-1' })).toThrow(/AX_WORKER_JOB_PREFETCH/);
  });

  it('lists held dispatches with how long each has been held', () => {
    expect(heldEntries([{ executionId: 'a', acceptedAtMs: 100 }, { executionId: 'b', acceptedAtMs: 900.4 }], 1_000)).toEqual([
      { executionId: 'a', heldMs: 900 },
      { executionId: 'b', heldMs: 100 },
    ]);
  });
});
