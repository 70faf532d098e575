/**
 * Run times of the last five minutes, for the registry's `avgDurationMs5m` (routing score, §4).
 *
 * Kept as one sum and count per second, in a ring of as many seconds as the window: a busy worker
 * ends hundreds of runs a second, and a list of every run (as this was) held 150,000 entries at
 * 500 runs/s, about 10 MB, and moved the whole list on every `shift()` (the soak's heap snapshots,
 * #23). A run counts while its second is within the window: the edge is exact to the second.
 */
const WINDOW_MS = 300_000;
const BUCKET_MS = 1_000;

export class DurationWindow {
  private readonly seconds: Float64Array;
  private readonly sums: Float64Array;
  private readonly counts: Float64Array;

  constructor(private readonly windowMs = WINDOW_MS) {
    // One more than the window's seconds: the oldest second still in it and the current one
    // never share a slot.
    const buckets = Math.ceil(windowMs / BUCKET_MS) + 1;
    this.seconds = new Float64Array(buckets).fill(-Infinity);
    this.sums = new Float64Array(buckets);
    this.counts = new Float64Array(buckets);
  }

  add(endedAtMs: number, durationMs: number): void {
    const second = Math.floor(endedAtMs / BUCKET_MS);
    const i = ((second % this.seconds.length) + this.seconds.length) % this.seconds.length;
    if (this.seconds[i] !== second) {
      // The slot held a second that has left the window (or none): it starts again.
      this.seconds[i] = second;
      this.sums[i] = 0;
      this.counts[i] = 0;
    }
    this.sums[i] = (this.sums[i] ?? 0) + durationMs;
    this.counts[i] = (this.counts[i] ?? 0) + 1;
  }

  /** Average duration of the runs that ended within the window before `nowMs`; 0 when none. */
  average(nowMs: number): number {
    const oldest = Math.floor((nowMs - this.windowMs) / BUCKET_MS);
    const newest = Math.floor(nowMs / BUCKET_MS);
    let sum = 0;
    let count = 0;
    for (let i = 0; i < this.seconds.length; i++) {
      const second = this.seconds[i] ?? -Infinity;
      if (second < oldest || second > newest) continue;
      sum += this.sums[i] ?? 0;
      count += this.counts[i] ?? 0;
    }
    return count === 0 ? 0 : Math.round(sum / count);
  }
}
