import { describe, expect, it } from 'vitest';
import { systemClock } from './system-clock.js';

describe('systemClock', () => {
  it('reads the real time and cannot be replaced', () => {
    const before = Date.now();
    const now = systemClock.nowMs();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
    expect(Object.isFrozen(systemClock)).toBe(true);
  });
});
