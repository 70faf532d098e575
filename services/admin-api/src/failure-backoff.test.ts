/** The back-off policy of failed authentications (pure; a hand-moved clock, nothing sleeps). */
import { expect, it } from 'vitest';
import { FailureBackoff } from './failure-backoff.js';

function backoff(opts: { burst?: number; windowMs?: number; maxKeys?: number } = {}) {
  const clock = { now: 1_000_000 };
  const b = new FailureBackoff({ burst: opts.burst ?? 20, windowMs: opts.windowMs ?? 60_000, ...(opts.maxKeys ? { maxKeys: opts.maxKeys } : {}) }, () => clock.now);
  return { b, clock };
}

it('lets 20 failures in a row through free, then backs off the 21st for 6 s', () => {
  const { b } = backoff();
  for (let i = 0; i < 20; i++) expect(b.fail('a')).toBe(0);
  expect(b.fail('a')).toBe(6_000);
});

it('grows the wait by 3 s per further failure and never past 60 s', () => {
  const { b } = backoff();
  for (let i = 0; i < 20; i++) b.fail('a');
  const waits = Array.from({ length: 30 }, () => b.fail('a'));
  expect(waits.slice(0, 3)).toEqual([6_000, 9_000, 12_000]);
  expect(Math.max(...waits)).toBe(60_000);
  expect(waits.at(-1)).toBe(60_000);
});

it('frees an address again once it waited the time it was told', () => {
  const { b, clock } = backoff();
  for (let i = 0; i < 20; i++) b.fail('a');
  const wait = b.fail('a');
  clock.now += wait - 1;
  expect(b.retryAfterMs('a')).toBe(1);
  clock.now += 1;
  expect(b.retryAfterMs('a')).toBe(0);
  expect(b.fail('a')).toBe(0);
});

it('drains failures at 20 per minute: one failure every 3 s is never backed off', () => {
  const { b, clock } = backoff();
  for (let i = 0; i < 200; i++) {
    expect(b.fail('a')).toBe(0);
    clock.now += 3_000;
  }
});

it('counts each key on its own', () => {
  const { b } = backoff({ burst: 2 });
  b.fail('a');
  b.fail('a');
  expect(b.fail('a')).toBeGreaterThan(0);
  expect(b.fail('b')).toBe(0);
  expect(b.retryAfterMs('b')).toBe(0);
});

it('tracks at most maxKeys keys, dropping the one that failed least recently', () => {
  const { b } = backoff({ burst: 1, maxKeys: 3 });
  b.fail('a');
  expect(b.fail('a')).toBeGreaterThan(0);
  for (const k of ['b', 'c', 'd']) b.fail(k);
  expect(b.size).toBe(3);
  // 'a' was the stalest and is gone: its next failure is free.
  expect(b.fail('a')).toBe(0);
  expect(b.size).toBe(3);
});

it('forgets keys whose failures have drained', () => {
  const { b, clock } = backoff();
  for (let i = 0; i < 1_000; i++) b.fail(`10.0.${Math.floor(i / 256)}.${i % 256}`);
  expect(b.size).toBe(1_000);
  clock.now += 3_001;
  b.fail('192.0.2.1');
  expect(b.size).toBe(1);
});

it('refuses nonsense options', () => {
  expect(() => new FailureBackoff({ burst: 0, windowMs: 60_000 }, () => 0)).toThrow(RangeError);
  expect(() => new FailureBackoff({ burst: 20, windowMs: 0 }, () => 0)).toThrow(RangeError);
  expect(() => new FailureBackoff({ burst: 20, windowMs: 60_000, maxKeys: 0 }, () => 0)).toThrow(RangeError);
});
