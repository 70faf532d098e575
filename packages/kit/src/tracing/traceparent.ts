/**
 * W3C Trace Context `traceparent` values (https://www.w3.org/TR/trace-context/#traceparent-header):
 * `00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>`. Pure and dependency-free: a run's
 * context is one such string, stored on its instance row, carried in the dispatch item and sent
 * to HTTP executors, whether or not tracing is on (#48).
 */
import { randomBytes } from 'node:crypto';

/** One parsed `traceparent`. */
export interface TraceContext {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  readonly spanId: string;
  /** Bit 0 of the flags: the upstream decided to record this trace. */
  readonly sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * The context of `value`, or null for anything that is not a valid `traceparent` (the
 * specification's rule: an invalid header is ignored and a new trace starts). Version `ff` is
 * invalid; a later version is read by its version-00 prefix.
 */
export function parseTraceparent(value: string | null | undefined): TraceContext | null {
  if (typeof value !== 'string' || value.length > 512) return null;
  const m = TRACEPARENT.exec(value.trim());
  if (m === null) return null;
  const [, version, traceId, spanId, flags, rest] = m as unknown as [string, string, string, string, string, string | undefined];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/** The version-00 `traceparent` of `context`. */
export function formatTraceparent(context: TraceContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.sampled ? '01' : '00'}`;
}

/** A fresh random trace id (16 bytes, hex). */
export function newTraceId(): string {
  return randomBytes(16).toString('hex');
}

/** A fresh random span id (8 bytes, hex). */
export function newSpanId(): string {
  return randomBytes(8).toString('hex');
}

/** A `traceparent` of a new trace (sampled: the services' samplers decide whether they record). */
export function newTraceparent(): string {
  return formatTraceparent({ traceId: newTraceId(), spanId: newSpanId(), sampled: true });
}

/** The trace id of a `traceparent`, or null when it is not a valid one. */
export function traceIdOf(traceparent: string | null | undefined): string | null {
  return parseTraceparent(traceparent)?.traceId ?? null;
}
