// OpenTelemetry across the services (#48), with real processes: scheduler → MySQL → broker →
// RabbitMQ → worker → (signed POST with `traceparent`) → a business service on ax-scheduler-sdk in
// this process, whose handler runs in a span continuing the trace through the user's own
// @opentelemetry/api. Every span goes to an OTLP/HTTP receiver this test starts (a plain node
// server decoding the exporter's JSON variant, OTEL_EXPORTER_OTLP_PROTOCOL=http/json). Checked:
// one trace per run, with ax.fire (scheduler) → ax.claim → ax.dispatch (broker) → ax.execute →
// POST (worker) → the business span, and the instance's `traceId` naming that trace. Then the same
// stack without the OTEL_* variables: no span, no `traceparent` header, and still a trace id on
// the instance and in the worker's log lines. A shell job prints its TRACEPARENT: the ax.execute
// span's with tracing on, the run's context with it off. Needs `pnpm build` (the services run their dist/).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { axExecutorApp, type ExecutionContext } from 'ax-scheduler-sdk';
import {
  assertNoLeftoverProcesses,
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  dumpAllProcessOutput,
  startService,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
  type ManagedProcess,
} from '@ax/testing';
import { afterAll, afterEach, describe, expect, it, onTestFailed } from 'vitest';

const ADMIN_TOKEN = `axt_e2e_trace_admin_${Math.random().toString(36).slice(2)}`;
const EXECUTOR_SECRET = 'e2e-trace-executor-secret-0123456789';
const WAIT_MS = 30_000;
const ROUTE = '/ax/traced';

/** One span as the receiver decoded it. */
interface ReceivedSpan {
  readonly service: string;
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly attributes: Record<string, unknown>;
}

/** The OTLP/HTTP JSON receiver (ExportTraceServiceRequest, https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding). */
function startReceiver(): Promise<{ server: Server; url: string; spans: ReceivedSpan[]; requests: number[] }> {
  const spans: ReceivedSpan[] = [];
  const requests: number[] = [];
  type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
  type KeyValue = { key: string; value: AnyValue };
  const valueOf = (v: AnyValue): unknown => v.stringValue ?? (v.intValue === undefined ? undefined : Number(v.intValue)) ?? v.boolValue ?? v.doubleValue;
  const attrs = (list: KeyValue[] | undefined): Record<string, unknown> => Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push(Date.now());
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans?: Array<{
          resource?: { attributes?: KeyValue[] };
          scopeSpans?: Array<{ spans?: Array<{ name: string; traceId: string; spanId: string; parentSpanId?: string; attributes?: KeyValue[] }> }>;
        }>;
      };
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attrs(rs.resource?.attributes)['service.name']);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({ service, name: s.name, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', attributes: attrs(s.attributes) });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, requests })));
}

async function close(server: Server | undefined): Promise<void> {
  if (server === undefined) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A stack of its own (database, Redis prefix, RabbitMQ vhost) with a business service on the SDK. */
async function startStack(label: string, otelEnv: Record<string, string>) {
  const ns = uniqueNamespace(`axe2etrace${label}`);
  const dataDir = mkdtempSync(join(tmpdir(), `ax-e2e-trace-${label}-`));
  const db = await createTestDatabase();
  const redis = await createTestRedis(ns);
  const amqp = await createTestAmqp(ns);
  const env = { AX_MYSQL_URL: db.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'info', AX_EXECUTOR_SECRET: EXECUTOR_SECRET, AX_WORKER_DATA_DIR: dataDir };
  const admin = await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } });
  const adminUrl = admin.baseUrl;
  const services: Record<string, ManagedProcess> = {
    scheduler: await startService('scheduler', { env: { ...env, ...otelEnv } }),
    broker: await startService('broker', { env: { ...env, ...otelEnv } }),
    worker: await startService('worker', { env: { ...env, ...otelEnv, AX_WORKER_ID: `e2e-trace-${label}`, AX_WORKER_SLOTS: '4', AX_HTTP_EXECUTOR_ALLOW: '127.0.0.1' } }),
  };
  const api = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return (text === '' ? {} : JSON.parse(text)) as T;
  };
  const key = await api<{ team: string; keyVersion: number; key: string }>('GET', '/api/v1/teams/default/executor-key');
  const handled: Array<{ ctx: ExecutionContext }> = [];
  const business = createServer(
    axExecutorApp({
      [ROUTE]: {
        keys: [key],
        handler: (ctx) => {
          handled.push({ ctx });
          return { success: true, message: 'traced' };
        },
      },
    }),
  );
  await new Promise<void>((resolve) => business.listen(0, '127.0.0.1', resolve));
  const businessUrl = `http://127.0.0.1:${(business.address() as AddressInfo).port}${ROUTE}`;
  await waitFor(async () => (await api<{ items: Array<{ id: string }> }>('GET', '/api/v1/workers')).items.length > 0, {
    description: 'the worker registered',
    timeoutMs: WAIT_MS,
    intervalMs: 200,
  });

  /** Two tasks firing once each, a few seconds from now: two runs, each fired by the scheduler. */
  const fireTwoRuns = async (): Promise<Array<{ id: string; traceId: string | null }>> => {
    const at = Date.now() + 4_000;
    for (const [i, name] of ['trace_once_a', 'trace_once_b'].entries()) {
      await api('POST', '/api/v1/tasks', {
        name,
        description: 'e2e: one traced run',
        schedule: { type: 'once', at: new Date(at + i * 1_000).toISOString() },
        exec: { type: 'http', url: businessUrl },
        timeoutSeconds: 30,
        retry: { max: 0 },
      });
    }
    return waitFor(
      async () => {
        const { items } = await api<{ items: Array<{ id: string; taskName: string; state: string; traceId: string | null }> }>('GET', '/api/v1/instances?limit=10');
        const done = items.filter((i) => i.taskName.startsWith('trace_once_') && i.state === 'SUCCESS');
        return done.length === 2 ? done.map((i) => ({ id: i.id, traceId: i.traceId })) : null;
      },
      { description: 'both runs SUCCESS', timeoutMs: WAIT_MS, intervalMs: 250 },
    );
  };

  /**
   * A shell run (triggered) that prints its TRACEPARENT (#48): its instance's id and trace id and
   * the value the job saw.
   */
  const shellRun = async (): Promise<{ id: string; traceId: string; printed: string }> => {
    await api('POST', '/api/v1/tasks', { name: 'trace_shell', schedule: { type: 'none' }, exec: { type: 'shell', command: ['/bin/sh', '-c', 'echo "tp=${TRACEPARENT-unset}"'] }, timeoutSeconds: 30, retry: { max: 0 } });
    const { id } = await api<{ id: string }>('POST', '/api/v1/tasks/trace_shell/trigger', {});
    const instance = await waitFor(
      async () => {
        const got = await api<{ state: string; traceId: string | null }>('GET', `/api/v1/instances/${id}`);
        return got.state === 'SUCCESS' ? got : null;
      },
      { description: 'the shell run SUCCESS', timeoutMs: WAIT_MS, intervalMs: 250 },
    );
    // The output ships beside the result: read until its line is there.
    const printed = await waitFor(
      async () => {
        const log = await fetch(`${adminUrl}/api/v1/instances/${id}/log?stream=stdout`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, signal: AbortSignal.timeout(10_000) });
        const text = await log.text();
        return log.status === 200 && text.endsWith('\n') ? text.trim() : null;
      },
      { description: 'the shell run\'s output', timeoutMs: WAIT_MS, intervalMs: 250 },
    );
    return { id, traceId: instance.traceId ?? '', printed };
  };

  const stop = async (): Promise<void> => {
    await stopAllProcesses();
    await close(business);
    await amqp.cleanup();
    await redis.cleanup();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { services, handled, fireTwoRuns, shellRun, stop };
}

let stopStack: (() => Promise<void>) | undefined;
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
let provider: TracerProvider | undefined;

afterEach(async () => {
  await stopStack?.();
  stopStack = undefined;
});

afterAll(async () => {
  trace.disable();
  await provider?.shutdown();
  await close(receiver?.server);
  assertNoLeftoverProcesses();
});

describe('tracing (#48)', () => {
  it('exports one trace per run: ax.fire → ax.claim → ax.dispatch → ax.execute → POST → the business span', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    receiver = await startReceiver();
    // The business service's own OpenTelemetry set-up, as a team would have it: the SDK finds
    // @opentelemetry/api and continues ax's trace into it.
    provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'business' }),
      spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${receiver.url}/v1/traces` }) })],
    });
    trace.setGlobalTracerProvider(provider);
    const stack = await startStack('on', {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
    stopStack = stack.stop;
    for (const name of ['scheduler', 'broker', 'worker'] as const) {
      expect(stack.services[name]?.output(), name).toContain('tracing on: spans exported by OpenTelemetry');
    }
    const runs = await stack.fireTwoRuns();
    const spans = receiver.spans;
    const chainOf = (traceId: string) =>
      waitFor(
        () => {
          const of = spans.filter((s) => s.traceId === traceId);
          return of.length >= 6 ? of : null;
        },
        { description: `the six spans of trace ${traceId}`, timeoutMs: WAIT_MS, intervalMs: 200 },
      );
    const traceIds = new Set<string>();
    for (const run of runs) {
      expect(run.traceId).toMatch(/^[0-9a-f]{32}$/);
      const traceId = run.traceId as string;
      traceIds.add(traceId);
      const of = await chainOf(traceId);
      const byName = (service: string, name: string): ReceivedSpan => {
        const found = of.filter((s) => s.service === service && s.name === name);
        expect(found, `${service} ${name} in ${JSON.stringify(of)}`).toHaveLength(1);
        return found[0] as ReceivedSpan;
      };
      const fire = byName('ax-scheduler', 'ax.fire');
      const claim = byName('ax-broker', 'ax.claim');
      const dispatch = byName('ax-broker', 'ax.dispatch');
      const execute = byName('ax-worker', 'ax.execute');
      const call = byName('ax-worker', 'POST');
      const businessSpan = of.find((s) => s.service === 'business');
      expect(businessSpan?.name).toMatch(/^ax trace_once_[ab]$/);
      // the chain, parent to child
      expect(fire.parentSpanId).toBe('');
      expect(claim.parentSpanId).toBe(fire.spanId);
      expect(dispatch.parentSpanId).toBe(claim.spanId);
      expect(execute.parentSpanId).toBe(dispatch.spanId);
      expect(call.parentSpanId).toBe(execute.spanId);
      expect(businessSpan?.parentSpanId).toBe(call.spanId);
      // and they name the run
      expect(fire.attributes['ax.instance.id']).toBe(run.id);
      expect(execute.attributes['ax.instance.id']).toBe(run.id);
      expect(call.attributes['http.response.status_code']).toBe(200);
      // the SDK's ctx.trace and the handler's active span are the same trace
      const handled = stack.handled.find((h) => h.ctx.instanceId === run.id);
      expect(handled?.ctx.trace).toMatchObject({ traceId, parentSpanId: call.spanId, sampled: true });
      expect(handled?.ctx.traceId).toBe(traceId);
      // the worker's log lines of the run carry the same trace id
      expect(stack.services.worker?.output()).toMatch(new RegExp(`"traceId":"${traceId}"`));
    }
    expect(traceIds.size).toBe(2); // one trace per run

    // A shell job gets TRACEPARENT: its tools' spans are children of the attempt's ax.execute.
    const shell = await stack.shellRun();
    expect(shell.traceId).toMatch(/^[0-9a-f]{32}$/);
    const execute = await waitFor(() => spans.find((s) => s.name === 'ax.execute' && s.attributes['ax.instance.id'] === shell.id) ?? null, {
      description: 'the shell run\'s ax.execute span',
      timeoutMs: WAIT_MS,
      intervalMs: 200,
    });
    expect(execute.traceId).toBe(shell.traceId);
    expect(shell.printed).toBe(`tp=00-${shell.traceId}-${execute.spanId}-01`);
  }, 120_000);

  it('exports nothing and sends no traceparent without the OTEL_* variables, and still names the run’s trace id', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const before = receiver?.requests.length ?? 0;
    const stack = await startStack('off', {});
    stopStack = stack.stop;
    const runs = await stack.fireTwoRuns();
    for (const name of ['scheduler', 'broker', 'worker'] as const) {
      expect(stack.services[name]?.output(), name).not.toContain('tracing on');
    }
    for (const run of runs) {
      expect(run.traceId).toMatch(/^[0-9a-f]{32}$/);
      const handled = stack.handled.find((h) => h.ctx.instanceId === run.id);
      expect(handled?.ctx.trace).toBeNull();
      expect(handled?.ctx.traceId).toBe(run.traceId);
      expect(stack.services.worker?.output()).toMatch(new RegExp(`"traceId":"${run.traceId}"`));
    }
    // Off, a shell job still gets the run's context: its own tools' spans land in the run's trace.
    const shell = await stack.shellRun();
    expect(shell.printed).toMatch(new RegExp(`^tp=00-${shell.traceId}-[0-9a-f]{16}-0[01]$`));
    expect(receiver?.requests.length ?? 0).toBe(before);
  }, 120_000);
});
