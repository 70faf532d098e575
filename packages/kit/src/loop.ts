/**
 * Background loops (CONVENTIONS habit 6). A loop runs `run` every `intervalMs`, one iteration at
 * a time; it never throws: a failed iteration is logged with the loop's name and retried after
 * an exponential, jittered backoff. `wake()` runs it early (an event says there is work);
 * `stop()` resolves once the current iteration has ended.
 */
import type { Logger } from 'pino';
import { toError } from './errors.js';

/** Timer functions; injectable for tests. */
export interface LoopTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: LoopTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Options of `startBackgroundLoop`. */
export interface BackgroundLoopOptions {
  /** Name in every log line (`refill`, `ack-expiry`…). */
  readonly name: string;
  /** Pause between the end of a successful iteration and the start of the next, in ms. */
  readonly intervalMs: number;
  /** One iteration. `signal` is aborted when the loop stops. */
  readonly run: (signal: AbortSignal) => Promise<void> | void;
  readonly logger: Logger;
  /**
   * Random spread of every pause, as a fraction of it: 0.1 = ±10 %. Default 0.1, so several
   * processes running the same loop drift apart.
   */
  readonly jitter?: number;
  /** First pause after a failure, in ms; default `min(intervalMs, 1000)`. Doubles per failure. */
  readonly backoffInitialMs?: number;
  /** Longest pause after failures, in ms; default `max(30000, intervalMs)`. */
  readonly backoffMaxMs?: number;
  /** Pause before the first iteration, in ms; default 0 (run at once). */
  readonly initialDelayMs?: number;
  /** Timer functions; default the global ones. */
  readonly timers?: LoopTimers;
  /** Random source in [0, 1); default `Math.random`. */
  readonly random?: () => number;
}

/** A running loop. */
export interface BackgroundLoop {
  readonly name: string;
  /**
   * Runs the next iteration as soon as possible: at once when idle, right after the current
   * one when running. During a failure backoff the backoff is kept (a flood of events must not
   * hammer a dependency that is down).
   */
  wake(): void;
  /** Stops the loop; resolves when the running iteration (if any) has ended. Idempotent. */
  stop(): Promise<void>;
  /** Consecutive failed iterations (0 after a success). */
  readonly consecutiveFailures: number;
  /** Whether an iteration is running now. */
  readonly running: boolean;
  /** Completed iterations, successful or not. */
  readonly iterations: number;
}

/** Pause before the next iteration after `failures` consecutive failures (0 = success). */
export function loopDelayMs(
  failures: number,
  opts: { intervalMs: number; backoffInitialMs: number; backoffMaxMs: number; jitter: number },
  random: () => number,
): number {
  const base =
    failures === 0 ? opts.intervalMs : Math.min(opts.backoffMaxMs, opts.backoffInitialMs * 2 ** Math.min(failures - 1, 30));
  const spread = base * opts.jitter * (2 * random() - 1);
  return Math.max(0, Math.round(base + spread));
}

/** Starts a loop; the first iteration runs after `initialDelayMs`. */
export function startBackgroundLoop(options: BackgroundLoopOptions): BackgroundLoop {
  const { name, logger } = options;
  const timers = options.timers ?? realTimers;
  const random = options.random ?? Math.random;
  const delayOpts = {
    intervalMs: options.intervalMs,
    jitter: options.jitter ?? 0.1,
    backoffInitialMs: options.backoffInitialMs ?? Math.min(options.intervalMs, 1_000),
    backoffMaxMs: options.backoffMaxMs ?? Math.max(30_000, options.intervalMs),
  };
  const controller = new AbortController();
  let stopped = false;
  let current: Promise<void> | undefined;
  // Set before `run` is called, so a `wake()` from inside `run` cannot start a second iteration.
  let busy = false;
  let timer: unknown;
  let wakeRequested = false;
  let failures = 0;
  let iterations = 0;

  const schedule = (ms: number): void => {
    if (stopped) return;
    timer = timers.setTimeout(() => {
      timer = undefined;
      tick();
    }, ms);
  };

  const iterate = async (): Promise<void> => {
    try {
      await options.run(controller.signal);
      if (failures > 0) logger.info({ loop: name, failures }, 'loop recovered');
      failures = 0;
    } catch (error) {
      failures += 1;
      if (!stopped) {
        logger.error({ err: toError(error), loop: name, consecutiveFailures: failures }, 'loop iteration failed');
      }
    } finally {
      iterations += 1;
    }
  };

  function tick(): void {
    if (stopped || busy) return;
    busy = true;
    wakeRequested = false;
    current = iterate().finally(() => {
      busy = false;
      current = undefined;
      if (stopped) return;
      schedule(wakeRequested && failures === 0 ? 0 : loopDelayMs(failures, delayOpts, random));
    });
  }

  schedule(options.initialDelayMs ?? 0);

  return {
    name,
    wake: () => {
      if (stopped) return;
      if (busy) {
        wakeRequested = true;
        return;
      }
      if (failures > 0) return;
      if (timer !== undefined) {
        timers.clearTimeout(timer);
        timer = undefined;
      }
      tick();
    },
    stop: async () => {
      if (!stopped) {
        stopped = true;
        controller.abort();
        if (timer !== undefined) {
          timers.clearTimeout(timer);
          timer = undefined;
        }
      }
      await current;
    },
    get consecutiveFailures() {
      return failures;
    },
    get running() {
      return busy;
    },
    get iterations() {
      return iterations;
    },
  };
}
