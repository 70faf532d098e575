/**
 * A PRIVATE Redis Sentinel group for fault drills: a primary, one replica and three sentinels on
 * free ports of 127.0.0.1 (the machine's shared Redis is never touched), quorum 2, the primary
 * judged down after 1 s. Kill the primary and the sentinels promote the replica.
 *
 * ```ts
 * const group = await startRedisSentinelGroup();
 * // AX_REDIS_SENTINELS=group.sentinels.join(','), AX_REDIS_SENTINEL_NAME=group.name
 * await group.primary.kill();                 // SIGKILL
 * await group.waitForPrimary(group.replica.port);
 * await group.cleanup();
 * ```
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort, startProcess, type ManagedProcess } from './processes.js';
import { REDIS_SERVER, startRedisServer, type PrivateRedis } from './redis-server.js';

/** A running group. */
export interface RedisSentinelGroup {
  /** The monitored primary's name (`AX_REDIS_SENTINEL_NAME`). */
  readonly name: string;
  /** The server that was primary at start. */
  readonly primary: PrivateRedis;
  /** Its replica (promoted when the primary dies). */
  readonly replica: PrivateRedis;
  /** `127.0.0.1:<port>` of each sentinel (`AX_REDIS_SENTINELS`). */
  readonly sentinels: readonly string[];
  /** The port the sentinels currently name as primary. */
  primaryPort(): Promise<number>;
  /** Waits until the sentinels name `port` as primary and it accepts writes; returns the ms waited. */
  waitForPrimary(port: number, timeoutMs?: number): Promise<number>;
  cleanup(): Promise<void>;
}

async function waitUntil<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function withClient<T>(port: number, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

/** Starts the group and waits until the replica is in sync and every sentinel monitors the primary. */
export async function startRedisSentinelGroup(options: { name?: string } = {}): Promise<RedisSentinelGroup> {
  const name = options.name ?? 'axprimary';
  const primary = await startRedisServer();
  const replica = await startRedisServer({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-sentinel-'));
  const sentinels: Array<{ port: number; proc: ManagedProcess }> = [];
  const cleanup = async (): Promise<void> => {
    await Promise.all(sentinels.map((s) => s.proc.stop({ graceMs: 3_000 }).catch(() => undefined)));
    await Promise.all([primary.cleanup(), replica.cleanup()]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil('the replica in sync', 20_000, async () =>
      withClient(replica.port, async (r) => ((await r.info('replication')).includes('master_link_status:up') ? true : undefined)),
    );
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      // A sentinel rewrites its configuration file: one writable file each.
      const conf = path.join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${primary.port} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 5000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      const proc = await startProcess({ name: `redis-sentinel-${port}`, command: REDIS_SERVER, args: [conf, '--sentinel'], readyLine: /\+monitor master/, readyTimeoutMs: 20_000 });
      sentinels.push({ port, proc });
    }
    // Every sentinel has found the replica and the other sentinels (else a failover has no quorum).
    await waitUntil('sentinels that know each other and the replica', 30_000, async () => {
      for (const s of sentinels) {
        const master = (await withClient(s.port, (r) => r.call('SENTINEL', 'MASTER', name))) as string[];
        const field = (k: string): number => Number(master[master.indexOf(k) + 1]);
        if (field('num-slaves') < 1 || field('num-other-sentinels') < 2) return undefined;
      }
      return true;
    });
  } catch (error) {
    await cleanup();
    throw error;
  }
  const primaryPort = async (): Promise<number> => {
    for (const s of sentinels) {
      try {
        const addr = (await withClient(s.port, (r) => r.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name))) as [string, string];
        return Number(addr[1]);
      } catch {
        // this sentinel is not answering: ask the next
      }
    }
    throw new Error('no sentinel answers');
  };
  return {
    name,
    primary,
    replica,
    sentinels: sentinels.map((s) => `127.0.0.1:${s.port}`),
    primaryPort,
    async waitForPrimary(port, timeoutMs = 30_000) {
      const started = Date.now();
      await waitUntil(`the sentinels to name ${port} as primary`, timeoutMs, async () => ((await primaryPort()) === port ? true : undefined));
      await waitUntil(`${port} to accept writes`, timeoutMs, async () => withClient(port, async (r) => ((await r.set('ax:sentinel:probe', '1')) === 'OK' ? true : undefined)));
      return Date.now() - started;
    },
    cleanup,
  };
}
