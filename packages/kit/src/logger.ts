/**
 * JSON logs (pino) for every service. Each line carries `service`, `pid` and `hostname`; work
 * on a task carries its context through a child logger (`withLogContext`) with the standard
 * field names `taskName`, `instanceId`, `executionId`, `traceId`, so one `grep` on an id follows
 * a run through every service. Secrets are redacted before a line is written.
 */
import os from 'node:os';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './ax-config.js';

export type { Logger } from 'pino';

/** Replacement written in place of a redacted value. */
export const REDACTED = '[REDACTED]';

const SECRET_KEYS = [
  'authorization',
  'Authorization',
  'cookie',
  'password',
  'secret',
  'token',
  'accessToken',
  'refreshToken',
  'adminToken',
  'executorSecret',
  'apiKey',
  'AX_ADMIN_TOKEN',
  'AX_EXECUTOR_SECRET',
];

/**
 * Paths redacted in every log line (pino/fast-redact syntax; `*` matches one level). Covers
 * HTTP authorization and cookie headers, a task's `exec.headers` and `exec.env` (whose values
 * may be secrets), and fields named like tokens or passwords up to two levels deep.
 */
export const LOG_REDACT_PATHS: readonly string[] = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  ...SECRET_KEYS.map((k) => `*.*.${k}`),
  'headers.authorization',
  'headers.cookie',
  'headers["set-cookie"]',
  'headers["x-ax-signature"]',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["set-cookie"]',
  '*.headers["x-ax-signature"]',
  '*.*.headers.authorization',
  'exec.headers',
  'exec.env',
  '*.exec.headers',
  '*.exec.env',
  '*.*.exec.headers',
  '*.*.exec.env',
];

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

/** Creates the process's root logger. */
export function createLogger(options: LoggerOptions): Logger {
  const opts = {
    level: options.level ?? 'info',
    base: { service: options.service, pid: process.pid, hostname: os.hostname(), ...options.base },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: [...LOG_REDACT_PATHS], censor: REDACTED },
    serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
  };
  return options.destination ? pino(opts, options.destination) : pino(opts);
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
