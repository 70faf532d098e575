/**
 * The worker's clock check (§5, R8): every 30 s it measures its offset against Redis `TIME`,
 * corrected by half the round trip. Over the skew limit (`AX_WORKER_SKEW_LIMIT_MS`, 2 s) it is
 * *skewed*: it refuses all work with `CLOCK_SKEW`, raises an alert and leaves the registry. It
 * is trusted again only once the offset is back under 1 s (hysteresis).
 */

/** A source of the reference time: Redis `TIME` → `[seconds, microseconds]`. */
export interface TimeSource {
  time(): Promise<[string, string] | [number, number] | unknown[]>;
}

/** One measurement. */
export interface ClockSample {
  /** Local clock minus reference clock, ms (positive = this clock is ahead). */
  readonly offsetMs: number;
  readonly roundTripMs: number;
}

/** Measures the offset of `nowMs` against the reference. */
export async function measureOffset(source: TimeSource, nowMs: () => number = Date.now): Promise<ClockSample> {
  const t0 = nowMs();
  const reply = await source.time();
  const t1 = nowMs();
  const seconds = Number(reply[0]);
  const micros = Number(reply[1]);
  if (!Number.isFinite(seconds) || !Number.isFinite(micros)) throw new Error(`unexpected TIME reply ${JSON.stringify(reply)}`);
  const referenceMs = seconds * 1000 + micros / 1000;
  return { offsetMs: Math.round((t0 + t1) / 2 - referenceMs), roundTripMs: t1 - t0 };
}

/** Skew state with hysteresis. */
export class ClockGuard {
  private skewedNow = false;
  private last: ClockSample | undefined;

  /**
   * @param limitMs offset over which the worker is skewed (`AX_WORKER_SKEW_LIMIT_MS`, 2000).
   * @param recoverMs offset under which a skewed worker is trusted again (1000).
   */
  constructor(
    readonly limitMs: number,
    readonly recoverMs = 1_000,
  ) {}

  /**
   * Applies a measurement; returns the transition, if any. The offset is known to within half the
   * round trip only (when the reply was made is not known): a sample turns the worker skewed only
   * if even the smallest offset it allows is over the limit, and trusted again only if the largest
   * is under `recoverMs`. So a `TIME` that waited seconds in the client's queue (Redis restarting,
   * a login refused until admin-api makes it again) is not taken for a clock jump.
   */
  update(sample: ClockSample): 'became-skewed' | 'recovered' | null {
    this.last = sample;
    const size = Math.abs(sample.offsetMs);
    const uncertainty = Math.max(0, sample.roundTripMs) / 2;
    if (!this.skewedNow && size - uncertainty > this.limitMs) {
      this.skewedNow = true;
      return 'became-skewed';
    }
    if (this.skewedNow && size + uncertainty < Math.min(this.recoverMs, this.limitMs)) {
      this.skewedNow = false;
      return 'recovered';
    }
    return null;
  }

  get skewed(): boolean {
    return this.skewedNow;
  }

  /** The last measured offset, ms (undefined before the first). */
  get offsetMs(): number | undefined {
    return this.last?.offsetMs;
  }
}
