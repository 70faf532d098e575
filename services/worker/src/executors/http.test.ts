import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveExecutorKey } from '@ax/core';
import { axExecutorApp, type ExecutionContext } from 'ax-scheduler-sdk';
import { dispatchItem } from '../testing/fixtures.js';
import { hostAllowList } from './host-allow.js';
import type { HostLookup } from './checked-connect.js';
import { createHttpExecutor } from './http.js';
import type { ExecutionRequest } from './types.js';

const SECRET = 'worker-test-secret-0123';
/** What team `payments`' service holds: its key of version 1 (GET /teams/payments/executor-key). */
const PAYMENTS_V1 = deriveExecutorKey(SECRET, 'payments', 1);
let server: Server;
let base: string;
const seen: ExecutionContext[] = [];
const rawHeaders: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const app = axExecutorApp({
    '/v1-only': { keys: { team: 'payments', keys: { 1: PAYMENTS_V1 } }, handler: () => ({ success: true }) },
    '/ok': {
      keys: { team: 'default', keys: { 1: deriveExecutorKey(SECRET, 'default', 1) } },
      handler: async (ctx) => {
        seen.push(ctx);
        if (ctx.params.mode === 'fail') return { success: false, message: 'no orders today' };
        if (ctx.params.mode === 'async') return ctx.accepted();
        if (ctx.params.mode === 'slow') await new Promise((resolve) => setTimeout(resolve, 2_500));
        return { success: true, message: 'done', data: { rows: 42 } };
      },
    },
  });
  server = createServer((req, res) => {
    rawHeaders.push({ ...req.headers });
    if (req.url !== '/ok' && req.url !== '/v1-only') req.resume();
    if (req.url === '/boom') return void res.writeHead(500).end('internal error');
    if (req.url === '/redirect') return void res.writeHead(307, { location: 'http://example.com/' }).end();
    if (req.url === '/huge') return void res.writeHead(200).end('x'.repeat(200_000));
    void app(req, res);
  });
  await new Promise<void>((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const executor = createHttpExecutor({ workerId: 'w-http', secret: SECRET, allow: hostAllowList(['127.0.0.1']), outputTailBytes: 1024, responseLimitBytes: 100_000 });
afterAll(() => executor.close());

function request(pathname: string, params: Record<string, unknown> = {}, timeoutSeconds = 30, url = `${base}${pathname}`): ExecutionRequest {
  const item = dispatchItem({ exec: { type: 'http', url, method: 'POST' }, params, timeoutSeconds, taskName: 'order_stat', runNo: 2, idempotencyKey: 'order_stat:2026-12-01T02:00:00.000Z:2' });
  return { item, deadlineMs: Date.now() + timeoutSeconds * 1000, signal: new AbortController().signal };
}

describe('http executor', () => {
  it('#23 a request that mayStart refuses at the socket is never written: not started, the endpoint sees nothing', async () => {
    const before = rawHeaders.length;
    let asked = 0;
    const outcome = await executor.run({
      ...request('/ok'),
      mayStart: () => {
        asked++;
        return 'the worker was frozen';
      },
    });
    expect(outcome).toMatchObject({ outcome: 'FAILED', notStarted: true, error: 'not started: the worker was frozen' });
    expect(asked).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(rawHeaders.length).toBe(before);
    // mayStart saying go: the call is made as always.
    expect(await executor.run({ ...request('/ok'), mayStart: () => null })).toMatchObject({ outcome: 'SUCCESS' });
    expect(rawHeaders.length).toBe(before + 1);
  });

  it('sync success: signed POST with the documented body and headers; the answer is the result', async () => {
    const req = request('/ok');
    const out = await executor.run(req);
    expect(out).toMatchObject({ outcome: 'SUCCESS', exitCode: 200, data: { rows: 42 } });
    const ctx = seen.at(-1);
    expect(ctx).toMatchObject({
      executionId: req.item.executionId,
      instanceId: req.item.instanceId,
      taskName: 'order_stat',
      bizDate: '2026-12-01',
      expectedTime: '2026-12-01T02:00:00.000Z',
      attempt: 1,
      traceId: req.item.traceId,
      workerId: 'w-http',
      idempotencyKey: 'order_stat:2026-12-01T02:00:00.000Z:2',
    });
    expect(ctx?.deadline).toBe(new Date(req.deadlineMs).toISOString());
    const headers = rawHeaders.at(-1) ?? {};
    expect(headers['x-ax-signature']).toMatch(/^v2=[0-9a-f]{64}$/);
    expect(headers['x-ax-team']).toBe('default');
    expect(headers['x-ax-key-version']).toBe('1');
    expect(headers['content-type']).toBe('application/json');
  });

  it("#18 signature: a run of team payments' task is signed v2 with payments' key over method, path and body", async () => {
    const req = request('/v1-only');
    const item = { ...req.item, team: 'payments', keyVersion: 1 };
    expect(await executor.run({ ...req, item })).toMatchObject({ outcome: 'SUCCESS', exitCode: 200 });
    const headers = rawHeaders.at(-1) ?? {};
    expect(headers).toMatchObject({ 'x-ax-team': 'payments', 'x-ax-key-version': '1' });
    // another team's task is refused by payments' service (401): keys do not cross teams
    const other = await executor.run({ ...req, item: { ...req.item, team: 'orders', keyVersion: 1 } });
    expect(other).toMatchObject({ outcome: 'FAILED', exitCode: 401 });
    expect(other.outputTail).toContain('WRONG_TEAM');
  });

  it('#18 signature: during a rotation a service still holding only the previous key verifies (X-Ax-Previous-Signature); after the grace it refuses', async () => {
    const req = request('/v1-only');
    const during = { ...req.item, team: 'payments', keyVersion: 2, previousKeyValidUntil: new Date(Date.now() + 60_000).toISOString() };
    expect(await executor.run({ ...req, item: during })).toMatchObject({ outcome: 'SUCCESS', exitCode: 200 });
    const headers = rawHeaders.at(-1) ?? {};
    expect(headers['x-ax-key-version']).toBe('2');
    expect(headers['x-ax-previous-signature']).toMatch(/^v2=[0-9a-f]{64}$/);
    const after = { ...during, previousKeyValidUntil: new Date(Date.now() - 1).toISOString() };
    const refused = await executor.run({ ...req, item: after });
    expect(refused).toMatchObject({ outcome: 'FAILED', exitCode: 401 });
    expect(rawHeaders.at(-1)?.['x-ax-previous-signature']).toBeUndefined();
  });

  it('sync failure: {success:false} is a failed attempt with its message', async () => {
    expect(await executor.run(request('/ok', { mode: 'fail' }))).toMatchObject({ outcome: 'FAILED', exitCode: 200, error: 'no orders today' });
  });

  it('a 500 is a failed attempt', async () => {
    expect(await executor.run(request('/boom'))).toMatchObject({ outcome: 'FAILED', exitCode: 500, error: 'answered HTTP 500', outputTail: 'internal error' });
  });

  it('an answer after the timeout is a TIMEOUT', async () => {
    const started = Date.now();
    expect(await executor.run(request('/ok', { mode: 'slow' }, 1))).toMatchObject({ outcome: 'TIMEOUT', exitCode: null });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a cancel during the call ends it at once as CANCELED; a shutdown as WORKER_RESTART', async () => {
    for (const [reason, outcome] of [
      ['cancel', 'CANCELED'],
      ['shutdown', 'WORKER_RESTART'],
    ] as const) {
      const controller = new AbortController();
      const req = { ...request('/ok', { mode: 'slow' }), signal: controller.signal };
      const started = Date.now();
      setTimeout(() => controller.abort(reason), 100);
      expect(await executor.run(req)).toMatchObject({ outcome, exitCode: null });
      expect(Date.now() - started).toBeLessThan(1_500);
    }
    const canceled = new AbortController();
    canceled.abort('cancel');
    expect(await executor.run({ ...request('/ok'), signal: canceled.signal })).toMatchObject({ outcome: 'CANCELED' }); // before it starts
  });

  it('R15 a 202 is accepted: outcome SUCCESS with async true', async () => {
    expect(await executor.run(request('/ok', { mode: 'async' }))).toMatchObject({ outcome: 'SUCCESS', exitCode: 202, async: true });
  });

  it('a bad signature is refused by the SDK (401) and the attempt fails', async () => {
    const wrong = createHttpExecutor({ workerId: 'w', secret: 'another-secret-01234', allow: hostAllowList(['*']), outputTailBytes: 1024 });
    const count = seen.length;
    const out = await wrong.run(request('/ok'));
    await wrong.close();
    expect(out).toMatchObject({ outcome: 'FAILED', exitCode: 401 });
    expect(out.outputTail).toContain('BAD_SIGNATURE');
    expect(seen.length).toBe(count);
  });

  it('calls only allowed hosts, never follows redirects, bounds the answer', async () => {
    expect(await executor.run(request('/ok', {}, 30, 'http://localhost:1/ok'))).toMatchObject({
      outcome: 'FAILED',
      error: 'host localhost:1 is not in AX_HTTP_EXECUTOR_ALLOW',
    });
    expect(await executor.run(request('/redirect'))).toMatchObject({ outcome: 'FAILED', exitCode: 307 });
    expect(await executor.run(request('/huge'))).toMatchObject({ outcome: 'FAILED', error: expect.stringMatching(/larger than 100000 bytes/) as unknown });
  });

});

describe('http executor: the address it connects to (AX_HTTP_EXECUTOR_ALLOW)', () => {
  // The endpoint on 127.0.0.1 closes every connection, so each call makes (and checks) a new one;
  // a decoy on 127.0.0.2, same port, counts requests that went to an address that was not checked.
  let endpoint: Server;
  let decoy: Server;
  let port: number;
  const hits = { endpoint: 0, decoy: 0 };
  const executors: Array<ReturnType<typeof createHttpExecutor>> = [];
  beforeAll(async () => {
    endpoint = createServer((req, res) => {
      hits.endpoint++;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end('{"success":true}');
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', () => resolve()));
    port = (endpoint.address() as AddressInfo).port;
    decoy = createServer((req, res) => {
      hits.decoy++;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end('{"success":true}');
    });
    await new Promise<void>((resolve) => decoy.listen(port, '127.0.0.2', () => resolve()));
  });
  afterAll(async () => {
    await Promise.all(executors.map((e) => e.close()));
    await Promise.all([endpoint, decoy].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  });

  function executorWith(entries: string[], lookup?: HostLookup): ReturnType<typeof createHttpExecutor> {
    const created = createHttpExecutor({ workerId: 'w-http', secret: SECRET, allow: hostAllowList(entries), outputTailBytes: 1024, ...(lookup ? { lookup } : {}) });
    executors.push(created);
    return created;
  }
  /** A resolver answering from a script, one answer per call (the last one repeats); counts its calls. */
  function scripted(...answers: string[][]): HostLookup & { readonly calls: number } {
    let calls = 0;
    const lookup = (): Promise<Array<{ address: string; family: number }>> => {
      calls++;
      const answer = answers[Math.min(calls, answers.length) - 1] ?? [];
      return Promise.resolve(answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
    };
    return Object.defineProperty(lookup, 'calls', { get: () => calls }) as unknown as HostLookup & { readonly calls: number };
  }

  it('a listed name that resolves to loopback (localhost) is refused with HOST_REFUSED naming address and class; the endpoint receives no request', async () => {
    const before = hits.endpoint;
    const out = await executorWith(['localhost']).run(request('/job', {}, 30, `http://localhost:${port}/job`));
    expect(out).toMatchObject({ outcome: 'FAILED', exitCode: null });
    expect(out.error).toMatch(/^HOST_REFUSED: localhost resolves to (127\.0\.0\.1|::1) \(loopback\)$/);
    expect(out.outputTail).toBeUndefined();
    expect(hits.endpoint).toBe(before);
  });

  it('a listed name that resolves to the metadata address is refused, naming it', async () => {
    const out = await executorWith(['metadata.example'], scripted(['169.254.169.254'])).run(request('/job', {}, 30, 'http://metadata.example/latest/meta-data/'));
    expect(out).toMatchObject({ outcome: 'FAILED', exitCode: null, error: 'HOST_REFUSED: metadata.example resolves to 169.254.169.254 (link-local, cloud metadata)' });
  });

  it('the allow-list naming 127.0.0.1 lets it through: by address in the URL, and for a listed name that resolves to it', async () => {
    const before = hits.endpoint;
    expect(await executorWith(['127.0.0.1']).run(request('/job', {}, 30, `http://127.0.0.1:${port}/job`))).toMatchObject({ outcome: 'SUCCESS', exitCode: 200 });
    expect(await executorWith(['svc.test', '127.0.0.1'], scripted(['127.0.0.1'])).run(request('/job', {}, 30, `http://svc.test:${port}/job`))).toMatchObject({ outcome: 'SUCCESS' });
    expect(hits.endpoint).toBe(before + 2);
  });

  it('a CIDR entry or an internal: mark lets a listed name resolve to internal addresses deliberately', async () => {
    const before = hits.endpoint;
    expect(await executorWith(['svc.test', '127.0.0.0/8'], scripted(['127.0.0.1'])).run(request('/job', {}, 30, `http://svc.test:${port}/job`))).toMatchObject({ outcome: 'SUCCESS' });
    expect(await executorWith([`internal:svc.test:${port}`], scripted(['127.0.0.1'])).run(request('/job', {}, 30, `http://svc.test:${port}/job`))).toMatchObject({ outcome: 'SUCCESS' });
    expect(hits.endpoint).toBe(before + 2);
  });

  it('a DNS answer that changes after the check (rebinding to 127.0.0.2) cannot move the connection: one lookup per connection, the new answer is refused, 127.0.0.2 receives nothing', async () => {
    const lookup = scripted(['127.0.0.1'], ['127.0.0.2']);
    const executor = executorWith(['svc.test', '127.0.0.1'], lookup);
    const before = hits.endpoint;
    expect(await executor.run(request('/job', {}, 30, `http://svc.test:${port}/job`))).toMatchObject({ outcome: 'SUCCESS' });
    expect(hits.endpoint).toBe(before + 1);
    expect(lookup.calls).toBe(1);
    const out = await executor.run(request('/job', {}, 30, `http://svc.test:${port}/job`));
    expect(out).toMatchObject({ outcome: 'FAILED', exitCode: null, error: 'HOST_REFUSED: svc.test resolves to 127.0.0.2 (loopback)' });
    expect(lookup.calls).toBe(2);
    expect(hits.decoy).toBe(0);
    expect(hits.endpoint).toBe(before + 1);
  });

  it('the development default * still calls names that resolve to loopback', async () => {
    const before = hits.endpoint;
    expect(await executorWith(['*']).run(request('/job', {}, 30, `http://localhost:${port}/job`))).toMatchObject({ outcome: 'SUCCESS' });
    expect(hits.endpoint).toBe(before + 1);
  });
});
