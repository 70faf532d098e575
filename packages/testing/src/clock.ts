/**
 * A clock tests move by hand. Structurally a `Clock` of `@ax/core` (`{ nowMs(): number }`), so
 * it can be passed wherever the code under test takes one; nothing sleeps to wait for time.
 */
export class ManualClock {
  #nowMs: number;

  /** Starts at `startMs` (default 2025-01-01T00:00:00.000Z, so runs are reproducible). */
  constructor(startMs: number = Date.UTC(2025, 0, 1)) {
    ManualClock.#check(startMs);
    this.#nowMs = startMs;
  }

  /** Milliseconds since the Unix epoch (UTC). */
  nowMs(): number {
    return this.#nowMs;
  }

  /** Jumps to `ms` (backwards too, to simulate a clock step). */
  set(ms: number): void {
    ManualClock.#check(ms);
    this.#nowMs = ms;
  }

  /** Moves forward by `ms` (≥ 0) and returns the new time. */
  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`ManualClock.advance: ${ms} is not a non-negative number`);
    this.set(this.#nowMs + ms);
    return this.#nowMs;
  }

  static #check(ms: number): void {
    if (!Number.isFinite(ms)) throw new RangeError(`ManualClock: ${ms} is not a finite time`);
  }
}
