/**
 * Precise retry timers (#22: "retry backoff is up to a second late"). A RETRY_WAIT instance
 * becomes PENDING when its `due_at` (database clock, R6) has passed; the timers scan alone finds
 * it up to `AX_TIMERS_POLL_MS` late. So the retries pass also runs at the moment the next known
 * retry falls due: when this broker schedules one (failAttempt), and whenever a pass finds one
 * due within the next poll period (retries of any broker, after a restart). One timer per
 * broker, for the earliest wake only; the poll stays as the fallback, so a lost timer costs at
 * most what it cost before.
 */

/** A single "run at the earliest of these moments" timer. */
export class RetryWakeups {
  private timer: NodeJS.Timeout | undefined;
  private atMs = Number.POSITIVE_INFINITY;
  private stopped = false;

  constructor(
    private readonly fire: () => void,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** Runs `fire` in `delayMs` unless an earlier wake is already set. */
  in(delayMs: number): void {
    if (this.stopped) return;
    const at = this.nowMs() + Math.max(0, delayMs);
    if (at >= this.atMs) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.atMs = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.atMs = Number.POSITIVE_INFINITY;
      this.fire();
    }, Math.max(0, delayMs));
    this.timer.unref();
  }

  /** Whether a wake is set (for tests). */
  get pending(): boolean {
    return this.timer !== undefined;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * The wake for the next retry due in `dueInMs` on the database clock: a millisecond after it
 * (DATETIME(3) rounds), or a short pause when one is due already but was not moved (another
 * broker holds its row: SKIP LOCKED), so the pass does not spin.
 */
export function wakeDelayMs(dueInMs: number): number {
  return dueInMs <= 0 ? 25 : Math.ceil(dueInMs) + 2;
}
