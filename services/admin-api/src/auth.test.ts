/** Roles, token hashing, and whom the failed-login limiter counts (pure, injected clock). */
import type { Request } from 'express';
import { expect, it } from 'vitest';
import { AuthFailureLimiter, hasRole, hashToken } from './auth.js';
import { parseTrustedProxies } from './client-address.js';

function request(peer: string, forwardedFor?: string): Request {
  return { socket: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } } as unknown as Request;
}

function trusted(list: string) {
  const parsed = parseTrustedProxies(list);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.value;
}

it('backs an address off after max failures in a row, and keeps other addresses free', () => {
  const now = 1_000;
  const limiter = new AuthFailureLimiter(3, 60_000, () => now);
  for (let i = 0; i < 3; i++) expect(limiter.fail('1.2.3.4')).toBe(0);
  expect(limiter.fail('1.2.3.4')).toBeGreaterThan(0);
  expect(limiter.fail('5.6.7.8')).toBe(0);
});

it('counts failures under the socket peer and ignores X-Forwarded-For without trusted proxies', () => {
  const limiter = new AuthFailureLimiter(3, 60_000, () => 0);
  expect(limiter.clientAddress(request('::ffff:192.0.2.9', '203.0.113.5'))).toBe('192.0.2.9');
});

it('behind a trusted proxy counts the right-most untrusted X-Forwarded-For address', () => {
  const limiter = new AuthFailureLimiter(3, 60_000, () => 0, trusted('10.0.0.0/8'));
  expect(limiter.clientAddress(request('10.1.2.3', '198.51.100.1, 203.0.113.5, 10.4.4.4'))).toBe('203.0.113.5');
  expect(limiter.clientAddress(request('192.0.2.9', '203.0.113.5'))).toBe('192.0.2.9');
});

it('orders roles viewer < operator < admin and hashes tokens with SHA-256', () => {
  expect(hasRole('admin', 'operator')).toBe(true);
  expect(hasRole('operator', 'admin')).toBe(false);
  expect(hasRole('viewer', 'viewer')).toBe(true);
  expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});
