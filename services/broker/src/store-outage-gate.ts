/**
 * Turn-taking while the store fails (issue #23). The dead-letter consumer holds its deliveries
 * unacked while MySQL is away; this gate decides when one of them may try again: at once while
 * the store is healthy, otherwise one attempt at a time, each after a capped exponential
 * backoff with ±20 % jitter (habit 6). So an outage costs one insert attempt (and one log line)
 * per pause, however many deliveries are held, and never a hot loop.
 */

/** Options of {@link StoreOutageGate}. */
export interface StoreOutageGateOptions {
  /** Pause before the first retry after a failure, ms. Default 500. Doubles per failure. */
  readonly initialDelayMs?: number;
  /** Longest pause between two attempts while the store fails, ms. Default 15000. */
  readonly maxDelayMs?: number;
  /** Random numbers in [0, 1) for the jitter. Default `Math.random`. */
  readonly random?: () => number;
}

/** A permission to make one attempt; `release()` it when the attempt is over. */
export interface GateTurn {
  /** Whether the gate was failing when the turn was taken (a retry, not a first attempt). */
  readonly retry: boolean;
  release(): void;
}

const FREE_TURN: GateTurn = { retry: false, release: () => undefined };

/** The pause after `failures` consecutive failures (pure): `initial · 2^(failures−1)`, capped, ±20 %. */
export function outageDelayMs(failures: number, initialDelayMs: number, maxDelayMs: number, random: () => number): number {
  const base = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(Math.max(failures - 1, 0), 30));
  return Math.round(base * (0.8 + random() * 0.4));
}

/** Resolves true once `promise` settles, false when `signal` aborts first. */
function untilOrAbort(promise: Promise<void>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    });
  });
}

/** Sleeps `ms`; resolves false when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** See the file comment. */
export class StoreOutageGate {
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly random: () => number;
  private failures = 0;
  private nextDelayMs = 0;
  private failingSinceMs: number | undefined;
  /** Settles when the last turn queued so far is released. */
  private tail: Promise<void> = Promise.resolve();

  constructor(options: StoreOutageGateOptions = {}) {
    this.initialDelayMs = options.initialDelayMs ?? 500;
    this.maxDelayMs = options.maxDelayMs ?? 15_000;
    this.random = options.random ?? Math.random;
  }

  /** Consecutive failures since the last success (0: healthy). */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /**
   * Waits for a turn: none while healthy; otherwise after the turns queued before it and the
   * backoff pause. Null when `signal` aborted meanwhile (the caller gives its delivery back).
   */
  async enter(signal: AbortSignal): Promise<GateTurn | null> {
    if (signal.aborted) return null;
    if (this.failures === 0) return FREE_TURN;
    const previous = this.tail;
    let resolveMine!: () => void;
    this.tail = new Promise<void>((resolve) => {
      resolveMine = resolve;
    });
    let released = false;
    const turn: GateTurn = {
      retry: true,
      release: () => {
        if (released) return;
        released = true;
        resolveMine();
      },
    };
    if (!(await untilOrAbort(previous, signal))) {
      // Keep the queue in order: this turn ends when the one before it does.
      void previous.then(() => turn.release());
      return null;
    }
    // The store came back while this turn waited: go at once.
    if (this.failures === 0) return turn;
    if (!(await pause(this.nextDelayMs, signal))) {
      turn.release();
      return null;
    }
    return turn;
  }

  /** Records a success; the outage it ended lasted this many ms (undefined: there was none). */
  succeeded(): number | undefined {
    const since = this.failingSinceMs;
    this.failures = 0;
    this.failingSinceMs = undefined;
    return since === undefined ? undefined : Date.now() - since;
  }

  /**
   * Records a retryable failure of an attempt made on `turn`; returns the pause before the next
   * attempt. First attempts that fail together (deliveries in flight when the store went away)
   * count as one failure.
   */
  failed(turn: GateTurn): number {
    if (turn.retry || this.failures === 0) {
      this.failures += 1;
      this.nextDelayMs = outageDelayMs(this.failures, this.initialDelayMs, this.maxDelayMs, this.random);
    }
    this.failingSinceMs ??= Date.now();
    return this.nextDelayMs;
  }
}
