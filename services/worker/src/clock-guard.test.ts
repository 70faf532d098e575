import { describe, expect, it } from 'vitest';
import { ClockGuard, measureOffset } from './clock-guard.js';
import { DurationWindow } from './duration-window.js';

describe('clock guard', () => {
  it('measures the offset against Redis TIME corrected by half the round trip', async () => {
    let now = 10_000;
    const source = {
      time: () => {
        now += 100; // 100 ms there, 100 ms back
        const reply: [string, string] = ['7', '500000']; // 7.5 s
        now += 100;
        return Promise.resolve(reply);
      },
    };
    expect(await measureOffset(source, () => now)).toEqual({ offsetMs: 10_100 - 7_500, roundTripMs: 200 });
  });

  it('§5 over the limit it is skewed until the offset is back under 1 s', () => {
    const guard = new ClockGuard(2_000);
    expect(guard.update({ offsetMs: 1_900, roundTripMs: 1 })).toBeNull();
    expect(guard.skewed).toBe(false);
    expect(guard.update({ offsetMs: -2_300, roundTripMs: 1 })).toBe('became-skewed');
    expect(guard.skewed).toBe(true);
    expect(guard.update({ offsetMs: 1_500, roundTripMs: 1 })).toBeNull();
    expect(guard.skewed).toBe(true);
    expect(guard.update({ offsetMs: 900, roundTripMs: 1 })).toBe('recovered');
    expect(guard.skewed).toBe(false);
    expect(guard.offsetMs).toBe(900);
  });

  it('#44 a TIME that waited in the queue (round trip 4.2 s, offset -2.1 s, as seen in fault drill 6) is no skew; a round trip too long to trust does not recover one either', () => {
    const guard = new ClockGuard(2_000);
    expect(guard.update({ offsetMs: -2_084, roundTripMs: 4_168 })).toBeNull();
    expect(guard.skewed).toBe(false);
    expect(guard.update({ offsetMs: 10_000, roundTripMs: 4_000 })).toBe('became-skewed');
    expect(guard.update({ offsetMs: 0, roundTripMs: 2_400 })).toBeNull();
    expect(guard.skewed).toBe(true);
    expect(guard.update({ offsetMs: 100, roundTripMs: 200 })).toBe('recovered');
  });
});

describe('DurationWindow', () => {
  it('averages the runs that ended in the last 5 minutes', () => {
    const window = new DurationWindow();
    window.add(1_000, 100);
    window.add(200_000, 300);
    expect(window.average(250_000)).toBe(200);
    expect(window.average(320_000)).toBe(300);
    expect(window.average(600_000)).toBe(0);
  });

  it('holds one slot per second however many runs end (the soak kept 150,000 entries before)', () => {
    const window = new DurationWindow(10_000);
    for (let ms = 0; ms < 100_000; ms += 2) window.add(ms, ms < 95_000 ? 1_000 : 10);
    // Only the runs of the last 10 s count: 2,500 of 1,000 ms and 2,500 of 10 ms.
    expect(window.average(100_000)).toBe(505);
    expect(window.average(105_000)).toBe(10);
    expect(window.average(110_000)).toBe(0);
    // A run of a later second takes the slot of one that left the window, which is forgotten.
    window.add(101_000, 50);
    expect(window.average(101_000)).toBe(Math.round((2_000 * 1_000 + 2_500 * 10 + 50) / 4_501));
  });
});
