/**
 * When a pre-created slot is announced to the brokers (fire.ts): a few ms after its time on
 * MySQL's clock, which brokers compare `due_at` with, whichever way the local clock is off.
 */
import { describe, expect, it } from 'vitest';
import { ANNOUNCE_MARGIN_MS, dueOnDbClock, msUntilNextAnnounce } from './fire.js';

const SLOT = 1_800_000_000_000;

describe('announcing pre-created slots', () => {
  it('nothing waits: no wake-up', () => {
    expect(msUntilNextAnnounce({ precreatedDueMs: new Set(), dbOffsetMs: 0 }, SLOT)).toBeNull();
  });

  it('the earliest slot counts, the margin after it, on a clock in step with MySQL', () => {
    const state = { precreatedDueMs: new Set([SLOT + 2_000, SLOT + 1_000]), dbOffsetMs: 0 };
    expect(msUntilNextAnnounce(state, SLOT)).toBe(1_000 + ANNOUNCE_MARGIN_MS);
    expect(dueOnDbClock(state, SLOT + 1_000, SLOT + 1_000)).toBe(false);
    expect(dueOnDbClock(state, SLOT + 1_000, SLOT + 1_000 + ANNOUNCE_MARGIN_MS)).toBe(true);
  });

  it('MySQL 40 ms behind us: 40 ms later, so a broker woken then finds the slot due', () => {
    const state = { precreatedDueMs: new Set([SLOT]), dbOffsetMs: -40 };
    expect(msUntilNextAnnounce(state, SLOT - 1_000)).toBe(1_000 + 40 + ANNOUNCE_MARGIN_MS);
    expect(dueOnDbClock(state, SLOT, SLOT + 30)).toBe(false);
    expect(dueOnDbClock(state, SLOT, SLOT + 40 + ANNOUNCE_MARGIN_MS)).toBe(true);
  });

  it('MySQL 40 ms ahead of us: 40 ms sooner (the slot is due on its clock already)', () => {
    const state = { precreatedDueMs: new Set([SLOT]), dbOffsetMs: 40 };
    expect(msUntilNextAnnounce(state, SLOT - 1_000)).toBe(1_000 - 40 + ANNOUNCE_MARGIN_MS);
    expect(dueOnDbClock(state, SLOT, SLOT - 40 + ANNOUNCE_MARGIN_MS)).toBe(true);
  });

  it('a slot already past is announced at once', () => {
    expect(msUntilNextAnnounce({ precreatedDueMs: new Set([SLOT]), dbOffsetMs: 0 }, SLOT + 500)).toBe(0);
  });
});
