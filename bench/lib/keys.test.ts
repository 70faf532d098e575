import { describe, expect, it } from 'vitest';
import { parseIdempotencyKey, slotKey } from './keys.mjs';

describe('slot keys', () => {
  it('round-trip the Idempotency-Key shape ax sends (R18)', () => {
    const ms = Date.parse('2026-11-29T21:04:17.000Z');
    const key = slotKey('burst-17', ms, 2);
    expect(key).toBe('burst-17:2026-11-29T21:04:17.000Z:2');
    expect(parseIdempotencyKey(key)).toEqual({ taskName: 'burst-17', expectedMs: ms, runNo: 2 });
  });
  it('refuses what is not a key', () => {
    expect(parseIdempotencyKey('nothing')).toBeNull();
    expect(parseIdempotencyKey('a:not-a-date:1')).toBeNull();
    expect(parseIdempotencyKey(':2026-11-29T21:04:17.000Z:1')).toBeNull();
  });
});
