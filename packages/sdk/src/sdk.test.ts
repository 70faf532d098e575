import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axExecutor } from './express.js';
import { createAxClient, signedHeaders, signV2, verifySignature, type ExecutionContext } from './index.js';

const KEYS = { team: 'payments', keys: { 1: 'a'.repeat(64) } };
/** The vector of packages/core/src/signature/signature.test.ts: both implementations must agree. */
const VECTOR = {
  request: { timestamp: '1764547200000', method: 'POST', path: '/api/v1/executions/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/report', body: '{"success":true}' },
};
const VECTOR_KEY = 'a392c1d53cd766d4f6dae69cdffbc292c31245fdbff749f2d3308a928daa793d';
const VECTOR_SIGNATURE = 'v2=ae7cb030034ea3382c3a1676cc7bc396970b5044d45c7794953928c743414c9a';

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

describe('ax-scheduler-sdk signature v2', () => {
  const request = { method: 'POST', path: '/job', body: '{"a":1}' };
  const received = (h: Record<string, string>) => ({ team: h['x-ax-team'], keyVersion: h['x-ax-key-version'], timestamp: h['x-ax-timestamp'], signature: h['x-ax-signature'] });

  it('matches the vector @ax/core signs (packages/core/src/signature/signature.test.ts)', () => {
    expect(signV2(VECTOR_KEY, VECTOR.request)).toBe(VECTOR_SIGNATURE);
  });

  it('#18 signature: accepts its own signature and refuses another path, body, team, key, v1, a stale and a missing one', () => {
    const headers = signedHeaders(KEYS, request, 1_000_000);
    const base = { keys: KEYS, received: received(headers), ...request, nowMs: 1_000_000 };
    expect(verifySignature(base)).toBeNull();
    expect(verifySignature({ ...base, body: '{"a":2}' })).toBe('BAD_SIGNATURE');
    expect(verifySignature({ ...base, path: '/other-job' })).toBe('BAD_SIGNATURE');
    expect(verifySignature({ ...base, method: 'PUT' })).toBe('BAD_SIGNATURE');
    expect(verifySignature({ ...base, keys: { team: 'payments', keys: { 1: 'b'.repeat(64) } } })).toBe('BAD_SIGNATURE');
    expect(verifySignature({ ...base, keys: { team: 'orders', keys: KEYS.keys } })).toBe('WRONG_TEAM');
    expect(verifySignature({ ...base, received: { ...base.received, signature: `sha256=${'0'.repeat(64)}` } })).toBe('SIGNATURE_V1');
    expect(verifySignature({ ...base, received: { ...base.received, keyVersion: '7' } })).toBe('UNKNOWN_KEY_VERSION');
    expect(verifySignature({ ...base, nowMs: 1_000_000 + 300_001 })).toBe('STALE_TIMESTAMP');
    expect(verifySignature({ ...base, nowMs: 1_000_000 - 300_001 })).toBe('STALE_TIMESTAMP');
    expect(verifySignature({ ...base, received: { ...base.received, signature: undefined } })).toBe('MISSING_SIGNATURE');
    expect(verifySignature({ ...base, received: { ...base.received, team: undefined } })).toBe('MISSING_SIGNATURE');
    expect(verifySignature({ ...base, received: { ...base.received, timestamp: 'soon' } })).toBe('BAD_TIMESTAMP');
  });

  it('#18 signature: during a rotation a service holding only the previous key verifies the previous signature', () => {
    const rotated = { team: 'payments', keys: { 2: 'c'.repeat(64) } };
    const headers = signedHeaders(rotated, request, 1_000_000);
    const previousSignature = signV2(KEYS.keys[1], { ...request, timestamp: '1000000' });
    const base = { keys: KEYS, received: { ...received(headers), previousSignature }, ...request, nowMs: 1_000_000 };
    expect(base.received.keyVersion).toBe('2');
    expect(verifySignature(base)).toBeNull();
    expect(verifySignature({ ...base, received: { ...base.received, previousSignature: undefined } })).toBe('UNKNOWN_KEY_VERSION');
    expect(verifySignature({ ...base, keys: { team: 'payments', keys: { ...KEYS.keys, ...rotated.keys } } })).toBeNull();
  });
});

describe('ax-scheduler-sdk/express axExecutor', () => {
  let server: Server;
  let url: string;
  const seen: ExecutionContext[] = [];
  beforeAll(async () => {
    const app = express();
    app.use(
      '/job',
      axExecutor({
        keys: KEYS,
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

  const sign = (text: string, nowMs?: number, path = '/job') => signedHeaders(KEYS, { method: 'POST', path, body: text }, nowMs);
  async function post(text: string, headers: Record<string, string> = sign(text)) {
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
    const bad = await post(text, signedHeaders({ team: 'payments', keys: { 1: 'f'.repeat(64) } }, { method: 'POST', path: '/job', body: text }));
    expect(bad.status).toBe(401);
    expect(bad.json).toMatchObject({ error: { code: 'BAD_SIGNATURE' } });
    // signed for another endpoint's path: not valid here
    expect(await post(text, sign(text, undefined, '/other-job'))).toMatchObject({ status: 401, json: { error: { code: 'BAD_SIGNATURE' } } });
    const old = await post(text, sign(text, Date.now() - 301_000));
    expect(old).toMatchObject({ status: 401, json: { error: { code: 'STALE_TIMESTAMP' } } });
    const invalid = body({ attempt: 0 });
    expect((await post(invalid)).status).toBe(400);
    const count = seen.length;
    await post(text, {});
    expect(seen.length).toBe(count);
  });
});

describe('ax-scheduler-sdk createAxClient', () => {
  let server: Server;
  let url: string;
  const received: Array<{ path: string; problem: string | null; body: unknown }> = [];
  let notAsyncAnswers = 0;
  beforeAll(async () => {
    const app = express();
    app.post('/api/v1/executions/:id/:action', express.raw({ type: () => true }), (req, res) => {
      const raw = req.body as Buffer;
      const problem = verifySignature({
        keys: KEYS,
        received: { team: req.get('x-ax-team'), keyVersion: req.get('x-ax-key-version'), timestamp: req.get('x-ax-timestamp'), signature: req.get('x-ax-signature') },
        method: req.method,
        path: req.originalUrl,
        body: raw,
      });
      received.push({ path: req.path, problem, body: JSON.parse(raw.toString('utf8')) });
      if (problem !== null) return void res.status(401).json({ error: { code: problem } });
      if (req.params.id === 'early' && notAsyncAnswers++ < 2) return void res.status(409).json({ error: { code: 'NOT_ASYNC', message: 'not yet' } });
      if (req.params.action === 'claim') return void res.status(req.params.id === 'e1' ? 200 : 409).json({ granted: req.params.id === 'e1' });
      res.status(200).json(req.params.id === 'dup' ? { duplicate: true } : {});
    });
    ({ server, url } = await listen(app));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('signs report and claim calls as the admin API expects', async () => {
    const client = createAxClient({ baseUrl: `${url}/`, keys: KEYS });
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
    const wrong = createAxClient({ baseUrl: url, keys: { team: 'payments', keys: { 1: 'f'.repeat(64) } } });
    await expect(wrong.claim('e1')).rejects.toThrow(/HTTP 401/);
  });

  it('retries a report answered 409 NOT_ASYNC (sent before ax recorded the 202), and gives up on other 409s', async () => {
    const client = createAxClient({ baseUrl: url, keys: KEYS });
    expect(await client.report('early', { success: true })).toEqual({ duplicate: false });
    expect(received.filter((r) => r.path === '/api/v1/executions/early/report')).toHaveLength(3);
  });

  it('refuses the v1 `secret` option with a line saying what to pass', () => {
    expect(() => axExecutor({ secret: 'x', handler: () => undefined } as never)).toThrow(/keys/);
  });
});
