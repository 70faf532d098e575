/** What every executor (shell, http, plugin, python, sql) takes and gives back. */
import type { DispatchItem, LogStream, ResultOutcome } from '@ax/core';
import type { StopSignal } from '../stop-switch.js';
import type { SecretMask } from './secret-mask.js';

/**
 * Where an executor writes the attempt's output (DESIGN §11 "Job output"): the worker ships it,
 * stdout and stderr apart, in chunks with their byte offsets (`logs/attempt-log.ts`). Writes
 * never block and never throw; past `AX_LOG_MAX_BYTES` they are kept only as each stream's tail.
 */
export interface OutputSink {
  /** The secret values the run resolved; called before the first write that could hold one. */
  useMask(mask: SecretMask): void;
  /** Bytes the job wrote to `stream` (a string is written as UTF-8). */
  write(stream: LogStream, data: Buffer | string): void;
}

/** Why a run was stopped from outside. */
export type StopReason = 'cancel' | 'shutdown';

/** One run of one dispatch item. */
export interface ExecutionRequest {
  readonly item: DispatchItem;
  /** When the attempt times out, epoch ms by the worker's clock. */
  readonly deadlineMs: number;
  /** Aborted to stop the run early; `signal.reason` is a `StopReason`. */
  readonly signal: StopSignal;
  /**
   * Called with the job's process group and its leader's start time once the process exists and
   * BEFORE the job itself starts (R13): the caller records them in the outbox.
   */
  readonly onSpawn?: (pgid: number, procStart: string) => void;
  /** The attempt's output goes here as well as into the result's tail; default: the tail only. */
  readonly output?: OutputSink;
  /**
   * Asked at the last moment before the job's first side effect (the HTTP request written to
   * its socket, the spawned process let through its gate): a string says why the job must not
   * start now (#23: the worker was frozen or lost its lease meanwhile, so the broker may have
   * given the run to another worker). The executor then returns `notStartedOutcome(reason)`
   * without the side effect. Absent or null: go.
   */
  readonly mayStart?: () => string | null;
  /**
   * The `traceparent` of the worker's execution span (#48), present when tracing is on: an HTTP
   * call is its child span and sends the W3C `traceparent` header; a shell or python job gets it
   * as `TRACEPARENT` (job-traceparent.ts).
   */
  readonly traceparent?: string;
}

/** How a run ended (the executor-specific part of a result item). */
export interface ExecutionOutcome {
  readonly outcome: ResultOutcome;
  /** Exit code (shell, plugin runner), HTTP status (http); null when killed by a signal. */
  readonly exitCode?: number | null;
  readonly outputTail?: string;
  readonly outputTruncated?: boolean;
  readonly error?: string;
  readonly data?: Record<string, unknown>;
  /** HTTP 202: accepted, the business reports later (R15). */
  readonly async?: boolean;
  /** True when the job's side effect never happened (`mayStart` said no): reported as a refusal. */
  readonly notStarted?: boolean;
}

/** An executor of one exec type. */
export interface Executor {
  run(request: ExecutionRequest): Promise<ExecutionOutcome>;
}

/** The outcome of a job that `mayStart` kept from starting (no side effect happened). */
export function notStartedOutcome(reason: string): ExecutionOutcome {
  return { outcome: 'FAILED', exitCode: null, error: `not started: ${reason}`, notStarted: true };
}

/** The outcome of a run stopped from outside. */
export function stoppedOutcome(reason: unknown): { outcome: 'CANCELED' | 'WORKER_RESTART'; error: string } {
  return reason === 'shutdown'
    ? { outcome: 'WORKER_RESTART', error: 'killed: the worker shut down before the job ended' }
    : { outcome: 'CANCELED', error: 'canceled' };
}
