/**
 * Whether this worker's registry lease (R14) may have lapsed since a given moment (#23).
 *
 * A broker treats a worker whose registry entry expired as lost and gives its dispatches to
 * another worker. A worker that was frozen (SIGSTOP, a VM paused, a stop-the-world pause) or cut
 * off from Redis for longer than the lease cannot know whether that happened. So a job it
 * accepted before such a gap must not start after it: the run may already belong to another
 * worker. Measured on the monotonic clock, which keeps counting while the process is stopped.
 *
 * Pure bookkeeping (no I/O): the worker calls `renewed` after each heartbeat that Redis took.
 */

/** How much of the lease is kept in reserve for Redis latency and the broker's scan (at most a quarter of it). */
export const LEASE_MARGIN_MS = 2_000;

export class LeaseWatch {
  /** Monotonic ms at which the last heartbeat that Redis took was sent. */
  private lastSentMs: number;
  /** Monotonic ms at which a heartbeat ended a silence long enough for the lease to lapse. */
  private lastGapEndMs = Number.NEGATIVE_INFINITY;
  private readonly limitMs: number;

  /**
   * @param leaseTtlMs the registry entry's TTL (`AX_LEASE_TTL_MS`).
   * @param nowMs monotonic now; counts as the first renewal (the worker registers at start).
   */
  constructor(
    private readonly leaseTtlMs: number,
    nowMs: number,
    marginMs = Math.min(LEASE_MARGIN_MS, leaseTtlMs / 4),
  ) {
    this.limitMs = Math.max(1, leaseTtlMs - marginMs);
    this.lastSentMs = nowMs;
  }

  /**
   * A heartbeat sent at `sentAtMs` was taken by Redis at or before `nowMs`. The entry expired
   * in between when the previous one was sent more than a lease before this one landed.
   */
  renewed(sentAtMs: number, nowMs: number): void {
    if (nowMs - this.lastSentMs > this.limitMs) this.lastGapEndMs = nowMs;
    this.lastSentMs = Math.max(this.lastSentMs, sentAtMs);
  }

  /**
   * Null when the lease has held without a gap since `sinceMs` (monotonic); otherwise why not,
   * in words for the refusal's detail.
   */
  gapSince(sinceMs: number, nowMs: number): string | null {
    const silentMs = Math.round(nowMs - this.lastSentMs);
    if (silentMs > this.limitMs) return `no heartbeat reached Redis for ${silentMs} ms (lease ${this.leaseTtlMs} ms): the worker was frozen or cut off`;
    if (this.lastGapEndMs >= sinceMs) return `the worker's lease may have lapsed since it accepted the job (a silence of more than ${this.limitMs} ms ended ${Math.round(nowMs - this.lastGapEndMs)} ms ago)`;
    return null;
  }
}
