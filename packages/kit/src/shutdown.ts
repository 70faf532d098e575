/**
 * Graceful shutdown. A service registers a closer for everything it starts, in start order
 * (pool, clients, loops, server…); on SIGTERM or SIGINT the closers run one by one in reverse
 * order within an overall grace (`AX_SHUTDOWN_GRACE_S`). Exit code 0 when every closer finished
 * cleanly, 1 when one failed or the grace ran out; a second signal exits at once with 1.
 *
 * The process-like emitter and `exit` are injectable, so tests drive it without signals.
 */
import type { Logger } from 'pino';
import { toError } from './errors.js';

/** The part of `process` this module uses. */
export interface SignalSource {
  on(event: NodeJS.Signals, listener: () => void): unknown;
  off(event: NodeJS.Signals, listener: () => void): unknown;
}

/** Something to stop; may be async. */
export type Closer = () => void | Promise<void>;

/** Options of `createShutdown`. */
export interface ShutdownOptions {
  readonly logger: Logger;
  /** Overall time the closers may take, in milliseconds (`AX_SHUTDOWN_GRACE_S × 1000`). */
  readonly graceMs: number;
  /** Signals that start the shutdown; default SIGTERM and SIGINT. */
  readonly signals?: readonly NodeJS.Signals[];
  /** Where signals come from; default `process`. */
  readonly process?: SignalSource;
  /** Ends the process; default `process.exit`. */
  readonly exit?: (code: number) => void;
}

/** The shutdown coordinator of a process. */
export interface Shutdown {
  /** Registers a closer; closers run in reverse registration order. */
  register(name: string, close: Closer): void;
  /**
   * Runs the closers now (as a signal would) and then exits; resolves with the exit code once
   * `exit` was called. Calling it again returns the same promise.
   */
  shutdown(reason: string): Promise<number>;
  /** Whether the shutdown has begun. */
  readonly isShuttingDown: boolean;
  /** Aborted when the shutdown begins: loops and long waits can listen to it. */
  readonly signal: AbortSignal;
  /** Removes the signal listeners (for tests; a service never needs it). */
  dispose(): void;
}

/** Creates the coordinator and installs its signal handlers. */
export function createShutdown(options: ShutdownOptions): Shutdown {
  const { logger, graceMs } = options;
  const source: SignalSource = options.process ?? process;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const closers: Array<{ name: string; close: Closer }> = [];
  const controller = new AbortController();
  let running: Promise<number> | undefined;
  let exited = false;

  const exitOnce = (code: number): void => {
    if (exited) return;
    exited = true;
    dispose();
    exit(code);
  };

  const runClosers = async (): Promise<boolean> => {
    let clean = true;
    for (const { name, close } of [...closers].reverse()) {
      const started = Date.now();
      try {
        await close();
        logger.info({ closer: name, durationMs: Date.now() - started }, 'shutdown: closed');
      } catch (error) {
        clean = false;
        logger.error({ err: toError(error), closer: name, durationMs: Date.now() - started }, 'shutdown: closer failed');
      }
    }
    return clean;
  };

  const shutdown = (reason: string): Promise<number> => {
    running ??= (async () => {
      controller.abort();
      logger.info({ reason, graceMs, closers: closers.length }, 'shutdown: started');
      let timer: NodeJS.Timeout | undefined;
      // Kept referenced on purpose: a closer awaiting something that holds no handle must not
      // let the event loop empty and the process exit 0 before the grace decides.
      const graceOver = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), graceMs);
      });
      const outcome = await Promise.race([runClosers(), graceOver]);
      clearTimeout(timer);
      let code: number;
      if (outcome === 'timeout') {
        logger.error({ graceMs }, 'shutdown: grace period over, exiting with work unfinished');
        code = 1;
      } else if (outcome) {
        logger.info('shutdown: clean');
        code = 0;
      } else {
        logger.warn('shutdown: finished with errors');
        code = 1;
      }
      exitOnce(code);
      return code;
    })();
    return running;
  };

  const handlers = signals.map((sig) => {
    const handler = (): void => {
      if (running) {
        logger.warn({ signal: sig }, 'shutdown: second signal, exiting now');
        exitOnce(1);
        return;
      }
      void shutdown(sig);
    };
    source.on(sig, handler);
    return { sig, handler };
  });

  function dispose(): void {
    for (const { sig, handler } of handlers) source.off(sig, handler);
  }

  return {
    register: (name, close) => {
      if (running) throw new Error(`shutdown already started; cannot register ${name}`);
      closers.push({ name, close });
    },
    shutdown,
    get isShuttingDown() {
      return running !== undefined;
    },
    signal: controller.signal,
    dispose,
  };
}
