/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * The failed-login limiter against the real admin API: it backs off bad tokens per client
 * address, never refuses a valid one, and reads X-Forwarded-For only from a trusted proxy.
 * Requests come from 127.0.0.1; `behindProxy` trusts it as a proxy, `direct` trusts nobody.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '@ax/testing';
import { parseTrustedProxies } from './client-address.js';
import { startTestApp, type CallResult, type TestApp } from './harness.test-helper.js';

const clock = new ManualClock();
const limit = { authFailureLimit: { max: 20, windowMs: 60_000 }, now: () => clock.nowMs() };
const loopbackProxy = parseTrustedProxies('127.0.0.1');
let direct: TestApp;
let behindProxy: TestApp;
beforeAll(async () => {
  if (!loopbackProxy.ok) throw new Error(loopbackProxy.problem);
  [direct, behindProxy] = await Promise.all([startTestApp(limit), startTestApp({ ...limit, trustedProxies: loopbackProxy.value })]);
});
afterAll(async () => {
  await Promise.all([direct?.close(), behindProxy?.close()]);
});
// Each test starts with counters that have long drained.
beforeEach(() => void clock.advance(3_600_000));

function badToken(app: TestApp, i: number, forwardedFor?: string): Promise<CallResult> {
  return app.call('GET', '/api/v1/tasks', { token: `wrong-token-${i}`, ...(forwardedFor === undefined ? {} : { headers: { 'x-forwarded-for': forwardedFor } }) });
}

it('after 30 bad tokens from one address a valid token still gets 200', async () => {
  for (let i = 0; i < 30; i++) {
    const bad = await badToken(direct, i);
    expect([401, 429]).toContain(bad.status);
  }
  const ok = await direct.call('GET', '/api/v1/tasks', { token: direct.tokens.viewer });
  expect(ok.status).toBe(200);
  // The role check still applies to a backed-off address.
  expect((await direct.call('DELETE', '/api/v1/tasks/nope', { token: direct.tokens.viewer })).status).toBe(403);
});

it('answers the first 20 bad tokens 401, later ones 429 with a growing Retry-After up to 60 s, and 401 again after the wait', async () => {
  for (let i = 0; i < 20; i++) {
    const bad = await badToken(direct, i);
    expect(bad.status).toBe(401);
    expect(bad.headers.get('retry-after')).toBeNull();
  }
  const waits: number[] = [];
  for (let i = 20; i < 45; i++) {
    const bad = await badToken(direct, i);
    expect(bad.status).toBe(429);
    expect(bad.body.error.code).toBe('RATE_LIMITED');
    waits.push(Number(bad.headers.get('retry-after')));
  }
  expect(waits.slice(0, 3)).toEqual([6, 9, 12]);
  expect(waits.at(-1)).toBe(60);
  clock.advance(60_000);
  expect((await badToken(direct, 99)).status).toBe(401);
});

it('does not count requests without a token', async () => {
  for (let i = 0; i < 30; i++) expect((await direct.call('GET', '/api/v1/tasks', { token: null })).status).toBe(401);
  expect((await badToken(direct, 0)).status).toBe(401);
});

it('ignores X-Forwarded-For unless the socket peer is a trusted proxy: a client cannot dodge the limit', async () => {
  for (let i = 0; i < 20; i++) expect((await badToken(direct, i, `198.51.100.${i}`)).status).toBe(401);
  const spoofed = await badToken(direct, 20, '198.51.100.200');
  expect(spoofed.status).toBe(429);
  expect(Number(spoofed.headers.get('retry-after'))).toBeGreaterThan(0);
});

it('behind a trusted proxy counts two forwarded clients separately', async () => {
  for (let i = 0; i < 21; i++) await badToken(behindProxy, i, '203.0.113.1');
  expect((await badToken(behindProxy, 21, '203.0.113.1')).status).toBe(429);
  expect((await badToken(behindProxy, 22, '203.0.113.2')).status).toBe(401);
  // A valid token from the backed-off client is answered normally.
  const ok = await behindProxy.call('GET', '/api/v1/tasks', { token: behindProxy.tokens.viewer, headers: { 'x-forwarded-for': '203.0.113.1' } });
  expect(ok.status).toBe(200);
});

it('behind a trusted proxy counts the address the proxy appended, not what the client put before it', async () => {
  for (let i = 0; i < 20; i++) expect((await badToken(behindProxy, i, `192.0.2.${i}, 203.0.113.7`)).status).toBe(401);
  expect((await badToken(behindProxy, 20, '192.0.2.250, 203.0.113.7')).status).toBe(429);
});
