import { describe, expect, it } from 'vitest';
import { refusalFor, type AdmissionState } from './admission.js';

const ok: AdmissionState = { shuttingDown: false, skewed: false, offsetMs: 12, skewLimitMs: 2_000 };
const deadline = { ackDeadline: '2026-12-01T02:00:05.000Z' };
const at = (iso: string): number => Date.parse(iso);

describe('admission', () => {
  it('R8 ACKs only while now ≤ ackDeadline − 1 s, else EXPIRED', () => {
    expect(refusalFor(deadline, at('2026-12-01T02:00:03.999Z'), ok)).toBeNull();
    expect(refusalFor(deadline, at('2026-12-01T02:00:04.000Z'), ok)).toBeNull();
    expect(refusalFor(deadline, at('2026-12-01T02:00:04.001Z'), ok)).toMatchObject({ reason: 'EXPIRED' });
    expect(refusalFor(deadline, at('2026-12-01T02:01:00.000Z'), ok)?.detail).toBe(
      'received at 2026-12-01T02:01:00.000Z, ACK deadline 2026-12-01T02:00:05.000Z (margin 1000 ms)',
    );
  });

  it('§5 a skewed worker refuses with CLOCK_SKEW before looking at the deadline; shutting down comes first', () => {
    const late = at('2026-12-01T02:01:00.000Z');
    expect(refusalFor(deadline, late, { ...ok, skewed: true, offsetMs: 10_004 })).toEqual({
      reason: 'CLOCK_SKEW',
      detail: 'clock offset 10004 ms against Redis TIME (limit 2000 ms)',
    });
    expect(refusalFor(deadline, late, { ...ok, skewed: true, shuttingDown: true })?.reason).toBe('SHUTTING_DOWN');
  });
});
