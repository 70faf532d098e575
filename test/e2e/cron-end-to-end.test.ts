// One cron task through the whole system, with real processes: scheduler → MySQL → broker →
// RabbitMQ → worker (shell job) → outbox → RabbitMQ → broker → MySQL. What a user relies on:
// every second's slot fires exactly once, runs on a worker and ends SUCCESS, with its
// execution and its lifecycle events recorded.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RowDataPacket } from 'mysql2';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { redisKeys } from '@ax/kit';
import { insertTask } from '@ax/store';
import {
  assertNoLeftoverProcesses,
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  dumpAllProcessOutput,
  startService,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
} from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';

const ns = uniqueNamespace('axe2e');
const dataDir = mkdtempSync(join(tmpdir(), 'ax-e2e-'));
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let redis: Awaited<ReturnType<typeof createTestRedis>>;
let amqp: Awaited<ReturnType<typeof createTestAmqp>>;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(ns);
  amqp = await createTestAmqp(ns);
  const env = {
    AX_MYSQL_URL: db.url,
    AX_NAMESPACE: ns,
    AX_LOG_LEVEL: 'warn',
    AX_EXECUTOR_SECRET: 'e2e-executor-secret-0123456789',
    AX_WORKER_DATA_DIR: dataDir,
  };
  await startService('scheduler', { env });
  await startService('broker', { env });
  await startService('worker', { env: { ...env, AX_WORKER_ID: 'e2e-w1', AX_WORKER_SLOTS: '4' } });
});

afterAll(async () => {
  await stopAllProcesses();
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
  assertNoLeftoverProcesses();
});

describe('a cron task end to end', () => {
  it('fires every second exactly once, runs each slot on the worker and records SUCCESS', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const def = parseTaskDefinitionOrThrow({
      name: 'e2e_every_second',
      schedule: { type: 'cron', expr: '* * * * * *' },
      exec: { type: 'shell', command: ['sh', '-c', 'echo run {{expectedTime}}'] },
      block: 'parallel',
      timeoutSeconds: 30,
    });
    await insertTask(db.pool, def);
    await redis.redis.publish(redisKeys(ns).channels.taskChanged, def.name);

    const started = Date.now();
    await waitFor(
      async () => {
        const [rows] = await db.pool.query<RowDataPacket[]>(
          "SELECT COUNT(*) AS n FROM task_instance WHERE task_name = ? AND state = 'SUCCESS'",
          [def.name],
        );
        return Number(rows[0]?.n) >= 5;
      },
      { description: 'five instances of the task reach SUCCESS', timeoutMs: 60_000, intervalMs: 250 },
    );
    console.log(`e2e: five SUCCESS instances after ${Date.now() - started} ms`);
    await db.pool.query('UPDATE task SET enabled = 0, version = version + 1 WHERE name = ?', [def.name]);
    await redis.redis.publish(redisKeys(ns).channels.taskChanged, def.name);

    const [instances] = await db.pool.query<RowDataPacket[]>(
      `SELECT id, expected_time, state, worker_id FROM task_instance WHERE task_name = ? ORDER BY expected_time`,
      [def.name],
    );
    const times = instances.map((r) => (r.expected_time as Date).getTime());
    // exactly one instance per second, no gap between the first and the last slot
    expect(new Set(times).size).toBe(times.length);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(1_000);

    const succeeded = instances.filter((r) => r.state === 'SUCCESS');
    const first = succeeded[0]!;
    expect(first.worker_id).toBe('e2e-w1');
    const [executions] = await db.pool.query<RowDataPacket[]>(
      'SELECT worker_id, exit_code, output_tail FROM task_execution WHERE instance_id = ?',
      [first.id],
    );
    expect(executions).toHaveLength(1);
    expect(executions[0]).toMatchObject({ worker_id: 'e2e-w1', exit_code: 0 });
    expect(String(executions[0]!.output_tail)).toContain(`run ${(first.expected_time as Date).toISOString()}`);
    const [events] = await db.pool.query<RowDataPacket[]>(
      'SELECT type FROM event_log WHERE instance_id = ? ORDER BY id',
      [first.id],
    );
    // ACKED may be missing: a result may overtake its ACK, which is then a no-op (R16).
    expect(events.map((e) => String(e.type))).toEqual(expect.arrayContaining(['CREATED', 'DISPATCHED', 'SUCCEEDED']));
  });
});
