/**
 * Real processes, R14: a worker killed with SIGKILL while it runs jobs is declared
 * LOST_WORKER once its registry entry is gone, and its instances run again on the other
 * worker; a worker frozen with SIGSTOP is lost the same way, and the results it reports after
 * SIGCONT are fenced (recorded, not applied). Every instance ends SUCCESS exactly once.
 * Short lease timings (AX_LEASE_TTL_MS 3000, grace 1000, heartbeat 1000) keep it quick.
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
  startWorkerEnrollment,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
  type TestAmqp,
  type TestDatabase,
  type TestRedis,
} from '@ax/testing';
import type { RowDataPacket } from 'mysql2';

const namespace = uniqueNamespace('axblost');
let db: TestDatabase;
let redis: TestRedis;
let amqp: TestAmqp;
let dataDir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(namespace);
  amqp = await createTestAmqp(namespace);
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'ax-broker-lost-'));
});

afterAll(async () => {
  await stopAllProcesses({ graceMs: 5_000 });
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function counts(): Promise<Record<string, number>> {
  const [r] = await db.pool.query<RowDataPacket[]>(`SELECT state, COUNT(*) AS n FROM task_instance GROUP BY state`);
  return Object.fromEntries(r.map((row) => [String(row.state), Number(row.n)]));
}

describe('R14 with real workers', () => {
  it('R14 a worker killed with SIGKILL or frozen with SIGSTOP is LOST_WORKER; its instances run again elsewhere, exactly once', async () => {
    const timings = { AX_LEASE_TTL_MS: '3000', AX_LOST_WORKER_GRACE_MS: '1000', AX_HEARTBEAT_INTERVAL_MS: '1000' };
    const common = { AX_MYSQL_URL: db.url, AX_REDIS_URL: redis.url, AX_AMQP_URL: amqp.url, AX_NAMESPACE: namespace, AX_LOG_LEVEL: 'warn', AX_EXECUTOR_SECRET: 'broker-e2e-executor-secret-0123456789', ...timings };
    await startService('broker', { name: 'broker', env: common });
    // The workers are enrolled, as in production (#44): their own RabbitMQ and Redis logins.
    const enrolled = await startWorkerEnrollment({ env: common, dir: dataDir });
    // No job prefetch: both victims must run 4 jobs each (with prefetch the first one the broker
    // saw could hold all 8). Held work on a killed worker is prefetch.e2e.test.ts's case.
    const worker = (id: string) =>
      startService('worker', { name: id, env: enrolled.workerEnv({ AX_WORKER_ID: id, AX_WORKER_SLOTS: '4', AX_WORKER_JOB_PREFETCH: '0', AX_WORKER_DATA_DIR: dataDir, AX_WORKER_TAGS: 'lost' }) });
    const victimKill = await worker('lost-kill');
    const victimStop = await worker('lost-stop');
    const task = await insertTask(
      db.pool,
      parseTaskDefinitionOrThrow({ name: 'lost_sleep', schedule: { type: 'none' }, exec: { type: 'shell', command: ['sleep', '2'] }, tags: ['lost'], block: 'parallel', timeoutSeconds: 60 }),
    );
    const n = 8;
    for (let i = 0; i < n; i++) {
      await db.pool.query(
        `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority)
         VALUES (?, 'lost_sleep', ?, '2026-01-01', 'manual', 'PENDING', 1, 1, NOW(3), '{}', 5)`,
        [task.id, new Date(Date.UTC(2026, 0, 1) + i * 1000)],
      );
    }
    await redis.redis.publish(redisKeys(namespace).channels.instancesReady, '{}');
    // Both victims are running their four jobs each.
    await waitFor(async () => (await counts()).RUNNING === n, { description: `${n} RUNNING`, timeoutMs: 20_000 });
    const brokeAt = performance.now();
    victimKill.kill('SIGKILL');
    victimStop.kill('SIGSTOP');
    const survivor = await worker('lost-survivor');
    const done = await waitFor(async () => {
      const c = await counts();
      return c.SUCCESS === n ? c : null;
    }, { description: `${n} SUCCESS after the losses`, timeoutMs: 60_000, intervalMs: 250 });
    const recoveredMs = Math.round(performance.now() - brokeAt);
    victimStop.kill('SIGCONT');
    const [lost] = await db.pool.query<RowDataPacket[]>(`SELECT COUNT(DISTINCT instance_id) AS n FROM event_log WHERE type = 'LOST_WORKER'`);
    const [succeeded] = await db.pool.query<RowDataPacket[]>(`SELECT instance_id, COUNT(*) AS n FROM event_log WHERE type = 'SUCCEEDED' GROUP BY instance_id`);
    console.log(`R14 e2e: ${Number(lost[0]?.n)} instances LOST_WORKER; all ${n} SUCCESS ${recoveredMs} ms after SIGKILL/SIGSTOP (lease 3000 + grace 1000)`);
    expect(done.SUCCESS).toBe(n);
    expect(Number(lost[0]?.n)).toBe(n);
    expect(succeeded).toHaveLength(n);
    expect(succeeded.every((r) => Number(r.n) === 1)).toBe(true);
    // The frozen worker wakes and reports: its results are fenced, nothing changes.
    await waitFor(async () => {
      const [f] = await db.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM event_log WHERE type = 'FENCED'`);
      return Number(f[0]?.n) > 0;
    }, { description: 'fenced late results of the frozen worker', timeoutMs: 20_000 });
    expect((await counts()).SUCCESS).toBe(n);
    await survivor.stop();
  }, 150_000);
});
