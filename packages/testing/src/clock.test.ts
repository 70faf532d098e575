import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.js';

describe('ManualClock', () => {
  it('starts at a fixed instant and moves only when told', () => {
    const clock = new ManualClock();
    expect(new Date(clock.nowMs()).toISOString()).toBe('2025-01-01T00:00:00.000Z');
    expect(clock.nowMs()).toBe(clock.nowMs());
    expect(clock.advance(1_500)).toBe(Date.UTC(2025, 0, 1) + 1_500);
    expect(clock.nowMs()).toBe(Date.UTC(2025, 0, 1, 0, 0, 1, 500));
    clock.set(Date.UTC(2024, 11, 31)); // a step backwards is allowed with set
    expect(clock.nowMs()).toBe(Date.UTC(2024, 11, 31));
  });

  it('refuses going backwards with advance and non-finite times', () => {
    const clock = new ManualClock(1_000);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.set(Number.NaN)).toThrow(RangeError);
    expect(() => new ManualClock(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(clock.nowMs()).toBe(1_000);
  });

  it('is usable where a { nowMs(): number } clock is expected', () => {
    const deadline = (c: { nowMs(): number }, afterMs: number): number => c.nowMs() + afterMs;
    const clock = new ManualClock(0);
    expect(deadline(clock, 5_000)).toBe(5_000);
  });
});
