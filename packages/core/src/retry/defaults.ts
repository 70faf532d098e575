/**
 * The retry policy's defaults, in the one place every reader takes them from: the task schema
 * (a missing or partial `retry`), the store and the broker (a stored `retry` missing a field),
 * the console (the new task's starting document). No imports, so the console's browser bundle
 * takes it through the `@ax/core/retry-defaults` entry without zod.
 */
import type { BackoffPolicy } from './backoff.js';

/** The retry policy a task gets when it names none, and that fills a partial `retry`. */
export const DEFAULT_RETRY = Object.freeze({ max: 0, backoffSeconds: 30, factor: 2, jitterSeconds: 10 });

/**
 * The backoff fields of a stored `retry` document (the `task.retry` JSON column), a missing field
 * taking its default: rows written before a field existed, or by hand, still retry on the
 * documented timing.
 */
export function backoffPolicyOf(stored: Readonly<Record<string, unknown>>): BackoffPolicy {
  return {
    backoffSeconds: Number(stored.backoffSeconds ?? DEFAULT_RETRY.backoffSeconds),
    factor: Number(stored.factor ?? DEFAULT_RETRY.factor),
    jitterSeconds: Number(stored.jitterSeconds ?? DEFAULT_RETRY.jitterSeconds),
  };
}
