import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axExecutor, createAxClient, signBody, signedHeaders, verifySignature, type ExecutionContext } from './index.js';

const SECRET = 'test-secret-0123456789';

function listen(app: express.Express): Promise<{ server: Server; url: string }> {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  });
}

function body(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    executionId: 'e1',
    instanceId: '1',
    taskName: 'order_stat',
    bizDate: '2026-12-01',
    expectedTime: '2026-12-01T02:00:00.000Z',
    attempt: 1,
    params: { n: 1 },
    traceId: 't1',
    deadline: new Date(Date.now() + 60_000).toISOString(),
    ...overrides,
  });
}

describe('@ax/sdk signature', () => {
  it('accepts its own signature and refuses a wrong one, a stale and a missing one', () => {
    const headers = signedHeaders(SECRET, '{"a":1}', 1_000_000);
    const base = { secret: SECRET, timestamp: headers['x-ax-timestamp'], signature: headers['x-ax-signature'], body: '{"a":1}', nowMs: 1_000_000 };
    expect(verifySignature(base)).toBeNull();
    expect(verifySignature({ ...base, body: '{"a":2}' })).toBe('BAD_SIGNATURE');
    expect(verifySignature({ ...base, secret: 'other-secret-0123456' })).toBe('BAD_SIGNATURE');
    expect(verifySignature({ ...base, nowMs: 1_000_000 + 300_001 })).toBe('STALE_TIMESTAMP');
    expect(verifySignature({ ...base, nowMs: 1_000_000 - 300_001 })).toBe('STALE_TIMESTAMP');
    expect(verifySignature({ ...base, signature: undefined })).toBe('MISSING_SIGNATURE');
    expect(verifySignature({ ...base, timestamp: 'soon' })).toBe('BAD_TIMESTAMP');
    expect(signBody(SECRET, '1', 'x')).toMatch(/^sha256=[0-9a-f]{64}$/);
  });
});

describe('@ax/sdk axExecutor', () => {
  let server: Server;
  let url: string;
  const seen: ExecutionContext[] = [];
  beforeAll(async () => {
    const app = express();
    app.use(
      '/job',
      axExecutor({
        secret: SECRET,
        handler: (ctx) => {
          seen.push(ctx);
          if (ctx.params.mode === 'fail') return { success: false, message: 'no orders' };
          if (ctx.params.mode === 'throw') throw new Error('boom');
          if (ctx.params.mode === 'async') return ctx.accepted();
          return { success: true, data: { rows: 3 } };
        },
      }),
    );
    ({ server, url } = await listen(app));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function post(text: string, headers: Record<string, string> = signedHeaders(SECRET, text)) {
    const res = await request(`${url}/job`, { method: 'POST', headers: { ...headers, 'idempotency-key': 'order_stat:x:1', 'x-ax-worker': 'w1' }, body: text });
    return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
  }

  it('calls the handler with the parsed context and answers its result', async () => {
    const res = await post(body());
    expect(res).toEqual({ status: 200, json: { success: true, data: { rows: 3 } } });
    const ctx = seen.at(-1);
    expect(ctx).toMatchObject({ executionId: 'e1', bizDate: '2026-12-01', attempt: 1, params: { n: 1 }, idempotencyKey: 'order_stat:x:1', workerId: 'w1' });
    expect(ctx?.signal.aborted).toBe(false);
  });

  it('answers success:false for a failure and a throw, and 202 for accepted()', async () => {
    expect(await post(body({ params: { mode: 'fail' } }))).toEqual({ status: 200, json: { success: false, message: 'no orders' } });
    expect(await post(body({ params: { mode: 'throw' } }))).toEqual({ status: 200, json: { success: false, message: 'boom' } });
    expect((await post(body({ params: { mode: 'async' } }))).status).toBe(202);
  });

  it('refuses a bad signature and a timestamp older than 5 minutes with 401, a bad body with 400', async () => {
    const text = body();
    const bad = await post(text, { ...signedHeaders(SECRET, text), 'x-ax-signature': signBody('wrong-secret-0123456', String(Date.now()), text) });
    expect(bad.status).toBe(401);
    expect(bad.json).toMatchObject({ error: { code: 'BAD_SIGNATURE' } });
    const old = await post(text, signedHeaders(SECRET, text, Date.now() - 301_000));
    expect(old).toMatchObject({ status: 401, json: { error: { code: 'STALE_TIMESTAMP' } } });
    const invalid = body({ attempt: 0 });
    expect((await post(invalid)).status).toBe(400);
    const count = seen.length;
    await post(text, {});
    expect(seen.length).toBe(count);
  });
});

describe('@ax/sdk createAxClient', () => {
  let server: Server;
  let url: string;
  const received: Array<{ path: string; problem: string | null; body: unknown }> = [];
  beforeAll(async () => {
    const app = express();
    app.post('/api/v1/executions/:id/:action', express.raw({ type: () => true }), (req, res) => {
      const raw = req.body as Buffer;
      const problem = verifySignature({ secret: SECRET, timestamp: req.get('x-ax-timestamp'), signature: req.get('x-ax-signature'), body: raw });
      received.push({ path: req.path, problem, body: JSON.parse(raw.toString('utf8')) });
      if (problem !== null) return void res.status(401).json({ error: { code: problem } });
      if (req.params.action === 'claim') return void res.status(req.params.id === 'e1' ? 200 : 409).json({ granted: req.params.id === 'e1' });
      res.status(200).json(req.params.id === 'dup' ? { duplicate: true } : {});
    });
    ({ server, url } = await listen(app));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('signs report and claim calls as the admin API expects', async () => {
    const client = createAxClient({ baseUrl: `${url}/`, secret: SECRET });
    expect(await client.report('e1', { success: true, data: { n: 1 } })).toEqual({ duplicate: false });
    expect(await client.report('dup', { success: false, message: 'x' })).toEqual({ duplicate: true });
    expect(await client.claim('e1')).toBe(true);
    expect(await client.claim('e2')).toBe(false);
    expect(received.map((r) => [r.path, r.problem])).toEqual([
      ['/api/v1/executions/e1/report', null],
      ['/api/v1/executions/dup/report', null],
      ['/api/v1/executions/e1/claim', null],
      ['/api/v1/executions/e2/claim', null],
    ]);
    expect(received[0]?.body).toEqual({ success: true, data: { n: 1 } });
    const wrong = createAxClient({ baseUrl: url, secret: 'wrong-secret-0123456' });
    await expect(wrong.claim('e1')).rejects.toThrow(/HTTP 401/);
  });
});
