/**
 * Who the caller is, and the console's sessions (#47, #48; extensions): a pasted token is
 * exchanged once for a session cookie that every tab shares, OIDC sign-in starts one from the
 * provider's callback, sign-out ends it on the server.
 */
import { z } from 'zod';
import { ROLES } from '../auth.js';
import { authenticateSession, clearSessionCookie, endSession, startSession } from '../console-sessions.js';
import { ApiError } from '../errors.js';
import { beginOidcLogin, finishOidcLogin } from '../oidc.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { CSRF_HEADER } from '../session-cookie.js';
import type { Principal } from '../auth.js';

const teamsField = z.array(z.string()).describe('the teams the caller acts for; ["*"] = every team');

const sessionBody = z.object({
  name: z.string(),
  role: z.enum(ROLES),
  tokenId: z.string().nullable().describe('the API token; null for an OIDC sign-in'),
  teams: teamsField,
  via: z.enum(['bearer', 'token', 'oidc']).describe('bearer: a bearer token on this request; token: a session signed in with a token; oidc: a session signed in through the OpenID provider'),
  csrfToken: z.string().nullable().describe(`send it in the ${CSRF_HEADER} header of every write made with the session cookie; null without a session`),
  expiresAt: z.string().nullable().describe('when the session ends at the latest (idle sessions end sooner); null without a session'),
});

function mustBeSignedIn(principal: Principal | null): Principal {
  // Unreachable for a viewer route (the route layer authenticates first); kept as a typed guard.
  if (principal === null) throw new ApiError(401, 'UNAUTHENTICATED', 'a bearer token or a session is required');
  return principal;
}

function teamList(principal: Principal): string[] {
  return principal.teams === '*' ? ['*'] : [...principal.teams];
}

function describeSession(principal: Principal): z.infer<typeof sessionBody> {
  const session = principal.session;
  return {
    name: principal.name,
    role: principal.role,
    tokenId: principal.tokenId,
    teams: teamList(principal),
    via: session?.kind ?? 'bearer',
    csrfToken: session?.csrfToken ?? null,
    expiresAt: session?.expiresAt.toISOString() ?? null,
  };
}

export const sessionRoutes: RouteSpec[] = [
  defineRoute({
    method: 'get',
    path: '/api/v1/whoami',
    access: 'viewer',
    tag: 'admin',
    extension: true,
    summary: "The caller's token name and role (extension)",
    responses: {
      200: { description: 'the caller', schema: z.object({ name: z.string(), role: z.enum(ROLES), tokenId: z.string().nullable().describe('null for a user signed in through OIDC'), teams: teamsField }) },
    },
    handler: ({ principal }) => {
      const caller = mustBeSignedIn(principal);
      return { status: 200, body: { name: caller.name, role: caller.role, tokenId: caller.tokenId, teams: teamList(caller) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/session',
    access: 'viewer',
    tag: 'admin',
    extension: true,
    summary: 'Exchange the bearer token for a console session (extension)',
    description:
      'Starts a server-side session for the bearer token of this request and sets it as the `ax_session` cookie (HttpOnly, SameSite=Lax, Secure over https): every tab of the browser is signed in. The session acts with the token\'s role and teams as they are at each request, and ends when the token is revoked, at sign-out, after `AX_SESSION_IDLE_S` idle or `AX_SESSION_MAX_S` in all.',
    responses: {
      201: { description: 'the session', schema: sessionBody, headers: { 'set-cookie': 'the session cookie `ax_session`' } },
    },
    handler: async ({ principal, deps, req, res }) => {
      const caller = mustBeSignedIn(principal);
      if (caller.session !== undefined || caller.tokenId === null) {
        throw new ApiError(400, 'VALIDATION_FAILED', 'send the API token as a bearer token to start a session (this request came with a session)', { issues: [{ path: 'authorization', message: 'a bearer token is required' }] });
      }
      const started = await startSession(deps, req, res, { kind: 'token', tokenId: caller.tokenId, name: caller.name });
      return { status: 201, body: { ...describeSession(caller), via: 'token', csrfToken: started.csrfToken, expiresAt: started.expiresAt.toISOString() } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/session',
    access: 'public',
    tag: 'admin',
    extension: true,
    summary: "This browser's console session (extension)",
    description:
      'A new tab asks it: with a live `ax_session` cookie it answers who is signed in and the CSRF token for writes; without one (or with an ended one, whose cookie it removes) `signedIn: false` and why. Always 200, so that a browser without a session logs no error. Bearer tokens ask `GET /api/v1/whoami`.',
    responses: {
      200: {
        description: 'the session, or why there is none',
        schema: z.object({
          signedIn: z.boolean(),
          reason: z.string().nullable().describe('why an ended session was refused (expired, signed out, token revoked); null otherwise'),
          session: sessionBody.nullable(),
        }),
      },
    },
    handler: async ({ deps, req, res }) => {
      try {
        const principal = await authenticateSession(deps, req);
        return { status: 200, body: { signedIn: principal !== null, reason: null, session: principal === null ? null : describeSession(principal) } };
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 401) throw err;
        res.append('set-cookie', clearSessionCookie(deps, req));
        return { status: 200, body: { signedIn: false, reason: err.message, session: null } };
      }
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/v1/session',
    access: 'viewer',
    tag: 'admin',
    extension: true,
    summary: 'Sign out: end the console session (extension)',
    description: `Deletes the session on the server (every tab is signed out) and removes the cookie. With the cookie, needs the ${CSRF_HEADER} header. A bearer token is not revoked by this (use POST /api/v1/tokens/{id}/revoke).`,
    responses: { 204: { description: 'signed out' } },
    handler: async ({ principal, deps, req, res }) => {
      await endSession(deps, req, res, principal);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/auth/methods',
    access: 'public',
    tag: 'admin',
    extension: true,
    summary: 'How the console may sign in (extension)',
    responses: {
      200: {
        description: 'the sign-in methods',
        schema: z.object({ token: z.literal(true), oidc: z.object({ loginUrl: z.string() }).nullable().describe('null: OIDC is not configured') }),
      },
    },
    handler: ({ deps }) => ({ status: 200, body: { token: true, oidc: deps.oidc === undefined || deps.oidc === null ? null : { loginUrl: '/api/v1/auth/oidc/login' } } }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/auth/oidc/login',
    access: 'public',
    tag: 'admin',
    extension: true,
    summary: 'Start an OIDC sign-in (extension)',
    description: 'Redirects the browser to the OpenID provider (authorization code with PKCE, S256).',
    responses: { 302: { description: 'to the provider' }, 404: { description: 'OIDC is not configured' }, 503: { description: 'the provider does not answer' } },
    handler: async ({ deps, req, res }) => {
      await beginOidcLogin(deps, req, res);
      return { status: 302, sent: true };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/auth/oidc/callback',
    access: 'public',
    tag: 'admin',
    extension: true,
    summary: "The OpenID provider's redirect back (extension)",
    description:
      'Exchanges the code, maps the `AX_OIDC_CLAIM` claim through `AX_OIDC_ROLE_MAP`, starts a session (cookie `ax_session`) and redirects to the console; a failure or a user whose groups grant nothing is redirected to `/?signin_error=…`.',
    responses: { 302: { description: 'to the console' }, 404: { description: 'OIDC is not configured' }, 503: { description: 'the provider does not answer' } },
    handler: async ({ deps, req, res }) => {
      await finishOidcLogin(deps, req, res);
      return { status: 302, sent: true };
    },
  }),
];
