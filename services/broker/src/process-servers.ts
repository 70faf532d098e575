/**
 * Test support for the broker's process tests (`*.e2e.test.ts`): a database, Redis prefix and
 * RabbitMQ namespace of the test's own, and a worker data folder, made before the file's tests
 * and removed after them with every process the file started, also when a test fails.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createTestAmqp, createTestDatabase, createTestRedis, stopAllProcesses, uniqueNamespace, type TestAmqp, type TestDatabase, type TestRedis } from '@ax/testing';

export interface ProcessServers {
  readonly namespace: string;
  db: TestDatabase;
  redis: TestRedis;
  amqp: TestAmqp;
  dataDir: string;
  /** What every ax process of the test is started with. */
  env: Record<string, string>;
}

/** Registers the file's beforeAll/afterAll; the fields are set once beforeAll has run. */
export function useProcessServers(prefix: string): ProcessServers {
  const servers = { namespace: uniqueNamespace(prefix) } as ProcessServers;
  beforeAll(async () => {
    servers.db = await createTestDatabase();
    servers.redis = await createTestRedis(servers.namespace);
    servers.amqp = await createTestAmqp(servers.namespace);
    servers.dataDir = mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
    servers.env = { AX_MYSQL_URL: servers.db.url, AX_REDIS_URL: servers.redis.url, AX_AMQP_URL: servers.amqp.url, AX_NAMESPACE: servers.namespace, AX_LOG_LEVEL: 'warn' };
  });
  afterAll(async () => {
    await stopAllProcesses({ graceMs: 5_000 });
    await servers.amqp?.cleanup();
    await servers.redis?.cleanup();
    await servers.db?.drop();
    if (servers.dataDir !== undefined) rmSync(servers.dataDir, { recursive: true, force: true });
  });
  return servers;
}
