/**
 * Bearer tokens (ADMIN-API.md "Conventions"): stored as hex SHA-256, compared in constant time,
 * roles `viewer` < `operator` < `admin`; failed authentications are rate-limited per client
 * address; refused requests are logged (never with the token) and counted.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { findApiTokenByHash, touchApiToken, upsertApiToken, type StorePool } from '@ax/store';
import { ApiError } from './errors.js';

/** The roles, lowest first. */
export const ROLES = ['viewer', 'operator', 'admin'] as const;
/** A role. */
export type Role = (typeof ROLES)[number];

/** An authenticated caller. */
export interface Principal {
  readonly tokenId: string;
  /** Token name: the actor of audit entries. */
  readonly name: string;
  readonly role: Role;
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

/** Stores (or re-enables) the `AX_ADMIN_TOKEN` admin token. */
export async function bootstrapAdminToken(pool: StorePool, token: string): Promise<void> {
  await upsertApiToken(pool, { name: BOOTSTRAP_TOKEN_NAME, role: 'admin', tokenHash: hashToken(token) });
}

/** Counts failed authentications per client address in fixed windows. */
export class AuthFailureLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Milliseconds until the address may try again, or 0 when it may now. */
  blockedForMs(address: string): number {
    const w = this.windows.get(address);
    if (w === undefined) return 0;
    const elapsed = this.now() - w.start;
    if (elapsed >= this.windowMs) {
      this.windows.delete(address);
      return 0;
    }
    return w.count >= this.max ? this.windowMs - elapsed : 0;
  }

  /** Records a failure. */
  fail(address: string): void {
    const now = this.now();
    const w = this.windows.get(address);
    if (w === undefined || now - w.start >= this.windowMs) {
      if (this.windows.size > 10_000) this.prune(now);
      this.windows.set(address, { start: now, count: 1 });
    } else {
      w.count++;
    }
  }

  private prune(now: number): void {
    for (const [key, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(key);
  }
}

/** `last_used_at` is refreshed at most this often per token. */
const LAST_USED_RESOLUTION_MS = 60_000;

const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/;

/** The client address used for rate limiting. */
export function clientAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/**
 * Authenticates the request's bearer token and checks its role.
 * @throws ApiError 401 (missing/unknown token), 403 (role too low), 429 (too many failures).
 */
export async function authenticate(pool: StorePool, limiter: AuthFailureLimiter, req: Request, required: Role): Promise<Principal> {
  const address = clientAddress(req);
  const waitMs = limiter.blockedForMs(address);
  if (waitMs > 0) {
    throw new ApiError(429, 'RATE_LIMITED', 'too many failed authentications from this address; try again later', {}, {
      'retry-after': String(Math.ceil(waitMs / 1000)),
    });
  }
  const header = req.headers.authorization;
  const match = header === undefined ? null : BEARER.exec(header);
  if (match === null) {
    limiter.fail(address);
    throw new ApiError(401, 'UNAUTHENTICATED', 'a bearer token is required', {}, { 'www-authenticate': 'Bearer' });
  }
  const hash = hashToken(match[1] as string);
  const row = await findApiTokenByHash(pool, hash);
  const known = row !== null && timingSafeEqual(Buffer.from(row.tokenHash, 'ascii'), Buffer.from(hash, 'ascii'));
  if (!known || row === null || !(ROLES as readonly string[]).includes(row.role)) {
    limiter.fail(address);
    throw new ApiError(401, 'UNAUTHENTICATED', 'the bearer token is unknown or revoked', {}, { 'www-authenticate': 'Bearer' });
  }
  const principal: Principal = { tokenId: row.id, name: row.name, role: row.role as Role };
  if (row.lastUsedAt === null || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    // Bookkeeping only: a failure must not fail the request.
    touchApiToken(pool, row.id).catch(() => undefined);
  }
  if (!hasRole(principal.role, required)) {
    throw new ApiError(403, 'FORBIDDEN', `this needs the ${required} role; the token has ${principal.role}`, { required, role: principal.role });
  }
  return principal;
}
