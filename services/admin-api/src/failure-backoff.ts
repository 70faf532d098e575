/**
 * Back-off of failed authentications per key (a client address): pure, with an injected clock.
 *
 * A generic cell-rate algorithm (GCRA, a leaky bucket kept as one time per key): a key may fail
 * `burst` times in a row for free; its failures drain at `burst` per `windowMs`. A failure
 * beyond that is "backed off": `fail` returns how long the key should wait before its next
 * failure would be free again. Backed-off failures count too (a key that keeps failing stays
 * backed off), up to a debt of `windowMs`, so the wait never exceeds `windowMs`.
 *
 * Memory is bounded: at most `maxKeys` keys are tracked (the one that failed least recently is
 * dropped first) and a key whose failures have drained is forgotten.
 */

/** Options of `FailureBackoff`. */
export interface FailureBackoffOptions {
  /** Failures a key may have in a row before it is backed off (default 20). */
  readonly burst: number;
  /** Time in which `burst` failures drain, ms: one every `windowMs / burst` (default 60000). Also the longest wait. */
  readonly windowMs: number;
  /** Most keys tracked at once (default 10000). */
  readonly maxKeys?: number;
}

/** Default cap of tracked keys. */
export const DEFAULT_MAX_KEYS = 10_000;

/** Per-key state: its theoretical arrival time (when its failures will have drained). */
interface Entry {
  tatMs: number;
}

/** Counts failures per key and says when a key is backed off. */
export class FailureBackoff {
  /** Insertion order = order of the last failure (a key is re-inserted on each failure). */
  private readonly entries = new Map<string, Entry>();
  private readonly burst: number;
  private readonly windowMs: number;
  private readonly intervalMs: number;
  private readonly maxKeys: number;

  constructor(options: FailureBackoffOptions, private readonly now: () => number) {
    if (!Number.isInteger(options.burst) || options.burst < 1) throw new RangeError(`burst must be a positive integer, not ${options.burst}`);
    if (!Number.isFinite(options.windowMs) || options.windowMs <= 0) throw new RangeError(`windowMs must be positive, not ${options.windowMs}`);
    const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
    if (!Number.isInteger(maxKeys) || maxKeys < 1) throw new RangeError(`maxKeys must be a positive integer, not ${maxKeys}`);
    this.burst = options.burst;
    this.windowMs = options.windowMs;
    this.intervalMs = options.windowMs / options.burst;
    this.maxKeys = maxKeys;
  }

  /**
   * Records a failure of `key`. Returns 0 when it was within the free burst, otherwise the
   * milliseconds until a failure of `key` would be free again (at most `windowMs`).
   */
  fail(key: string): number {
    const now = this.now();
    this.forgetDrained(now);
    const entry = this.entries.get(key);
    const tatMs = Math.max(entry?.tatMs ?? now, now) + this.intervalMs;
    // Re-insert: the map stays ordered by last failure, so the front is the stalest key.
    this.entries.delete(key);
    if (this.entries.size >= this.maxKeys) this.dropStalest();
    if (tatMs - now <= this.windowMs) {
      this.entries.set(key, { tatMs });
      return 0;
    }
    // Backed off: the debt is capped so that the wait never exceeds windowMs.
    const capped = Math.min(tatMs, now + 2 * this.windowMs - this.intervalMs);
    this.entries.set(key, { tatMs: capped });
    return this.waitMs(capped, now);
  }

  /** Milliseconds until a failure of `key` would be free again; 0 = it is not backed off. */
  retryAfterMs(key: string): number {
    const entry = this.entries.get(key);
    return entry === undefined ? 0 : this.waitMs(entry.tatMs, this.now());
  }

  /** Keys tracked now (drained ones are dropped on the next failure). */
  get size(): number {
    return this.entries.size;
  }

  /** A failure is free when it leaves at most `windowMs` of debt, i.e. once `tat - now <= windowMs - interval`. */
  private waitMs(tatMs: number, now: number): number {
    return Math.max(0, tatMs - now - (this.windowMs - this.intervalMs));
  }

  /** Drops keys from the front (least recent failure) as long as their failures have drained. */
  private forgetDrained(now: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.tatMs > now) return;
      this.entries.delete(key);
    }
  }

  private dropStalest(): void {
    const first = this.entries.keys().next();
    if (first.done !== true) this.entries.delete(first.value);
  }
}
