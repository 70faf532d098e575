/**
 * Bearer tokens (ADMIN-API.md "Conventions"): stored as hex SHA-256, compared in constant time,
 * roles `viewer` < `operator` < `admin`; unknown tokens are backed off per client address (a
 * valid token never is); refused requests are logged (never with the token) and counted.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { findApiTokenByHash, touchApiToken, upsertApiToken, type BootstrapTokenOutcome, type StorePool } from '@ax/store';
import { NO_TRUSTED_PROXIES, resolveClientAddress, type TrustedProxies } from './client-address.js';
import { ApiError } from './errors.js';
import { DEFAULT_MAX_KEYS, FailureBackoff } from './failure-backoff.js';
import type { PrincipalSession } from './console-sessions.js';
import { scopeOfTeams, type TeamScope } from './team-scope.js';

/** The roles, lowest first. */
export const ROLES = ['viewer', 'operator', 'admin'] as const;
/** A role. */
export type Role = (typeof ROLES)[number];

/** An authenticated caller. */
export interface Principal {
  /** The API token (a bearer token, or the one a console session was signed in with); null = an OIDC user. */
  readonly tokenId: string | null;
  /** Token name, or the OIDC user's name: the actor of audit entries. */
  readonly name: string;
  readonly role: Role;
  /** The teams the token acts for: `'*'` (every team) or a list (team-scope.ts). */
  readonly teams: TeamScope;
  /** The console session the request came with (cookie); absent for a bearer token. */
  readonly session?: PrincipalSession;
}

/** Whether `role` is at least `required`. */
export function hasRole(role: Role, required: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(required);
}

/** Hex SHA-256 of a token. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new random token (shown once). */
export function generateToken(): string {
  return `axt_${randomBytes(32).toString('base64url')}`;
}

/** Name of the token set by `AX_ADMIN_TOKEN`. */
export const BOOTSTRAP_TOKEN_NAME = 'bootstrap-admin';

/**
 * Stores the `AX_ADMIN_TOKEN` admin token, never un-revoking it; a new value revokes the
 * previous bootstrap token (a rotation). Returns what it found and did.
 */
export function bootstrapAdminToken(pool: StorePool, token: string): Promise<BootstrapTokenOutcome> {
  return upsertApiToken(pool, { name: BOOTSTRAP_TOKEN_NAME, role: 'admin', tokenHash: hashToken(token) });
}

/**
 * The failed-login limiter of the app: whom it counts (the client address, behind
 * `AX_TRUSTED_PROXIES` taken from `X-Forwarded-For`; client-address.ts) and how it backs off
 * (failure-backoff.ts). It only ever sees unknown tokens: a valid token never touches it.
 */
export class AuthFailureLimiter {
  private readonly backoff: FailureBackoff;

  /**
   * @param max failures a client address may have in a row before it is backed off (default 20)
   * @param windowMs time in which `max` failures drain, ms; also the longest `Retry-After` (default 60000)
   * @param now milliseconds now
   * @param trustedProxies `AX_TRUSTED_PROXIES` (default none)
   * @param maxAddresses most client addresses tracked at once (default 10000)
   */
  constructor(
    max: number,
    windowMs: number,
    now: () => number,
    private readonly trustedProxies: TrustedProxies = NO_TRUSTED_PROXIES,
    maxAddresses: number = DEFAULT_MAX_KEYS,
  ) {
    this.backoff = new FailureBackoff({ burst: max, windowMs, maxKeys: maxAddresses }, now);
  }

  /** The client address of `req` (the key failures are counted under). */
  clientAddress(req: Request): string {
    const forwarded = req.headers['x-forwarded-for'];
    return resolveClientAddress(req.socket.remoteAddress, Array.isArray(forwarded) ? forwarded.join(',') : forwarded, this.trustedProxies);
  }

  /** Records a failure of `address`; returns 0, or the milliseconds it is backed off for. */
  fail(address: string): number {
    return this.backoff.fail(address);
  }
}

/** `last_used_at` is refreshed at most this often per token. */
const LAST_USED_RESOLUTION_MS = 60_000;

const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/;

/**
 * Authenticates the request's bearer token and checks its role. A known token is always
 * answered on its merits, whatever the limiter says; only unknown tokens are counted and backed off.
 * @throws ApiError 401 (missing/unknown token), 403 (role too low), 429 (unknown token from an
 *   address that has failed too often; `Retry-After`).
 */
export async function authenticate(pool: StorePool, limiter: AuthFailureLimiter, req: Request, required: Role): Promise<Principal> {
  const header = req.headers.authorization;
  const match = header === undefined ? null : BEARER.exec(header);
  if (match === null) {
    // Not counted: without a well-formed token nothing was tried.
    throw new ApiError(401, 'UNAUTHENTICATED', 'a bearer token is required', {}, { 'www-authenticate': 'Bearer' });
  }
  const hash = hashToken(match[1] as string);
  const row = await findApiTokenByHash(pool, hash);
  const known = row !== null && timingSafeEqual(Buffer.from(row.tokenHash, 'ascii'), Buffer.from(hash, 'ascii'));
  if (!known || row === null || !(ROLES as readonly string[]).includes(row.role)) {
    const waitMs = limiter.fail(limiter.clientAddress(req));
    if (waitMs > 0) {
      throw new ApiError(429, 'RATE_LIMITED', 'the bearer token is unknown or revoked, and this address has failed too often; wait before trying another', {}, {
        'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))),
        'www-authenticate': 'Bearer',
      });
    }
    throw new ApiError(401, 'UNAUTHENTICATED', 'the bearer token is unknown or revoked', {}, { 'www-authenticate': 'Bearer' });
  }
  const principal: Principal = { tokenId: row.id, name: row.name, role: row.role as Role, teams: scopeOfTeams(row.teams) };
  if (row.lastUsedAt === null || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    // Bookkeeping only: a failure must not fail the request.
    touchApiToken(pool, row.id).catch(() => undefined);
  }
  requireRole(principal, required);
  return principal;
}

/** @throws ApiError 403 when `principal`'s role is below `required`. */
export function requireRole(principal: Principal, required: Role): void {
  if (!hasRole(principal.role, required)) {
    const who = principal.session?.kind === 'oidc' ? 'your sign-in' : 'the token';
    throw new ApiError(403, 'FORBIDDEN', `this needs the ${required} role; ${who} has ${principal.role}`, { required, role: principal.role });
  }
}
