/** Failed-authentication rate limit per client address (pure, injected clock). */
import { expect, it } from 'vitest';
import { AuthFailureLimiter, hasRole, hashToken } from './auth.js';

it('blocks an address after max failures within the window, and lets it try again after', () => {
  let now = 1_000;
  const limiter = new AuthFailureLimiter(3, 60_000, () => now);
  for (let i = 0; i < 3; i++) {
    expect(limiter.blockedForMs('1.2.3.4')).toBe(0);
    limiter.fail('1.2.3.4');
  }
  expect(limiter.blockedForMs('1.2.3.4')).toBe(60_000);
  expect(limiter.blockedForMs('5.6.7.8')).toBe(0);
  now += 59_999;
  expect(limiter.blockedForMs('1.2.3.4')).toBe(1);
  now += 1;
  expect(limiter.blockedForMs('1.2.3.4')).toBe(0);
});

it('orders roles viewer < operator < admin and hashes tokens with SHA-256', () => {
  expect(hasRole('admin', 'operator')).toBe(true);
  expect(hasRole('operator', 'admin')).toBe(false);
  expect(hasRole('viewer', 'viewer')).toBe(true);
  expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});
