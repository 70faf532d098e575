/**
 * The console's server-side sessions (#47, #48): one sign-in serves every tab. A sign-in (an API
 * token exchanged once, or OIDC) stores a row in `console_session`, shared by every admin-api
 * instance, and gives the browser only a random id in an HttpOnly cookie. Each request carrying
 * the cookie (and no bearer token: machines keep using tokens unchanged) is answered as the
 * session's principal, the same shape a token has: a token session through its token as it is
 * now (revoked → ended), an OIDC session through the current role map. Writes need the
 * session's CSRF token in `X-AX-CSRF` (double submit: a cross-site form cannot read or send
 * it). Idle and absolute lifetimes end sessions; sign-out deletes the row.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { deleteConsoleSession, deleteExpiredConsoleSessions, findConsoleSession, insertConsoleSession, touchConsoleSession, type ConsoleSessionRecord } from '@ax/store';
import { ROLES, type Principal, type Role } from './auth.js';
import { NO_TRUSTED_PROXIES } from './client-address.js';
import type { AppDeps } from './deps.js';
import { ApiError } from './errors.js';
import { grantOf } from './oidc-role-map.js';
import { cameOverHttps, CSRF_HEADER, readCookie, SESSION_COOKIE, setCookie } from './session-cookie.js';
import { scopeOfTeams } from './team-scope.js';

/** Session lifetimes (`AX_SESSION_IDLE_S`, `AX_SESSION_MAX_S`). */
export interface SessionLifetimes {
  readonly idleMs: number;
  readonly absoluteMs: number;
}

/** Defaults of `AX_SESSION_IDLE_S` (1 h) and `AX_SESSION_MAX_S` (12 h): a working day, signed in once. */
export const DEFAULT_SESSION_IDLE_S = 3_600;
export const DEFAULT_SESSION_MAX_S = 43_200;
export const DEFAULT_SESSION_LIFETIMES: SessionLifetimes = { idleMs: DEFAULT_SESSION_IDLE_S * 1000, absoluteMs: DEFAULT_SESSION_MAX_S * 1000 };

/** Abandoned sessions removed per sign-in (a bounded statement). */
const PURGE_BATCH = 100;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** How a session was signed in. */
export type SessionKind = 'token' | 'oidc';

/** The session behind a principal. */
export interface PrincipalSession {
  readonly idHash: string;
  readonly csrfToken: string;
  readonly kind: SessionKind;
  readonly expiresAt: Date;
}

function hashId(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

function lifetimesOf(deps: AppDeps): SessionLifetimes {
  return deps.sessions ?? DEFAULT_SESSION_LIFETIMES;
}

/** Whether cookies set on `req`'s answer get `Secure` (the browser came over https). */
export function secureFor(deps: AppDeps, req: Request): boolean {
  return cameOverHttps('encrypted' in req.socket && req.socket.encrypted === true, req.socket.remoteAddress, req.headers['x-forwarded-proto'], deps.trustedProxies ?? NO_TRUSTED_PROXIES);
}

/** The `Set-Cookie` that removes the session cookie. */
export function clearSessionCookie(deps: AppDeps, req: Request): string {
  return setCookie(SESSION_COOKIE, '', { path: '/', maxAgeSeconds: 0, secure: secureFor(deps, req) });
}

/** Who signs in: an API token (by id and name), or an OIDC user with its claim values. */
export type SignInSubject =
  | { readonly kind: 'token'; readonly tokenId: string; readonly name: string }
  | { readonly kind: 'oidc'; readonly subject: string; readonly name: string; readonly groups: readonly string[] };

/** Starts a session for `who` and sets its cookie on `res`; returns its CSRF token and end. */
export async function startSession(deps: AppDeps, req: Request, res: Response, who: SignInSubject): Promise<{ csrfToken: string; expiresAt: Date }> {
  const { idleMs, absoluteMs } = lifetimesOf(deps);
  const now = new Date(deps.now());
  const id = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + absoluteMs);
  await insertConsoleSession(deps.pool, {
    idHash: hashId(id),
    csrfToken,
    tokenId: who.kind === 'token' ? who.tokenId : null,
    oidcSubject: who.kind === 'oidc' ? who.subject : null,
    name: who.name.slice(0, 128),
    oidcGroups: who.kind === 'oidc' ? who.groups : null,
    createdAt: now,
    expiresAt,
  });
  // Housekeeping only: a failure must not fail the sign-in.
  deleteExpiredConsoleSessions(deps.pool, now, new Date(now.getTime() - idleMs), PURGE_BATCH).catch(() => undefined);
  // The cookie lives as long as the session may; the server decides earlier ends.
  res.append('set-cookie', setCookie(SESSION_COOKIE, id, { path: '/', maxAgeSeconds: Math.ceil(absoluteMs / 1000), secure: secureFor(deps, req) }));
  return { csrfToken, expiresAt };
}

/** Why a stored session no longer stands for anyone, or its principal. */
export function principalOfSession(record: ConsoleSessionRecord, deps: Pick<AppDeps, 'oidc'>, nowMs: number, lifetimes: SessionLifetimes): Principal | string {
  if (nowMs >= record.expiresAt.getTime()) return 'the session has expired; sign in again';
  if (nowMs - record.lastSeenAt.getTime() > lifetimes.idleMs) return 'the session has expired after being idle; sign in again';
  const kind: SessionKind = record.tokenId !== null ? 'token' : 'oidc';
  const session: PrincipalSession = { idHash: record.idHash, csrfToken: record.csrfToken, kind, expiresAt: record.expiresAt };
  if (kind === 'token') {
    const token = record.token;
    if (token === null || token.revoked || !(ROLES as readonly string[]).includes(token.role)) return 'the token of this session was revoked; sign in again';
    return { tokenId: record.tokenId, name: token.name, role: token.role as Role, teams: scopeOfTeams(token.teams), session };
  }
  const oidc = deps.oidc;
  if (oidc === undefined || oidc === null) return 'OIDC sign-in is no longer configured; sign in again';
  const grant = grantOf(oidc.roleMap, record.oidcGroups ?? []);
  if (grant === null) return 'your groups no longer grant access to ax; ask an admin';
  return { tokenId: null, name: record.name, role: grant.role, teams: grant.teams, session };
}

/**
 * The principal of the request's session cookie, or null when it carries none. A write (any
 * method but GET and HEAD) must carry the session's CSRF token.
 * @throws ApiError 401 (unknown, expired or ended session; the cookie is removed), 403 (CSRF).
 */
export async function authenticateSession(deps: AppDeps, req: Request): Promise<Principal | null> {
  const id = readCookie(req.headers.cookie, SESSION_COOKIE);
  if (id === undefined || id === '') return null;
  const refuse = (message: string): ApiError =>
    // Its own code, so the console can say why it shows the sign-in page (a browser without a cookie hears UNAUTHENTICATED).
    new ApiError(401, 'SESSION_EXPIRED', message, {}, { 'www-authenticate': 'Bearer', 'set-cookie': clearSessionCookie(deps, req) });
  if (!SESSION_ID.test(id)) throw refuse('the session cookie is not valid; sign in again');
  const idHash = hashId(id);
  const record = await findConsoleSession(deps.pool, idHash);
  if (record === null || !timingSafeEqual(Buffer.from(record.idHash, 'ascii'), Buffer.from(idHash, 'ascii'))) {
    throw refuse('the session has ended (signed out or expired); sign in again');
  }
  const nowMs = deps.now();
  const lifetimes = lifetimesOf(deps);
  const outcome = principalOfSession(record, deps, nowMs, lifetimes);
  if (typeof outcome === 'string') {
    await deleteConsoleSession(deps.pool, idHash);
    throw refuse(outcome);
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    const sent = req.headers[CSRF_HEADER];
    const given = Buffer.from(typeof sent === 'string' ? sent : '', 'utf8');
    const expected = Buffer.from(record.csrfToken, 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new ApiError(403, 'CSRF_FAILED', `a write with the session cookie needs the ${CSRF_HEADER} header the sign-in answered (GET /api/v1/session)`, { header: CSRF_HEADER });
    }
  }
  // Idle time counts from the last touch: at most every minute (or a quarter of the idle time), not per request.
  if (nowMs - record.lastSeenAt.getTime() > Math.min(60_000, lifetimes.idleMs / 4)) {
    touchConsoleSession(deps.pool, idHash, new Date(nowMs)).catch(() => undefined);
  }
  return outcome;
}

/** Ends the request's session, if it has one, and removes its cookie. */
export async function endSession(deps: AppDeps, req: Request, res: Response, principal: Principal | null): Promise<boolean> {
  res.append('set-cookie', clearSessionCookie(deps, req));
  if (principal?.session === undefined) return false;
  return deleteConsoleSession(deps.pool, principal.session.idHash);
}

/** Whether `session` still stands for someone (long-lived log streams ask it now and then). */
export async function sessionStillValid(deps: AppDeps, session: PrincipalSession): Promise<boolean> {
  const record = await findConsoleSession(deps.pool, session.idHash);
  return record !== null && typeof principalOfSession(record, deps, deps.now(), lifetimesOf(deps)) !== 'string';
}
