/**
 * The services' tracing (#48), behind one small interface so no service names OpenTelemetry.
 *
 * Off unless the standard OpenTelemetry variables ask for traces (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_TRACES_EXPORTER` other than `none`; never with
 * `OTEL_SDK_DISABLED=true`): then the OpenTelemetry SDK and its OTLP exporter are imported
 * (otel-tracer.ts). Off, nothing of OpenTelemetry is loaded and a span is a string: the run's
 * `traceparent` passes through unchanged, so logs still carry the run's trace id.
 */
import type { Logger } from 'pino';
import { newTraceparent } from './traceparent.js';

export type SpanKindName = 'internal' | 'server' | 'client' | 'producer' | 'consumer';
export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

/** Options of {@link AxTracer.startSpan}. */
export interface StartSpanOptions {
  /** The parent's `traceparent`; absent, null or invalid: the span starts a new trace. */
  readonly parent?: string | null | undefined;
  readonly kind?: SpanKindName;
  /** Epoch milliseconds; default now. */
  readonly startTime?: number;
  readonly attributes?: SpanAttributes;
}

/** A started span. */
export interface AxSpan {
  /** The `traceparent` naming this span: what its children and the next hop take as parent. */
  readonly traceparent: string;
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed (status ERROR) with `message`. */
  fail(message: string): void;
  /** Ends the span (at `endTime` epoch ms, default now); a span not ended is never exported. */
  end(endTime?: number): void;
}

/** The tracer of a service. */
export interface AxTracer {
  /** Spans are recorded and exported. */
  readonly enabled: boolean;
  startSpan(name: string, options?: StartSpanOptions): AxSpan;
  /** Exports what is buffered. */
  flush(): Promise<void>;
  /** Flushes and stops the exporter (a service's shutdown). */
  shutdown(): Promise<void>;
}

/** A span of the tracer that is off: the parent's context, or a fresh one for a root. */
class PassThroughSpan implements AxSpan {
  constructor(readonly traceparent: string) {}
  setAttributes(): void {}
  fail(): void {}
  end(): void {}
}

/** The tracer when tracing is off: no span is recorded, contexts pass through. */
export const NOOP_TRACER: AxTracer = {
  enabled: false,
  startSpan: (_name, options) => new PassThroughSpan(options?.parent ?? newTraceparent()),
  flush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

/** Whether the standard OpenTelemetry variables in `env` ask for exported traces. */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase();
  if (exporters === 'none') return false;
  if (exporters !== '') return true;
  return (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').trim() !== '' || (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? '').trim() !== '';
}

/** Options of {@link startTracing}. */
export interface StartTracingOptions {
  /** `service.name` unless `OTEL_SERVICE_NAME` says otherwise, e.g. `ax-broker`. */
  readonly serviceName: string;
  readonly logger: Logger;
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * The service's tracer: {@link NOOP_TRACER} unless {@link tracingWanted}; then the OpenTelemetry
 * SDK, imported now. Throws a `ConfigError` naming the variable for a value it cannot use.
 */
export async function startTracing(options: StartTracingOptions): Promise<AxTracer> {
  const env = options.env ?? process.env;
  if (!tracingWanted(env)) return NOOP_TRACER;
  const { createOtelTracer } = await import('./otel-tracer.js');
  const tracer = await createOtelTracer(options.serviceName, env, options.logger);
  options.logger.info({ serviceName: env.OTEL_SERVICE_NAME ?? options.serviceName }, 'tracing on: spans exported by OpenTelemetry');
  return tracer;
}
