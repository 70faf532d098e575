/** The heap's growing factor (heap-growth.ts, #24): read from the environment, checked, and refused with a line naming the variable. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@ax/kit';
import { schedulerEnvFields } from './env.js';
import { setHeapGrowingPercent } from './heap-growth.js';

describe('AX_SCHEDULER_HEAP_GROWTH_PERCENT', () => {
  it('defaults to 100 (the heap grows to twice what is live); 0 leaves V8 its own choice', () => {
    expect(loadConfig(schedulerEnvFields, {}).heapGrowthPercent).toBe(100);
    expect(loadConfig(schedulerEnvFields, { AX_SCHEDULER_HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
  });

  it('refuses what is not a whole number from 0 to 1000, naming the variable', () => {
    for (const bad of ['-1', '1001', '1.5', 'lots']) {
      expect(() => loadConfig(schedulerEnvFields, { AX_SCHEDULER_HEAP_GROWTH_PERCENT: bad })).toThrow(/AX_SCHEDULER_HEAP_GROWTH_PERCENT/);
    }
  });

  it('takes a whole percent and refuses anything else before V8 sees it', () => {
    expect(() => setHeapGrowingPercent(0)).not.toThrow();
    expect(() => setHeapGrowingPercent(-5)).toThrow(RangeError);
    expect(() => setHeapGrowingPercent(1.5)).toThrow(RangeError);
  });
});
