/**
 * The console's cookies (#47): `ax_session` carries a random session id (HttpOnly, SameSite=Lax,
 * Secure when the request came over https, directly or through a trusted proxy's
 * `X-Forwarded-Proto`), `ax_oidc` the PKCE login in flight. Pure: headers in, headers out.
 */
import { normalizeAddress, type TrustedProxies } from './client-address.js';

/** The session cookie's name. */
export const SESSION_COOKIE = 'ax_session';
/** The header a cookie-authenticated write must carry, holding the session's CSRF token. */
export const CSRF_HEADER = 'x-ax-csrf';

/** The value of cookie `name` in a `Cookie` header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Whether the browser reached us over https (Secure cookies only then: plain http on a laptop must still work). */
export function cameOverHttps(encrypted: boolean, peer: string | undefined, forwardedProto: string | string[] | undefined, trusted: TrustedProxies): boolean {
  if (encrypted) return true;
  const address = peer === undefined ? null : normalizeAddress(peer);
  if (address === null || !trusted.has(address)) return false;
  const proto = Array.isArray(forwardedProto) ? forwardedProto[0] : forwardedProto;
  // The proxy nearest the client writes the first value.
  return proto?.split(',')[0]?.trim().toLowerCase() === 'https';
}

/** A `Set-Cookie` value; `maxAgeSeconds` 0 removes the cookie. */
export function setCookie(name: string, value: string, opts: { path: string; maxAgeSeconds: number; secure: boolean }): string {
  return [`${name}=${value}`, `Path=${opts.path}`, `Max-Age=${opts.maxAgeSeconds}`, 'HttpOnly', 'SameSite=Lax', ...(opts.secure ? ['Secure'] : [])].join('; ');
}
