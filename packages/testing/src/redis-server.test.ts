import { existsSync } from 'node:fs';
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { canRunRedisServer, startRedisServer, type PrivateRedis } from './redis-server.js';
import { missingRequirement } from './requires.js';

const started: PrivateRedis[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.cleanup()));
});

async function start(options: Parameters<typeof startRedisServer>[0] = {}): Promise<PrivateRedis> {
  const server = await startRedisServer(options);
  started.push(server);
  return server;
}

/** Runs one command on a fresh connection. */
async function withClient<T>(server: PrivateRedis, fn: (r: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });
}

describe.skipIf(missingRequirement(it, { name: 'redis-server', present: canRunRedisServer(), install: 'apt-get install redis-server' }))('startRedisServer', () => {
  it('runs a private server that stops (port refused) and starts again on the same port, empty without persistence', async () => {
    const server = await start();
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    expect(server.port).not.toBe(6379);
    await withClient(server, (r) => r.set('k', 'v'));
    await server.kill('SIGKILL');
    expect(server.running).toBe(false);
    expect(await refuses(server.port)).toBe(true);
    await server.start();
    expect(await withClient(server, (r) => r.get('k'))).toBeNull();
  });

  it("keeps the data across a crash with persistence 'aof'", async () => {
    const server = await start({ persistence: 'aof' });
    await withClient(server, (r) => r.set('k', 'v'));
    await server.kill('SIGKILL');
    await server.start();
    expect(await withClient(server, (r) => r.get('k'))).toBe('v');
  });

  it('freezes with SIGSTOP and thaws with SIGCONT; cleanup stops it and removes its directory', async () => {
    const server = await start();
    await server.kill('SIGSTOP');
    expect(server.running).toBe(true);
    await server.kill('SIGCONT');
    expect(await withClient(server, (r) => r.ping())).toBe('PONG');
    const { dir, port } = server;
    await server.cleanup();
    await server.cleanup(); // twice is fine
    expect(existsSync(dir)).toBe(false);
    expect(await refuses(port)).toBe(true);
    await expect(server.start()).rejects.toThrow(/cleaned up/);
  });
});
