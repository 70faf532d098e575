/* eslint-disable @typescript-eslint/no-unsafe-member-access -- response bodies are untyped JSON here */
/**
 * Console sessions (#47) against a real database: a pasted token exchanged for an HttpOnly
 * cookie serves later requests without the token; writes with the cookie need the CSRF header;
 * sign-out, token revocation, idle and absolute lifetimes end the session; a bearer token is
 * answered as before whatever cookie comes with it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './harness.test-helper.js';

let app: TestApp;
let now = Date.now();
const IDLE_MS = 60_000;
const MAX_MS = 600_000;

beforeAll(async () => {
  app = await startTestApp({ now: () => now, sessions: { idleMs: IDLE_MS, absoluteMs: MAX_MS } });
});
afterAll(async () => {
  await app.close();
});

/** Signs in with `token`; the cookie pair to send back and the CSRF token. */
async function signIn(token: string): Promise<{ cookie: string; csrf: string; setCookie: string }> {
  const res = await app.call('POST', '/api/v1/session', { token });
  expect(res.status).toBe(201);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const pair = /^(ax_session=[A-Za-z0-9_-]+);/.exec(setCookie);
  if (pair === null) throw new Error(`no session cookie in ${setCookie}`);
  return { cookie: pair[1] as string, csrf: res.body.csrfToken as string, setCookie };
}

function withCookie(cookie: string, extra: Record<string, string> = {}) {
  return { token: null, headers: { cookie, ...extra } };
}

it('exchanges a bearer token for an HttpOnly, SameSite=Lax cookie (not Secure over plain http) that answers without the token', async () => {
  const { cookie, setCookie } = await signIn(app.tokens.operator);
  expect(setCookie).toContain('HttpOnly');
  expect(setCookie).toContain('SameSite=Lax');
  expect(setCookie).toContain('Path=/');
  expect(setCookie).not.toContain('Secure');
  const who = await app.call('GET', '/api/v1/session', withCookie(cookie));
  expect(who.status).toBe(200);
  expect(who.body).toMatchObject({ signedIn: true, session: { name: 'operator-user', role: 'operator', teams: ['*'], via: 'token' } });
  expect((await app.call('GET', '/api/v1/session', { token: null })).body).toEqual({ signedIn: false, reason: null, session: null });
  expect((await app.call('GET', '/api/v1/tasks', withCookie(cookie))).status).toBe(200);
  expect((await app.call('GET', '/api/v1/tasks', { token: null })).status).toBe(401);
});

it('marks the cookie Secure when a trusted proxy says the browser came over https', async () => {
  const proxied = await startTestApp({ trustedProxies: { entries: ['127.0.0.1'], has: (a) => a === '127.0.0.1' } });
  try {
    const res = await proxied.call('POST', '/api/v1/session', { token: proxied.tokens.viewer, headers: { 'x-forwarded-proto': 'https' } });
    expect(res.headers.get('set-cookie')).toContain('Secure');
  } finally {
    await proxied.close();
  }
});

it('refuses a write with the cookie but without the CSRF header, and takes it with the header', async () => {
  const { cookie, csrf } = await signIn(app.tokens.admin);
  const body = { name: 'made-with-a-session', role: 'viewer', teams: ['*'] };
  const refused = await app.call('POST', '/api/v1/tokens', { ...withCookie(cookie), body });
  expect(refused.status).toBe(403);
  expect(refused.body.error.code).toBe('CSRF_FAILED');
  const wrong = await app.call('POST', '/api/v1/tokens', { ...withCookie(cookie, { 'x-ax-csrf': `${csrf.slice(0, -1)}x` }), body });
  expect(wrong.status).toBe(403);
  const made = await app.call('POST', '/api/v1/tokens', { ...withCookie(cookie, { 'x-ax-csrf': csrf }), body });
  expect(made.status).toBe(201);
  // The audit names the session's token as the actor.
  const audit = await app.call('GET', '/api/v1/audit?limit=1');
  expect(audit.body.items[0].actor.name).toBe('admin-user');
});

it('keeps the role of the token: a viewer session may not write', async () => {
  const { cookie, csrf } = await signIn(app.tokens.viewer);
  const res = await app.call('POST', '/api/v1/dispatch/pause', { ...withCookie(cookie, { 'x-ax-csrf': csrf }), body: {} });
  expect(res.status).toBe(403);
  expect(res.body.error.code).toBe('FORBIDDEN');
});

it('signs out on the server: the same cookie is refused afterwards, in every tab', async () => {
  const { cookie, csrf } = await signIn(app.tokens.viewer);
  const out = await app.call('DELETE', '/api/v1/session', withCookie(cookie, { 'x-ax-csrf': csrf }));
  expect(out.status).toBe(204);
  expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
  const after = await app.call('GET', '/api/v1/whoami', withCookie(cookie));
  expect(after.status).toBe(401);
  expect(after.body.error.message).toContain('ended');
  // The console's probe answers 200 (no error in the browser's log), saying why.
  const probe = await app.call('GET', '/api/v1/session', withCookie(cookie));
  expect(probe.status).toBe(200);
  expect(probe.body).toMatchObject({ signedIn: false, session: null });
  expect(probe.body.reason).toContain('ended');
});

it('ends the sessions of a revoked token', async () => {
  const made = await app.call('POST', '/api/v1/tokens', { body: { name: 'soon-revoked', role: 'viewer', teams: ['*'] } });
  expect(made.status).toBe(201);
  const { cookie } = await signIn(made.body.token as string);
  expect((await app.call('GET', '/api/v1/whoami', withCookie(cookie))).status).toBe(200);
  expect((await app.call('DELETE', `/api/v1/tokens/${String(made.body.id)}`)).status).toBe(204);
  const after = await app.call('GET', '/api/v1/whoami', withCookie(cookie));
  expect(after.status).toBe(401);
  expect(after.body.error.message).toContain('revoked');
});

it('ends a session idle longer than the idle lifetime', async () => {
  const { cookie } = await signIn(app.tokens.viewer);
  now += IDLE_MS + 1_000;
  const after = await app.call('GET', '/api/v1/whoami', withCookie(cookie));
  expect(after.status).toBe(401);
  expect(after.body.error).toMatchObject({ code: 'SESSION_EXPIRED' });
  expect(after.body.error.message).toContain('idle');
});

it('ends a session at its absolute lifetime even while it is used', async () => {
  const { cookie } = await signIn(app.tokens.viewer);
  const started = now;
  while (now - started + IDLE_MS / 2 < MAX_MS) {
    now += IDLE_MS / 2;
    expect((await app.call('GET', '/api/v1/whoami', withCookie(cookie))).status).toBe(200);
    // The touch is written after the answer: let it land before the clock moves on.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  now = started + MAX_MS;
  const after = await app.call('GET', '/api/v1/whoami', withCookie(cookie));
  expect(after.status).toBe(401);
  expect(after.body.error.message).toContain('expired');
});

it('answers a bearer token as before, whatever cookie comes with it', async () => {
  const res = await app.call('GET', '/api/v1/whoami', { token: app.tokens.viewer, headers: { cookie: 'ax_session=not-a-session' } });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ name: 'viewer-user', role: 'viewer' });
});

it('refuses a malformed or unknown cookie with 401 and removes it', async () => {
  const bad = await app.call('GET', '/api/v1/tasks', withCookie('ax_session=../etc'));
  expect(bad.status).toBe(401);
  expect(bad.headers.get('set-cookie')).toContain('Max-Age=0');
  const unknown = await app.call('GET', '/api/v1/tasks', withCookie(`ax_session=${'a'.repeat(43)}`));
  expect(unknown.status).toBe(401);
});

it('says whether OIDC sign-in is offered', async () => {
  const res = await app.call('GET', '/api/v1/auth/methods', { token: null });
  expect(res.body).toEqual({ token: true, oidc: null });
  expect((await app.call('GET', '/api/v1/auth/oidc/login', { token: null })).status).toBe(404);
});
