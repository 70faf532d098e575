/**
 * Real processes, #22 priority capacity: a worker with 4 slots, 2 kept for priority ≥ 7
 * (`AX_WORKER_RESERVED_SLOTS=2:7`), flooded with priority-1 jobs. At most 2 of them run at
 * once, and a priority-9 instance starts at once in a kept slot, before any of the flood ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { redisKeys } from '@ax/kit';
import { insertTask } from '@ax/store';
import {
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  startService,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
  type TestAmqp,
  type TestDatabase,
  type TestRedis,
} from '@ax/testing';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';

const namespace = uniqueNamespace('axbprio');
let db: TestDatabase;
let redis: TestRedis;
let amqp: TestAmqp;
let dataDir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(namespace);
  amqp = await createTestAmqp(namespace);
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'ax-broker-prio-'));
});

afterAll(async () => {
  await stopAllProcesses({ graceMs: 5_000 });
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function addInstances(taskId: string, taskName: string, priority: number, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const [r] = await db.pool.query<ResultSetHeader>(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority)
       VALUES (?, ?, NOW(3) - INTERVAL ? SECOND, CURDATE(), 'manual', 'PENDING', 1, 1, NOW(3), '{}', ?)`,
      [taskId, taskName, i, priority],
    );
    ids.push(String(r.insertId));
  }
  await redis.redis.publish(redisKeys(namespace).channels.instancesReady, '{}');
  return ids;
}

describe('#22 reserved slots for high priority, with real processes', () => {
  it('a flood of priority 1 takes only the unreserved slots; a priority-9 instance starts in a kept slot before any of it ends', async () => {
    // No job prefetch (R9): this test counts DISPATCHED/RUNNING rows as what runs, and held
    // dispatches are ACKed (RUNNING) too. That held low-priority work never takes a kept slot is
    // slots.test.ts's "#22 R9" case.
    const env = { AX_MYSQL_URL: db.url, AX_REDIS_URL: redis.url, AX_AMQP_URL: amqp.url, AX_NAMESPACE: namespace, AX_LOG_LEVEL: 'warn' };
    await startService('broker', { name: 'broker', env });
    await startService('worker', { name: 'prio-w', env: { ...env, AX_WORKER_ID: 'prio-w', AX_WORKER_SLOTS: '4', AX_WORKER_RESERVED_SLOTS: '2:7', AX_WORKER_DATA_DIR: dataDir, AX_WORKER_JOB_PREFETCH: '0' } });
    const task = (name: string, seconds: number) =>
      insertTask(db.pool, parseTaskDefinitionOrThrow({ name, schedule: { type: 'none' }, exec: { type: 'shell', command: ['sleep', String(seconds)] }, block: 'parallel', retry: { max: 0 }, timeoutSeconds: 60 }));
    // Flood jobs run 12 s: the urgent one must start before any of them ends, and on a loaded
    // machine its claim, dispatch and ACK took more than what was left of a 6 s job. The test
    // does not wait for the flood, so this costs nothing.
    const flood = await task('prio_flood', 12);
    const urgent = await task('prio_urgent', 1);
    await addInstances(flood.id, 'prio_flood', 1, 12);
    const running = async (taskName: string): Promise<number> => {
      const [r] = await db.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM task_instance WHERE task_name = ? AND state IN ('DISPATCHED', 'RUNNING')`, [taskName]);
      return Number(r[0]?.n);
    };
    await waitFor(async () => (await running('prio_flood')) === 2, { description: '2 flood jobs running', timeoutMs: 20_000 });
    // The flood keeps waiting with 2 slots free: it never takes the kept ones.
    let maxFlood = 0;
    for (let i = 0; i < 10; i++) {
      maxFlood = Math.max(maxFlood, await running('prio_flood'));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const insertedAt = performance.now();
    const [urgentId] = await addInstances(urgent.id, 'prio_urgent', 9, 1);
    const started = await waitFor(async () => {
      const [r] = await db.pool.query<RowDataPacket[]>(`SELECT acked_at FROM task_execution WHERE instance_id = ? AND acked_at IS NOT NULL`, [urgentId]);
      return r[0] ?? null;
    }, { description: 'the priority-9 instance started', timeoutMs: 20_000, intervalMs: 50 });
    const startedMs = Math.round(performance.now() - insertedAt);
    const [ended] = await db.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM task_instance WHERE task_name = 'prio_flood' AND ended_at IS NOT NULL AND ended_at < ?`, [started.acked_at]);
    console.log(`#22 reserved slots: at most ${maxFlood} of the flood ran at once; the priority-9 instance started ${startedMs} ms after it was inserted`);
    expect(maxFlood).toBe(2);
    expect(Number(ended[0]?.n)).toBe(0); // it did not wait for a flood job to free a slot
  }, 90_000);
});
