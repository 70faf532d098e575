/**
 * Redis through Sentinel (#23): with `AX_REDIS_SENTINELS` the client asks the sentinels for the
 * primary and follows a failover by itself. A private group (primary, replica, 3 sentinels);
 * the primary is killed with SIGKILL while a writer keeps writing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canRunRedisServer, missingRequirement, startRedisSentinelGroup, type RedisSentinelGroup } from '@ax/testing';
import { silentLogger } from './logger.js';
import { closeRedis, createRedis, redisTargetOf, sentinelOptions } from './redis.js';

describe('sentinelOptions', () => {
  it('takes the sentinels and the name from the target, password, user, database and TLS from the URL', () => {
    const options = sentinelOptions({ url: 'rediss://ax:p%40ss@ignored:6379/3', sentinels: ['s1:26379', '10.0.0.2:26380'], sentinelName: 'axmain', sentinelPassword: 'sp' });
    expect(options).toMatchObject({
      sentinels: [{ host: 's1', port: 26379 }, { host: '10.0.0.2', port: 26380 }],
      name: 'axmain',
      sentinelPassword: 'sp',
      password: 'p@ss',
      username: 'ax',
      db: 3,
      tls: {},
      enableTLSForSentinelMode: true,
    });
    expect(options.reconnectOnError?.(new Error('READONLY You can\'t write against a read only replica.'))).toBe(2);
    expect(options.reconnectOnError?.(new Error('ERR wrong number of arguments'))).toBe(false);
  });

  it('a configuration without sentinels keeps the URL as the server', () => {
    expect(redisTargetOf({ redisUrl: 'redis://127.0.0.1:6379', redisSentinels: [] })).toEqual({ url: 'redis://127.0.0.1:6379', sentinels: [] });
  });
});

describe.skipIf(missingRequirement(it, { name: 'redis-server', present: canRunRedisServer(), install: 'apt-get install redis-server' }))('createRedis with sentinels', () => {
  let group: RedisSentinelGroup;
  beforeAll(async () => {
    group = await startRedisSentinelGroup();
  }, 90_000);
  afterAll(async () => {
    await group?.cleanup();
  });

  it('follows a failover: the writes go on against the promoted replica, none acknowledged twice or lost', async () => {
    const redis = createRedis(
      { url: 'redis://127.0.0.1:1', sentinels: group.sentinels, sentinelName: group.name },
      { logger: silentLogger(), name: 'ax-sentinel-test' },
    );
    try {
      expect(Number((await redis.info('server')).match(/tcp_port:(\d+)/)?.[1])).toBe(group.primary.port);
      let acknowledged = 0;
      let failedWrites = 0;
      let stop = false;
      const writer = (async () => {
        while (!stop) {
          try {
            await redis.rpush('ax:sentinel:writes', String(acknowledged + 1));
            acknowledged++;
          } catch {
            failedWrites++; // during the failover: the caller's loop retries, as ax's loops do
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, 500));
      // The replica has every acknowledged write before the kill (WAIT: replicated to 1 replica).
      await redis.wait(1, 2_000);
      const beforeKill = acknowledged;
      const killedAt = Date.now();
      await group.primary.kill('SIGKILL');
      const promotedMs = await group.waitForPrimary(group.replica.port);
      const until = Date.now() + 30_000;
      while (acknowledged < beforeKill + 20 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
      stop = true;
      await writer;
      const writesResumedMs = Date.now() - killedAt;
      console.log(`sentinel failover: replica promoted ${promotedMs} ms after SIGKILL; ${acknowledged - beforeKill} writes since, ${failedWrites} failed meanwhile; checked at ${writesResumedMs} ms`);
      expect(acknowledged).toBeGreaterThanOrEqual(beforeKill + 20);
      expect(Number((await redis.info('server')).match(/tcp_port:(\d+)/)?.[1])).toBe(group.replica.port);
      // Each acknowledged write is there once, in order (those written just before the kill and
      // not yet replicated could be lost: Redis replication is asynchronous, which is why ax
      // keeps nothing in Redis that MySQL does not guard, R2/R14).
      const stored = (await redis.lrange('ax:sentinel:writes', 0, -1)).map(Number);
      expect(new Set(stored).size).toBe(stored.length);
      expect(stored.slice(0, beforeKill)).toEqual(Array.from({ length: beforeKill }, (_, i) => i + 1));
    } finally {
      await closeRedis(redis);
    }
  }, 90_000);
});
