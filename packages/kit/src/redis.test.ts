import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from './logger.js';
import { closeRedis, createRedis, redisKeys, redisReconnectDelayMs } from './redis.js';

const url = process.env.AX_REDIS_URL?.trim() || 'redis://127.0.0.1:6379';
// Own namespace per run; @ax/testing is not used here because it depends on this package.
const ns = `axt_${randomBytes(4).toString('hex')}`;

describe('redisKeys', () => {
  it('composes every key and channel under the namespace', () => {
    const k = redisKeys('ax');
    expect(k.fireLock('nightly-report', 1_700_000_000_000)).toBe('ax:fire:nightly-report:1700000000000');
    expect(k.worker('w-1')).toBe('ax:worker:w-1');
    expect(k.workers).toBe('ax:workers');
    expect(k.slots('w-1')).toBe('ax:slots:w-1');
    expect(k.channels.taskChanged).toBe('ax:task-changed');
    expect(k.channels.instancesReady).toBe('ax:instances-ready');
    expect(k.pattern).toBe('ax:*');
    const all = [
      k.fireLock('t', 1),
      k.worker('w'),
      k.workers,
      k.slots('w'),
      k.scheduler('s'),
      k.lock('purge'),
      k.rate('dispatch'),
      k.alert('LOST_WORKER', '12'),
      k.roundRobin('t'),
      k.backlogHolds,
      ...Object.values(k.channels),
    ];
    for (const key of all) expect(key.startsWith('ax:')).toBe(true);
    expect(new Set(all).size).toBe(all.length);
  });

  it('refuses a namespace that could escape its prefix', () => {
    expect(() => redisKeys('a:b')).toThrow(/invalid namespace/);
    expect(() => redisKeys('A')).toThrow(/invalid namespace/);
    expect(() => redisKeys('')).toThrow(/invalid namespace/);
    expect(() => redisKeys('ns*')).toThrow(/invalid namespace/);
  });
});

describe('redisReconnectDelayMs', () => {
  it('doubles from 100 ms, caps at 5 s, with ±20 % jitter', () => {
    expect(redisReconnectDelayMs(1, () => 0.5)).toBe(100);
    expect(redisReconnectDelayMs(3, () => 0.5)).toBe(400);
    expect(redisReconnectDelayMs(30, () => 0.5)).toBe(5_000);
    expect(redisReconnectDelayMs(30, () => 0)).toBe(4_000);
    expect(redisReconnectDelayMs(30, () => 0.999_999)).toBe(6_000);
  });
});

describe('createRedis', () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  it('talks to Redis, and closeRedis ends the client', async () => {
    const redis = createRedis(url, { logger: silentLogger(), name: 'ax-kit-test' });
    cleanup.push(() => closeRedis(redis));
    const k = redisKeys(ns);
    cleanup.push(async () => {
      const admin = createRedis(url, { logger: silentLogger() });
      await admin.del(k.fireLock('t', 1));
      await closeRedis(admin);
    });
    expect(await redis.set(k.fireLock('t', 1), 'me', 'PX', 30_000, 'NX')).toBe('OK');
    expect(await redis.set(k.fireLock('t', 1), 'other', 'PX', 30_000, 'NX')).toBeNull();
    expect(await redis.client('GETNAME')).toBe('ax-kit-test');
    await closeRedis(redis);
    expect(redis.status).toBe('end');
    await closeRedis(redis); // idempotent
  });

  it('fails a command fast instead of hanging when Redis is unreachable', async () => {
    const redis = createRedis('redis://127.0.0.1:1', { logger: silentLogger() });
    cleanup.push(() => closeRedis(redis));
    const started = Date.now();
    await expect(redis.get('x')).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(3_000);
    await closeRedis(redis);
  });
});
