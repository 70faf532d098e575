// The worker's outbox across a RabbitMQ outage, with real processes and a private RabbitMQ node
// (the shared server is never touched): 200 jobs are running when the node stops, they all
// finish on the worker while it is down, and once it is back every result reaches MySQL —
// each applied exactly once (DESIGN §5, R12, R14).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RowDataPacket } from 'mysql2';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { redisKeys } from '@ax/kit';
import { insertTask } from '@ax/store';
import {
  canRunRabbitMq,
  createTestDatabase,
  createTestRedis,
  dumpAllProcessOutput,
  missingRequirement,
  startRabbitMq,
  startService,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
  type PrivateRabbitMq,
  type TestDatabase,
  type TestRedis,
} from '@ax/testing';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';

const JOBS = 200;
/**
 * Long enough that no job ends before all 200 are RUNNING and the node is stopped (the test
 * asserts no SUCCESS then): with 10 s a loaded machine took longer than that to start them all.
 */
const JOB_SECONDS = 20;
const ns = uniqueNamespace('axoutbox');
const dataDir = mkdtempSync(join(tmpdir(), 'ax-outbox-e2e-'));
let db: TestDatabase | undefined;
let redis: TestRedis | undefined;
let rabbit: PrivateRabbitMq | undefined;

afterAll(async () => {
  await stopAllProcesses({ graceMs: 15_000 });
  await rabbit?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function countByState(state: string): Promise<number> {
  const [rows] = await db!.pool.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM task_instance WHERE state = ?', [state]);
  return Number(rows[0]?.n);
}

describe.skipIf(missingRequirement(it, { name: 'rabbitmq-server', present: canRunRabbitMq(), install: 'apt-get install rabbitmq-server' }))('the worker outbox across a RabbitMQ outage', () => {
  it(`R12 R14: ${JOBS} jobs finish while RabbitMQ is down; after it returns every result reaches MySQL once`, async () => {
    onTestFailed(() => dumpAllProcessOutput());
    db = await createTestDatabase();
    redis = await createTestRedis(ns);
    rabbit = await startRabbitMq();
    const env = { AX_MYSQL_URL: db.url, AX_REDIS_URL: redis.url, AX_AMQP_URL: rabbit.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'warn' };
    await startService('broker', { env });
    await startService('worker', {
      env: { ...env, AX_WORKER_ID: 'outbox-w1', AX_WORKER_SLOTS: String(JOBS), AX_WORKER_DATA_DIR: dataDir, AX_WORKER_TAGS: 'outbox' },
    });
    const task = await insertTask(
      db.pool,
      parseTaskDefinitionOrThrow({
        name: 'outbox_sleep',
        schedule: { type: 'none' },
        exec: { type: 'shell', command: ['sleep', String(JOB_SECONDS)] },
        tags: ['outbox'],
        block: 'parallel',
        timeoutSeconds: 120,
      }),
    );
    const slots = Array.from({ length: JOBS }, (_, i) => [task.id, new Date(Date.UTC(2026, 0, 1) + i * 1000)]);
    await db.pool.query(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority)
       VALUES ${slots.map(() => "(?, 'outbox_sleep', ?, '2026-01-01', 'manual', 'PENDING', 1, 1, NOW(3), '{}', 5)").join(', ')}`,
      slots.flat(),
    );
    await redis.redis.publish(redisKeys(ns).channels.instancesReady, '{}');

    await waitFor(async () => (await countByState('RUNNING')) === JOBS, {
      description: `all ${JOBS} instances RUNNING (ACKed) before the outage`,
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    expect(await countByState('SUCCESS')).toBe(0);
    await rabbit.stop();
    // Every job ends while the node is down: its result can only wait in the outbox.
    await new Promise((resolve) => setTimeout(resolve, (JOB_SECONDS + 5) * 1_000));
    expect(await countByState('SUCCESS')).toBe(0);
    expect(await countByState('RUNNING')).toBe(JOBS); // R14: never declared lost meanwhile

    const backAt = performance.now();
    await rabbit.start();
    const restartMs = Math.round(performance.now() - backAt);
    await waitFor(async () => (await countByState('SUCCESS')) === JOBS, {
      description: `all ${JOBS} results applied within 30 s of RabbitMQ's return`,
      timeoutMs: restartMs + 30_000,
      intervalMs: 250,
    });
    console.log(`outbox: node restarted in ${restartMs} ms; all ${JOBS} results in MySQL ${Math.round(performance.now() - backAt)} ms after the restart began`);

    const [executions] = await db.pool.query<RowDataPacket[]>(
      `SELECT instance_id, COUNT(*) AS n, SUM(state = 'SUCCESS') AS ok FROM task_execution GROUP BY instance_id`,
    );
    expect(executions).toHaveLength(JOBS);
    expect(executions.filter((r) => Number(r.n) !== 1 || Number(r.ok) !== 1)).toEqual([]);
    const [twice] = await db.pool.query<RowDataPacket[]>(
      `SELECT instance_id FROM event_log WHERE type = 'SUCCEEDED' GROUP BY instance_id HAVING COUNT(*) > 1`,
    );
    expect(twice).toEqual([]);
  }, 240_000);
});
