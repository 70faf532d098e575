import { describe, expect, it } from 'vitest';
import { MAX_RETRY_DELAY_MS, attemptsLeft, maxAttemptsOf, retryDelayMs } from './backoff.js';

const policy = { backoffSeconds: 30, factor: 2, jitterSeconds: 10 };
const zero = (): number => 0;

describe('retryDelayMs', () => {
  it('grows exponentially from the base', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(policy, n, zero))).toEqual([30_000, 60_000, 120_000, 240_000]);
  });

  it('adds random() × jitter', () => {
    expect(retryDelayMs(policy, 1, () => 0.5)).toBe(35_000);
    expect(retryDelayMs(policy, 2, () => 0.999)).toBe(69_990);
  });

  it('is deterministic for a given random source', () => {
    const seq = (): (() => number) => {
      const values = [0.1, 0.7, 0.3];
      let i = 0;
      return () => values[i++ % values.length] ?? 0;
    };
    const a = seq();
    const b = seq();
    const run = (r: () => number): number[] => [1, 2, 3].map((n) => retryDelayMs(policy, n, r));
    expect(run(a)).toEqual(run(b));
    expect(run(seq())).toEqual([31_000, 67_000, 123_000]);
  });

  it('caps at one hour, jitter included', () => {
    expect(MAX_RETRY_DELAY_MS).toBe(3_600_000);
    expect(retryDelayMs(policy, 8, zero)).toBe(3_600_000); // 30·2^7 = 3840 s
    expect(retryDelayMs(policy, 7, () => 0.99)).toBe(1_920_000 + 9_900);
    expect(retryDelayMs({ backoffSeconds: 3_590, factor: 1, jitterSeconds: 60 }, 1, () => 0.9)).toBe(3_600_000);
    expect(retryDelayMs(policy, 5_000, () => 0.5)).toBe(3_600_000);
  });

  it('honours a custom cap', () => {
    expect(retryDelayMs(policy, 3, zero, 100_000)).toBe(100_000);
  });

  it('stays finite with a zero base or a factor of 1', () => {
    expect(retryDelayMs({ backoffSeconds: 0, factor: 2, jitterSeconds: 0 }, 5_000, zero)).toBe(0);
    expect(retryDelayMs({ backoffSeconds: 0, factor: 2, jitterSeconds: 10 }, 5_000, () => 0.5)).toBe(5_000);
    expect(retryDelayMs({ backoffSeconds: 10, factor: 1, jitterSeconds: 0 }, 50, zero)).toBe(10_000);
  });

  it('clamps random values outside [0, 1]', () => {
    expect(retryDelayMs(policy, 1, () => -3)).toBe(30_000);
    expect(retryDelayMs(policy, 1, () => 7)).toBe(40_000);
  });

  it('refuses attempt numbers below 1 or fractional', () => {
    expect(() => retryDelayMs(policy, 0, zero)).toThrow(RangeError);
    expect(() => retryDelayMs(policy, 1.5, zero)).toThrow('failedAttempt must be an integer ≥ 1, got 1.5');
  });
});

describe('attempt budget', () => {
  it('allows retry.max retries after the first attempt', () => {
    expect(maxAttemptsOf({ max: 0 })).toBe(1);
    expect(maxAttemptsOf({ max: 2 })).toBe(3);
  });

  it('counts attempts left and never goes negative', () => {
    expect(attemptsLeft(1, 3)).toBe(2);
    expect(attemptsLeft(3, 3)).toBe(0);
    expect(attemptsLeft(5, 3)).toBe(0);
    expect(attemptsLeft(1, maxAttemptsOf({ max: 0 }))).toBe(0);
  });
});
