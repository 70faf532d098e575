/**
 * Continuing ax's trace in a business service (#48). The worker sends the W3C `traceparent`
 * header of its call span when ax's tracing is on; `ctx.trace` exposes it parsed, with no
 * dependency. When the service has `@opentelemetry/api` installed (an optional peer dependency),
 * the handler runs inside a SERVER span that continues the trace, so the service's own spans
 * nest under ax's; without a registered tracer provider that span is a no-op.
 */
import type * as OtelApiModule from '@opentelemetry/api';

/** The caller's trace context, from the `traceparent` header. */
export interface AxTraceContext {
  /** 32 lowercase hex digits: the run's trace id (also `ctx.traceId` and ax's log lines). */
  readonly traceId: string;
  /** 16 hex digits: the span of ax's call (this service's span is its child). */
  readonly parentSpanId: string;
  /** ax recorded this trace (the `sampled` flag). */
  readonly sampled: boolean;
  /** The header as received. */
  readonly traceparent: string;
}

const HEX = /^[0-9a-f]+$/;

/**
 * The context of a `traceparent` value, or null when it is missing or invalid (the W3C rule:
 * ignore it). Version `ff` and all-zero ids are invalid; a future version is read by its first
 * four fields.
 */
export function parseTraceparent(header: string | undefined): AxTraceContext | null {
  if (header === undefined || header.length > 512) return null;
  const value = header.trim();
  const fields = value.split('-');
  const [version, traceId, spanId, flags] = fields;
  if (version === undefined || traceId === undefined || spanId === undefined || flags === undefined) return null;
  const valid =
    version.length === 2 && HEX.test(version) && version !== 'ff' && (version !== '00' || fields.length === 4) &&
    traceId.length === 32 && HEX.test(traceId) && !/^0+$/.test(traceId) &&
    spanId.length === 16 && HEX.test(spanId) && !/^0+$/.test(spanId) &&
    flags.length === 2 && HEX.test(flags);
  if (!valid) return null;
  return { traceId, parentSpanId: spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1, traceparent: value };
}

/** What the handler runs in: `run(fn)` inside the span, `end(error?)` after. */
export interface TraceScope {
  run<T>(fn: () => T): T;
  end(outcome: { readonly error?: unknown; readonly success?: boolean }): void;
}

type OtelApi = typeof OtelApiModule;

let otelApi: Promise<OtelApi | null> | undefined;

/** `@opentelemetry/api` when the service installed it, else null (asked once). */
function loadOtelApi(): Promise<OtelApi | null> {
  otelApi ??= import('@opentelemetry/api').then(
    (api) => api,
    () => null,
  );
  return otelApi;
}

const NO_SCOPE: TraceScope = { run: (fn) => fn(), end: () => undefined };

/**
 * The scope of one call: a SERVER span named `ax <taskName>` continuing `trace` on the service's
 * `@opentelemetry/api` tracer, or a pass-through when there is no context or no API.
 */
export async function traceScope(trace: AxTraceContext | null, call: { taskName: string; executionId: string; instanceId: string; attempt: number }): Promise<TraceScope> {
  if (trace === null) return NO_SCOPE;
  const api = await loadOtelApi();
  if (api === null) return NO_SCOPE;
  const parent = api.trace.setSpanContext(api.context.active(), {
    traceId: trace.traceId,
    spanId: trace.parentSpanId,
    traceFlags: trace.sampled ? api.TraceFlags.SAMPLED : api.TraceFlags.NONE,
    isRemote: true,
  });
  const span = api.trace.getTracer('ax-scheduler-sdk').startSpan(
    `ax ${call.taskName}`,
    {
      kind: api.SpanKind.SERVER,
      attributes: { 'ax.task.name': call.taskName, 'ax.execution.id': call.executionId, 'ax.instance.id': call.instanceId, 'ax.attempt': call.attempt },
    },
    parent,
  );
  const active = api.trace.setSpan(parent, span);
  return {
    run: (fn) => api.context.with(active, fn),
    end: ({ error, success }) => {
      if (error !== undefined) span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : 'the handler threw' });
      else if (success === false) span.setStatus({ code: api.SpanStatusCode.ERROR });
      span.end();
    },
  };
}
