/**
 * Timers that keep their word (#22: "retry backoff is up to a second late"). A timed
 * transition is a predicate on the database clock (R6, R7) that the timers scan finds up to
 * `AX_TIMERS_POLL_MS` late. So a pass also runs at the moment the next known one falls due:
 *
 * - retries (RETRY_WAIT → PENDING): when this broker schedules one (failAttempt), and whenever a
 *   pass finds one due within the next poll period (retries of any broker, after a restart);
 * - ACK expiry (R8, `ack_deadline + 3 s` → re-route): whenever a timers pass finds a deadline
 *   that expires within the next poll period.
 *
 * The scanned predicate still owns the transition: a wake only runs the pass sooner. One timer
 * per kind and broker, for the earliest wake only; the poll stays as the fallback, so a lost
 * timer costs at most what it cost before.
 */

/** A single "run at the earliest of these moments" timer. */
export class EarliestWake {
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
 * The wake for the next transition due in `dueInMs` on the database clock: a millisecond after it
 * (DATETIME(3) rounds), or a short pause when one is due already but was not moved (another
 * broker holds its row: SKIP LOCKED), so the pass does not spin.
 */
export function wakeDelayMs(dueInMs: number): number {
  return dueInMs <= 0 ? 25 : Math.ceil(dueInMs) + 2;
}
