/**
 * How a failed result (`ResultItem`) counts as a failed attempt: its reason, event type and
 * message. One mapping for plain executions (replies.ts) and broadcast shards (broadcast.ts), so
 * a shard and a whole task that fail alike are told alike. Pure.
 */
import type { ResultItem } from '@ax/core';

/** The failure a result reports (a subset of `Failure` in attempts.ts). */
export interface ResultFailure {
  readonly reason: 'TIMEOUT' | 'WORKER_RESTART' | 'JOB_FAILED';
  readonly eventType: 'TIMED_OUT' | 'WORKER_RESTART' | 'FAILED';
  readonly message: string;
}

/** The failure of a result that did not succeed; the detail is its error, else its exit code. */
export function failureOf(item: ResultItem): ResultFailure {
  const detail = item.error ?? (item.exitCode == null ? 'no detail' : `exit code ${item.exitCode}`);
  switch (item.outcome) {
    case 'TIMEOUT':
      return { reason: 'TIMEOUT', eventType: 'TIMED_OUT', message: `timed out: ${detail}` };
    case 'WORKER_RESTART':
      return { reason: 'WORKER_RESTART', eventType: 'WORKER_RESTART', message: `the worker restarted: ${detail}` };
    default:
      return { reason: 'JOB_FAILED', eventType: 'FAILED', message: `${item.outcome.toLowerCase()}: ${detail}` };
  }
}
