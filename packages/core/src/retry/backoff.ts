/**
 * Retry timing (DESIGN §4, §8): exponential backoff with jitter, capped at one hour.
 * Pure: the random source is passed in, so a test (or a replay) gets the same delays.
 */

/** Longest delay before a retry, milliseconds (DESIGN §8: "backoff capped at 1 h"). */
export const MAX_RETRY_DELAY_MS = 3_600_000;

/** The retry fields that shape the delay (a task's `retry`). */
export interface BackoffPolicy {
  /** Delay before the first retry, seconds. */
  backoffSeconds: number;
  /** Each further retry waits `factor` times longer (≥ 1). */
  factor: number;
  /** Up to this many random seconds are added to each delay. */
  jitterSeconds: number;
}

/**
 * Milliseconds to wait before retrying after failed attempt number `failedAttempt` (1 = the
 * first attempt failed): `backoffSeconds · factor^(failedAttempt−1) + random()·jitterSeconds`,
 * in ms, rounded, at most `maxDelayMs`.
 *
 * @param random a source of numbers in [0, 1) (values outside are clamped), e.g. `Math.random`
 *   in services and a fixed function in tests.
 * @param maxDelayMs the cap, default `MAX_RETRY_DELAY_MS` (1 h).
 * @throws RangeError when `failedAttempt` is not an integer ≥ 1.
 */
export function retryDelayMs(
  retry: BackoffPolicy,
  failedAttempt: number,
  random: () => number,
  maxDelayMs: number = MAX_RETRY_DELAY_MS,
): number {
  if (!Number.isInteger(failedAttempt) || failedAttempt < 1) {
    throw new RangeError(`failedAttempt must be an integer ≥ 1, got ${failedAttempt}`);
  }
  const baseMs = Math.max(0, retry.backoffSeconds) * 1000;
  const factor = Math.max(1, retry.factor);
  // 0 · ∞ would be NaN: a zero base stays zero however many attempts failed.
  const exponentialMs = baseMs === 0 ? 0 : baseMs * factor ** (failedAttempt - 1);
  const unit = Math.min(Math.max(random(), 0), 1);
  const jitterMs = unit * Math.max(0, retry.jitterSeconds) * 1000;
  const total = exponentialMs + jitterMs;
  return Math.round(Number.isNaN(total) ? maxDelayMs : Math.min(total, maxDelayMs));
}

/** Attempts one run may make: the first plus `retry.max` retries. */
export function maxAttemptsOf(retry: { max: number }): number {
  return Math.max(0, Math.floor(retry.max)) + 1;
}

/**
 * Attempts still allowed after attempt number `attempt` (1-based) of `maxAttempts`; 0 means the
 * failure is final. Never negative.
 */
export function attemptsLeft(attempt: number, maxAttempts: number): number {
  return Math.max(0, maxAttempts - attempt);
}
