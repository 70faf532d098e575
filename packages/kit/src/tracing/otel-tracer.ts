/**
 * The OpenTelemetry SDK behind {@link AxTracer} (#48). Imported by tracer.ts only when tracing
 * is wanted, so a service with tracing off never loads any of it.
 *
 * Standard variables only: the OTLP exporter reads `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`,
 * `_HEADERS`, `_TIMEOUT`, `_COMPRESSION` itself; this module reads `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`
 * (`http/protobuf`, the default, or `http/json`), `OTEL_TRACES_EXPORTER` (`otlp`, `console`),
 * `OTEL_TRACES_SAMPLER[_ARG]`, `OTEL_BSP_*`, `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace, type Span } from '@opentelemetry/api';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import { ConfigError } from '../config.js';
import { formatTraceparent, parseTraceparent } from './traceparent.js';
import type { AxSpan, AxTracer, SpanAttributes, SpanKindName, StartSpanOptions } from './tracer.js';

const KINDS: Readonly<Record<SpanKindName, SpanKind>> = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};

function invalid(name: string, value: string, problem: string): ConfigError {
  return new ConfigError([{ variable: name, unset: false, shownValue: JSON.stringify(value), problem }]);
}

/** The sampler of `OTEL_TRACES_SAMPLER` (default `parentbased_always_on`, as the specification says). */
export function samplerFromEnv(env: NodeJS.ProcessEnv): Sampler {
  const name = (env.OTEL_TRACES_SAMPLER ?? '').trim().toLowerCase() || 'parentbased_always_on';
  const argText = (env.OTEL_TRACES_SAMPLER_ARG ?? '').trim();
  const ratio = (): number => {
    if (argText === '') return 1;
    const r = Number(argText);
    if (!Number.isFinite(r) || r < 0 || r > 1) throw invalid('OTEL_TRACES_SAMPLER_ARG', argText, 'expected a ratio from 0 to 1');
    return r;
  };
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    default:
      throw invalid('OTEL_TRACES_SAMPLER', name, 'expected always_on, always_off, traceidratio or parentbased_{always_on,always_off,traceidratio}');
  }
}

function positiveIntFromEnv(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const text = (env[name] ?? '').trim();
  if (text === '') return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw invalid(name, text, 'expected a positive integer');
  return n;
}

/** The exporters of `OTEL_TRACES_EXPORTER` (default `otlp`). */
async function exportersFromEnv(env: NodeJS.ProcessEnv): Promise<SpanExporter[]> {
  const names = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '');
  const out: SpanExporter[] = [];
  for (const name of names.length === 0 ? ['otlp'] : names) {
    if (name === 'console') out.push(new ConsoleSpanExporter());
    else if (name === 'otlp') out.push(await otlpExporter(env));
    else if (name !== 'none') throw invalid('OTEL_TRACES_EXPORTER', name, 'expected otlp, console or none');
  }
  return out;
}

async function otlpExporter(env: NodeJS.ProcessEnv): Promise<SpanExporter> {
  const variable = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? '').trim() !== '' ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = (env[variable] ?? '').trim() || 'http/protobuf';
  if (protocol === 'http/protobuf') return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
  if (protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  // grpc would pull a gRPC stack into every service; a collector takes OTLP/HTTP on 4318.
  throw invalid(variable, protocol, 'expected http/protobuf or http/json (ax exports OTLP over HTTP; point it at a collector’s port 4318)');
}

class OtelSpan implements AxSpan {
  readonly traceparent: string;
  constructor(private readonly span: Span) {
    const c = span.spanContext();
    this.traceparent = formatTraceparent({ traceId: c.traceId, spanId: c.spanId, sampled: (c.traceFlags & 1) === 1 /* TraceFlags.SAMPLED */ });
  }
  setAttributes(attributes: SpanAttributes): void {
    this.span.setAttributes(attributes);
  }
  fail(message: string): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }
  end(endTime?: number): void {
    this.span.end(endTime);
  }
}

/** The tracer on the OpenTelemetry SDK, exporting as the environment says. */
export async function createOtelTracer(serviceName: string, env: NodeJS.ProcessEnv, logger: Logger): Promise<AxTracer> {
  const exporters = await exportersFromEnv(env);
  const bsp = {
    scheduledDelayMillis: positiveIntFromEnv(env, 'OTEL_BSP_SCHEDULE_DELAY'),
    maxQueueSize: positiveIntFromEnv(env, 'OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: positiveIntFromEnv(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
    exportTimeoutMillis: positiveIntFromEnv(env, 'OTEL_BSP_EXPORT_TIMEOUT'),
  };
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }))
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the default name
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({
    resource,
    sampler: samplerFromEnv(env),
    spanProcessors: exporters.map((exporter) => new BatchSpanProcessor({ exporter, ...Object.fromEntries(Object.entries(bsp).filter(([, v]) => v !== undefined)) })),
  });
  const tracer = provider.getTracer('ax');
  return {
    enabled: true,
    startSpan(name: string, options: StartSpanOptions = {}): AxSpan {
      const parent = parseTraceparent(options.parent);
      const ctx =
        parent === null
          ? ROOT_CONTEXT
          : trace.setSpanContext(ROOT_CONTEXT, { traceId: parent.traceId, spanId: parent.spanId, traceFlags: parent.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: true });
      const span = tracer.startSpan(
        name,
        { kind: KINDS[options.kind ?? 'internal'], ...(options.startTime === undefined ? {} : { startTime: options.startTime }), ...(options.attributes === undefined ? {} : { attributes: options.attributes }) },
        ctx,
      );
      return new OtelSpan(span);
    },
    async flush(): Promise<void> {
      await provider.forceFlush();
    },
    async shutdown(): Promise<void> {
      try {
        await provider.shutdown();
      } catch (error) {
        logger.warn({ err: error }, 'flushing the last spans failed');
      }
    },
  };
}
