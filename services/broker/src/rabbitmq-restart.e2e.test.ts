/**
 * Real processes against a PRIVATE RabbitMQ node (own node name, ports and data directory in a
 * temp dir; the shared server is never touched): a broker and a worker run instances while the
 * node is stopped and started again. Every instance still ends SUCCESS exactly once.
 * Needs `/usr/lib/rabbitmq/bin/rabbitmq-server`: skipped when it is missing, failed under CI=true.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { redisKeys } from '@ax/kit';
import { insertTask } from '@ax/store';
import {
  canRunRabbitMq,
  createTestDatabase,
  createTestRedis,
  freePort,
  missingRequirement,
  RABBITMQ_SERVER,
  startProcess,
  startService,
  startWorkerEnrollment,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
  type ManagedProcess,
  type TestDatabase,
  type TestRedis,
} from '@ax/testing';
import type { RowDataPacket } from 'mysql2';

const namespace = uniqueNamespace('axbrmq');
let db: TestDatabase;
let redis: TestRedis;
let dir: string;
let amqpPort: number;
let distPort: number;
let managementPort: number;
const nodeName = `${namespace}@localhost`;

function startNode(): Promise<ManagedProcess> {
  return startProcess({
    name: 'rabbitmq-private',
    command: RABBITMQ_SERVER,
    env: {
      HOME: dir,
      RABBITMQ_NODENAME: nodeName,
      RABBITMQ_NODE_PORT: String(amqpPort),
      RABBITMQ_DIST_PORT: String(distPort),
      RABBITMQ_MNESIA_BASE: path.join(dir, 'mnesia'),
      RABBITMQ_LOG_BASE: path.join(dir, 'log'),
      RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, 'enabled_plugins'),
      RABBITMQ_CONFIG_FILE: path.join(dir, 'node.conf'),
      RABBITMQ_ADVANCED_CONFIG_FILE: path.join(dir, 'none-advanced.config'),
    },
    readyLine: /Starting broker\.\.\. completed/,
    readyTimeoutMs: 90_000,
  });
}

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(namespace);
  dir = mkdtempSync(path.join(os.tmpdir(), 'ax-rmq-'));
  // The management plugin: admin-api makes the enrolled worker's RabbitMQ user through it (#44).
  writeFileSync(path.join(dir, 'enabled_plugins'), '[rabbitmq_management].\n');
  amqpPort = await freePort();
  distPort = await freePort();
  managementPort = await freePort();
  writeFileSync(path.join(dir, 'node.conf'), `management.tcp.ip = 127.0.0.1\nmanagement.tcp.port = ${managementPort}\n`);
});

afterAll(async () => {
  await stopAllProcesses({ graceMs: 15_000 });
  await redis?.cleanup();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(missingRequirement(it, { name: 'rabbitmq-server', present: canRunRabbitMq(), install: 'apt-get install rabbitmq-server' }))('RabbitMQ restart', () => {
  it('a broker and a worker ride out a restart of their RabbitMQ node: every instance SUCCESS exactly once', async () => {
    const first = await startNode();
    const common = {
      AX_MYSQL_URL: db.url,
      AX_REDIS_URL: redis.url,
      AX_AMQP_URL: `amqp://guest:guest@127.0.0.1:${amqpPort}`,
      AX_AMQP_MANAGEMENT_URL: `http://guest:guest@127.0.0.1:${managementPort}`,
      AX_NAMESPACE: namespace,
      AX_LOG_LEVEL: 'warn',
      AX_EXECUTOR_SECRET: 'broker-e2e-executor-secret-0123456789',
    };
    await startService('broker', { name: 'broker', env: common });
    // The worker is enrolled, as in production (#44): its RabbitMQ user must outlive the restart.
    const enrolled = await startWorkerEnrollment({ env: common, dir });
    await startService('worker', {
      name: 'rmq-worker',
      env: enrolled.workerEnv({ AX_WORKER_ID: 'rmq-w1', AX_WORKER_SLOTS: '16', AX_WORKER_DATA_DIR: path.join(dir, 'worker'), AX_WORKER_TAGS: 'rmq' }),
    });
    const task = await insertTask(
      db.pool,
      parseTaskDefinitionOrThrow({ name: 'rmq_true', schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] }, tags: ['rmq'], block: 'parallel' }),
    );
    const n = 300;
    const rows = Array.from({ length: n }, (_, i) => [task.id, new Date(Date.UTC(2026, 0, 1) + i * 1000)]);
    await db.pool.query(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority)
       VALUES ${rows.map(() => "(?, 'rmq_true', ?, '2026-01-01', 'manual', 'PENDING', 1, 1, NOW(3), '{}', 5)").join(', ')}`,
      rows.flat(),
    );
    await redis.redis.publish(redisKeys(namespace).channels.instancesReady, '{}');
    const succeeded = async (): Promise<number> => {
      const [r] = await db.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM task_instance WHERE state = 'SUCCESS'`);
      return Number(r[0]?.n);
    };
    await waitFor(async () => (await succeeded()) >= 40, { description: '40 SUCCESS before the restart', timeoutMs: 60_000, intervalMs: 200 });
    const before = await succeeded();
    const downAt = performance.now();
    await first.stop({ graceMs: 20_000 });
    await startNode(); // stopped by stopAllProcesses in afterAll
    const upMs = Math.round(performance.now() - downAt);
    await waitFor(async () => (await succeeded()) === n, { description: `${n} SUCCESS after the restart`, timeoutMs: 150_000, intervalMs: 500 });
    const doneMs = Math.round(performance.now() - downAt);
    const [execs] = await db.pool.query<RowDataPacket[]>(`SELECT instance_id, SUM(state = 'SUCCESS') AS ok FROM task_execution GROUP BY instance_id`);
    const [dupes] = await db.pool.query<RowDataPacket[]>(`SELECT instance_id FROM event_log WHERE type = 'SUCCEEDED' GROUP BY instance_id HAVING COUNT(*) > 1`);
    console.log(`RabbitMQ restart: ${before} SUCCESS before; node back after ${upMs} ms; all ${n} SUCCESS ${doneMs} ms after the stop; executions ${execs.length}`);
    expect(execs.filter((r) => Number(r.ok) !== 1)).toEqual([]);
    expect(dupes).toEqual([]);
  }, 300_000);
});
