import { describe, expect, it } from 'vitest';
import { MAX_JITTER_SECONDS, slotJitterMs } from './jitter.js';

const HOUR = 3_600_000;
const t0 = Date.UTC(2026, 11, 1, 0, 0, 0);

describe('slotJitterMs (jitterSeconds: stable per slot)', () => {
  it('is 0 without jitter', () => {
    expect(slotJitterMs('a', t0, 0)).toBe(0);
  });

  it('is the same for the same task and slot, whoever computes it, and whole seconds in [0, N]', () => {
    for (let i = 0; i < 1_000; i++) {
      const ms = slotJitterMs(`task-${i}`, t0 + (i % 24) * HOUR, 30);
      expect(ms).toBe(slotJitterMs(`task-${i}`, t0 + (i % 24) * HOUR, 30));
      expect(ms % 1_000).toBe(0);
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThanOrEqual(30_000);
    }
  });

  it('spreads 1,000 tasks of one slot over every second of the window, none crowded', () => {
    const counts = new Map<number, number>();
    for (let i = 0; i < 1_000; i++) {
      const s = slotJitterMs(`report_${i}`, t0, 30) / 1_000;
      counts.set(s, (counts.get(s) ?? 0) + 1);
    }
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 31 }, (_, i) => i));
    // 1,000 / 31 ≈ 32 per second; a fair hash stays well under twice that.
    expect(Math.max(...counts.values())).toBeLessThan(64);
    expect(Math.min(...counts.values())).toBeGreaterThan(10);
  });

  it('differs between slots of one task (a task is not always last)', () => {
    const offsets = new Set(Array.from({ length: 48 }, (_, h) => slotJitterMs('nightly', t0 + h * HOUR, 30)));
    expect(offsets.size).toBeGreaterThan(10);
  });

  it('bounds', () => {
    expect(MAX_JITTER_SECONDS).toBe(3_600);
    expect(slotJitterMs('x', t0, 1)).toBeLessThanOrEqual(1_000);
  });
});
