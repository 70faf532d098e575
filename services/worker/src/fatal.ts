/**
 * The worker's policy for errors nobody handled (issue #23): an `unhandledRejection` or an
 * `uncaughtException` leaves the process in an unknown state, so it is logged as one line with
 * the ids in hand (the logger carries the worker id; the executions held are listed), what can
 * be flushed is flushed within a short bound (results to RabbitMQ: the outbox and the publisher),
 * and the process exits non-zero for its supervisor to restart it. The registry entry is left to
 * expire, not removed: the restart reports every unfinished execution `WORKER_RESTART` (R13)
 * within the lease, so no job is half-accounted and none is declared lost meanwhile (R14).
 */
import { toError, type Logger } from '@ax/kit';

/** The part of `process` this module listens to. */
export interface FatalEventSource {
  on(event: 'unhandledRejection' | 'uncaughtException', listener: (error: unknown) => void): unknown;
  off(event: 'unhandledRejection' | 'uncaughtException', listener: (error: unknown) => void): unknown;
}

/** Options of `installFatalHandlers`. */
export interface FatalHandlerOptions {
  /** The process logger (it carries `workerId`). */
  readonly logger: Logger;
  /** Executions the worker holds now (running, waiting, or with a result not yet confirmed). */
  readonly executionIds?: () => readonly string[];
  /** Sends what can still be sent; given the time left, resolves true when everything went. */
  readonly flush?: (timeoutMs: number) => Promise<boolean>;
  /** Longest time the flush may take before the exit; default 5000 ms. */
  readonly flushTimeoutMs?: number;
  /** Exit code; default 1 (anything but 0 makes the supervisor restart it). */
  readonly exitCode?: number;
  /** Where the events come from; default `process`. */
  readonly process?: FatalEventSource;
  /** Ends the process; default `process.exit`. */
  readonly exit?: (code: number) => void;
}

/** The installed policy. */
export interface FatalHandlers {
  /** Resolves once the exit was called after the first fatal error (for tests). */
  readonly exited: Promise<number>;
  /** Removes the listeners. */
  dispose(): void;
}

/** Installs the handlers: on the first unexpected error log, flush within the bound, exit. */
export function installFatalHandlers(options: FatalHandlerOptions): FatalHandlers {
  const { logger } = options;
  const source: FatalEventSource = options.process ?? process;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const flushTimeoutMs = options.flushTimeoutMs ?? 5_000;
  const exitCode = options.exitCode ?? 1;
  let resolveExited: (code: number) => void = () => undefined;
  const exited = new Promise<number>((resolve) => (resolveExited = resolve));
  let handling = false;

  const idsInHand = (): readonly string[] => {
    try {
      return options.executionIds?.() ?? [];
    } catch {
      return []; // the worker's state is what failed: the log line still goes out
    }
  };

  const onFatal = (kind: 'unhandledRejection' | 'uncaughtException') => (reason: unknown) => {
    const err = toError(reason);
    if (handling) {
      // A second error while flushing (often the same fault): logged, the exit is already coming.
      logger.error({ err, kind }, 'another unexpected error while exiting');
      return;
    }
    handling = true;
    logger.fatal({ err, kind, executionIds: idsInHand(), flushTimeoutMs }, `unexpected error (${kind}): flushing and exiting with ${exitCode} for a restart`);
    void (async () => {
      let flushed: boolean | 'timeout' = false;
      let timer: NodeJS.Timeout | undefined;
      try {
        const bound = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), flushTimeoutMs)));
        flushed = options.flush === undefined ? true : await Promise.race([options.flush(flushTimeoutMs), bound]);
      } catch (error) {
        logger.error({ err: toError(error) }, 'flush before exit failed');
      } finally {
        clearTimeout(timer);
      }
      if (flushed !== true) logger.error({ flushed, executionIds: idsInHand() }, 'exiting with results unconfirmed: the restart replays the outbox and reports WORKER_RESTART');
      dispose();
      exit(exitCode);
      resolveExited(exitCode);
    })();
  };

  const onRejection = onFatal('unhandledRejection');
  const onException = onFatal('uncaughtException');
  source.on('unhandledRejection', onRejection);
  source.on('uncaughtException', onException);

  function dispose(): void {
    source.off('unhandledRejection', onRejection);
    source.off('uncaughtException', onException);
  }

  return { exited, dispose };
}
