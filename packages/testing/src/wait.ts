/**
 * Polling for an outcome in tests that involve other processes or servers (in-process logic
 * uses an injected clock instead). The condition is met when `fn` returns without throwing a
 * value other than `false`, `null` or `undefined`.
 */
import { inspect } from 'node:util';

/** Options of `waitFor`. */
export interface WaitForOptions {
  /** What is awaited, for the error message: "worker w1 registered". */
  readonly description: string;
  /** Give up after this many ms; default 5000. */
  readonly timeoutMs?: number;
  /** Pause between attempts in ms; default 50. */
  readonly intervalMs?: number;
}

/** A met condition: its value, how long it took and how many attempts. */
export interface WaitResult<T> {
  readonly value: T;
  readonly elapsedMs: number;
  readonly attempts: number;
}

/** Thrown when the condition was not met in time. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
  constructor(
    readonly description: string,
    readonly elapsedMs: number,
    readonly attempts: number,
    readonly lastValue: unknown,
    readonly lastError: unknown,
  ) {
    const last =
      lastError !== undefined
        ? `last error: ${lastError instanceof Error ? lastError.message : inspect(lastError)}`
        : `last value: ${inspect(lastValue, { depth: 3, breakLength: Infinity })}`;
    super(`timed out after ${elapsedMs} ms (${attempts} attempts) waiting for ${description}; ${last}`, {
      cause: lastError,
    });
  }
}

type Met<T> = Exclude<T, false | null | undefined>;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const PENDING = Symbol('pending');

/** Polls `fn` until it yields a value (see module doc); resolves with value, elapsed ms and attempts. */
export async function waitForResult<T>(fn: () => T | Promise<T>, options: WaitForOptions): Promise<WaitResult<Met<T>>> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const intervalMs = options.intervalMs ?? 50;
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  let attempts = 0;
  let lastValue: unknown;
  let lastError: unknown;
  for (;;) {
    attempts += 1;
    const remaining = timeoutMs - (performance.now() - started);
    let timer: NodeJS.Timeout | undefined;
    try {
      const outcome = await Promise.race([
        Promise.resolve().then(fn),
        new Promise<typeof PENDING>((resolve) => {
          timer = setTimeout(() => resolve(PENDING), Math.max(0, remaining));
        }),
      ]);
      if (outcome === PENDING) {
        lastError = new Error(`attempt ${attempts} still running when the time ran out`);
      } else {
        lastValue = outcome;
        lastError = undefined;
        if (outcome !== false && outcome !== null && outcome !== undefined) {
          return { value: outcome as Met<T>, elapsedMs: elapsed(), attempts };
        }
      }
    } catch (error) {
      lastError = error;
    } finally {
      clearTimeout(timer);
    }
    if (performance.now() - started >= timeoutMs) {
      throw new WaitTimeoutError(options.description, elapsed(), attempts, lastValue, lastError);
    }
    await sleep(Math.min(intervalMs, Math.max(0, timeoutMs - (performance.now() - started))));
  }
}

/** Polls `fn` until it yields a value (see module doc) and returns it; throws `WaitTimeoutError`. */
export async function waitFor<T>(fn: () => T | Promise<T>, options: WaitForOptions): Promise<Met<T>> {
  return (await waitForResult(fn, options)).value;
}
