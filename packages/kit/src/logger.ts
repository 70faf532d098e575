/**
 * JSON logs (pino) for every service. Each line carries `service`, `pid` and `hostname`; work
 * on a task carries its context through a child logger (`withLogContext`) with the standard
 * field names `taskName`, `instanceId`, `executionId`, `traceId`, so one `grep` on an id follows
 * a run through every service. Secrets are redacted before a line is written.
 */
import os from 'node:os';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './ax-config.js';
import { hideLoginArgs, redactSecrets } from './log-redact.js';

export type { Logger } from 'pino';

export { REDACTED, LOG_SECRET_KEYS } from './log-redact.js';

/** Options of `createLogger`. */
export interface LoggerOptions {
  /** Service name written as `service` on every line (`scheduler`, `broker`, …). */
  readonly service: string;
  /** Minimum level written; default `info` (AX_LOG_LEVEL). */
  readonly level?: LogLevel;
  /** Where lines go; default stdout (synchronous, so nothing is lost on exit). */
  readonly destination?: DestinationStream;
  /** Extra fields on every line. */
  readonly base?: Readonly<Record<string, unknown>>;
}

/** pino's error serializer, without a failed Redis login's password (log-redact.ts `hideLoginArgs`). */
const serializeError = (err: Error): unknown => hideLoginArgs(pino.stdSerializers.err(err));

/** Creates the process's root logger. */
export function createLogger(options: LoggerOptions): Logger {
  const opts = {
    level: options.level ?? 'info',
    base: { service: options.service, pid: process.pid, hostname: os.hostname(), ...options.base },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Secrets are hidden by our own walk over each line's fields and each child's bindings
    // (log-redact.ts), not by pino's `redact`, which cost more than a short job (#24).
    formatters: {
      level: (label: string) => ({ level: label }),
      bindings: (bindings: Record<string, unknown>) => redactSecrets(bindings),
      log: (object: Record<string, unknown>) => redactSecrets(object),
    },
    serializers: { err: serializeError, error: serializeError },
  };
  const logger = options.destination ? pino(opts, options.destination) : pino(opts);
  // pino applies the bindings formatter to the root only; a child is `Object.create(parent)`,
  // so a `child` set on the root is the one every descendant calls: its bindings are hidden too.
  type ChildFn = (this: Logger, bindings: Record<string, unknown>, childOptions?: object) => Logger;
  const proto = Object.getPrototypeOf(logger) as { child: ChildFn };
  const child: ChildFn = function (this: Logger, bindings, childOptions) {
    return proto.child.call(this, redactSecrets(bindings), childOptions);
  };
  logger.child = child as unknown as Logger['child'];
  return logger;
}

/** The standard context of work on a task; each field is optional. */
export interface LogContext {
  readonly taskName?: string | undefined;
  readonly instanceId?: string | number | bigint | undefined;
  readonly executionId?: string | undefined;
  readonly traceId?: string | undefined;
}

/**
 * A child logger carrying the given context (unset fields are left out, so a line never says
 * `"instanceId": undefined`). Other fields may be added, e.g. `{ loop: 'refill' }`.
 */
export function withLogContext(logger: Logger, context: LogContext & Readonly<Record<string, unknown>>): Logger {
  const bindings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(context)) {
    if (value === undefined) continue;
    bindings[key] = typeof value === 'bigint' ? value.toString() : value;
  }
  return logger.child(bindings);
}

/** A logger that writes nothing (for tests and tools). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
