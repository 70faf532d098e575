import { describe, expect, it } from 'vitest';
import { silentLogger } from '../logger.js';
import { formatTraceparent, newTraceparent, parseTraceparent, traceIdOf } from './traceparent.js';
import { NOOP_TRACER, startTracing, tracingWanted } from './tracer.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('traceparent (#48)', () => {
  it('parses the W3C example and formats it back', () => {
    const value = `00-${TRACE}-${SPAN}-01`;
    expect(parseTraceparent(value)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true });
    expect(formatTraceparent({ traceId: TRACE, spanId: SPAN, sampled: false })).toBe(`00-${TRACE}-${SPAN}-00`);
    expect(traceIdOf(value)).toBe(TRACE);
  });

  it.each([
    ['empty', ''],
    ['upper case', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with more fields', `00-${TRACE}-${SPAN}-01-extra`],
    ['short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
  ])('ignores an invalid value (%s): a new trace starts', (_name, value) => {
    expect(parseTraceparent(value)).toBeNull();
  });

  it('reads a later version by its first fields', () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-future`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true });
  });

  it('makes fresh sampled contexts', () => {
    const a = parseTraceparent(newTraceparent());
    const b = parseTraceparent(newTraceparent());
    expect(a?.sampled).toBe(true);
    expect(a?.traceId).not.toBe(b?.traceId);
  });
});

describe('tracing switch (#48)', () => {
  it('is off without the standard variables, and with OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none', () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
  });

  it('off: the no-op tracer passes the parent context through and starts a fresh one for a root', async () => {
    const tracer = await startTracing({ serviceName: 'ax-test', logger: silentLogger(), env: {} });
    expect(tracer).toBe(NOOP_TRACER);
    const parent = `00-${TRACE}-${SPAN}-01`;
    expect(tracer.startSpan('ax.claim', { parent }).traceparent).toBe(parent);
    expect(parseTraceparent(tracer.startSpan('ax.fire').traceparent)).not.toBeNull();
  });

  it('on: a child span keeps the trace id and gets its own span id', async () => {
    const tracer = await startTracing({ serviceName: 'ax-test', logger: silentLogger(), env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER: 'always_on' } });
    try {
      expect(tracer.enabled).toBe(true);
      const child = parseTraceparent(tracer.startSpan('ax.claim', { parent: `00-${TRACE}-${SPAN}-01` }).traceparent);
      expect(child?.traceId).toBe(TRACE);
      expect(child?.spanId).not.toBe(SPAN);
    } finally {
      // nothing was ended: nothing is exported to the closed port
      await tracer.shutdown();
    }
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /OTEL_EXPORTER_OTLP_PROTOCOL.*"grpc".*http\/protobuf or http\/json/],
    [{ OTEL_TRACES_SAMPLER: 'sometimes' }, /OTEL_TRACES_SAMPLER.*"sometimes"/],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }, /OTEL_TRACES_SAMPLER_ARG.*"2".*ratio from 0 to 1/],
    [{ OTEL_BSP_SCHEDULE_DELAY: 'soon' }, /OTEL_BSP_SCHEDULE_DELAY.*"soon"/],
    [{ OTEL_TRACES_EXPORTER: 'zipkin' }, /OTEL_TRACES_EXPORTER.*"zipkin"/],
  ])('refuses a value it cannot use, naming the variable: %o', async (extra, message) => {
    await expect(startTracing({ serviceName: 'ax-test', logger: silentLogger(), env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', ...extra } })).rejects.toThrow(message);
  });
});
