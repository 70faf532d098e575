/**
 * Real processes, R14 with the fast signal (worker-presence.ts): a worker killed with SIGKILL
 * is lost as soon as RabbitMQ has dropped its consumer and its heartbeats have stopped — within
 * the production lease (15 s) the lease path alone cannot do that — and its job runs again on
 * the other worker, exactly once. A worker whose link to RabbitMQ is cut while it keeps
 * heartbeating Redis is never declared lost: its result is applied when the link returns. A
 * worker killed by its own job a few ms after it started (ACK still lingering) is accounted as
 * started: LOST_WORKER, a failed attempt, not "never received" (gone-dispatches.ts).
 * Production lease timings (AX_LEASE_TTL_MS 15000, grace 10000); heartbeat 1 s (silence 2.5 s).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
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
  startTcpProxy,
  stopAllProcesses,
  throughProxy,
  uniqueNamespace,
  waitFor,
  type CuttableProxy,
  type WorkerEnrollment,
  type TestAmqp,
  type TestDatabase,
  type TestRedis,
} from '@ax/testing';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';

const namespace = uniqueNamespace('axbfast');
let db: TestDatabase;
let redis: TestRedis;
let amqp: TestAmqp;
let proxy: CuttableProxy | undefined;
let dataDir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(namespace);
  amqp = await createTestAmqp(namespace);
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'ax-broker-fast-lost-'));
});

afterAll(async () => {
  await stopAllProcesses({ graceMs: 5_000 });
  await proxy?.close();
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const LEASE_TTL_MS = 15_000;
const common = (): Record<string, string> => ({
  AX_MYSQL_URL: db.url,
  AX_REDIS_URL: redis.url,
  AX_AMQP_URL: amqp.url,
  AX_NAMESPACE: namespace,
  AX_LOG_LEVEL: 'warn',
  AX_LEASE_TTL_MS: String(LEASE_TTL_MS),
  AX_LOST_WORKER_GRACE_MS: '10000',
  AX_HEARTBEAT_INTERVAL_MS: '1000',
  AX_EXECUTOR_SECRET: 'broker-e2e-executor-secret-0123456789',
});

/** The workers are enrolled, as in production (#44): one admin-api and enrollment for the file. */
let enrolled: WorkerEnrollment | undefined;
const enrollment = async (): Promise<WorkerEnrollment> => (enrolled ??= await startWorkerEnrollment({ env: common(), dir: dataDir }));
/** The worker id of AX_WORKER_ID `id`: `<enrollment id>.<id>`. */
const workerIdOf = (id: string): string => (enrolled === undefined ? id : enrolled.workerId(id));

async function worker(id: string, tag: string, amqpUrl = amqp.url) {
  return startService('worker', {
    name: id,
    env: (await enrollment()).workerEnv({ AX_AMQP_URL: amqpUrl, AX_WORKER_ID: id, AX_WORKER_SLOTS: '2', AX_WORKER_DATA_DIR: dataDir, AX_WORKER_TAGS: tag }),
  });
}

async function addInstance(taskName: string, command: string[], tag: string): Promise<string> {
  const task = await insertTask(
    db.pool,
    parseTaskDefinitionOrThrow({ name: taskName, schedule: { type: 'none' }, exec: { type: 'shell', command }, tags: [tag], timeoutSeconds: 120 }),
  );
  const [r] = await db.pool.query<ResultSetHeader>(
    `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority)
     VALUES (?, ?, NOW(3), CURDATE(), 'manual', 'PENDING', 1, 1, NOW(3), '{}', 5)`,
    [task.id, taskName],
  );
  await redis.redis.publish(redisKeys(namespace).channels.instancesReady, '{}');
  return String(r.insertId);
}

async function executions(instanceId: string): Promise<Array<{ workerId: string; state: string }>> {
  const [rows] = await db.pool.query<RowDataPacket[]>(`SELECT worker_id, state FROM task_execution WHERE instance_id = ? ORDER BY id`, [instanceId]);
  return rows.map((r) => ({ workerId: String(r.worker_id), state: String(r.state) }));
}

async function events(instanceId: string, type: string): Promise<string[]> {
  const [rows] = await db.pool.query<RowDataPacket[]>(`SELECT message FROM event_log WHERE instance_id = ? AND type = ?`, [instanceId, type]);
  return rows.map((r) => String(r.message));
}

describe('R14 fast lost-worker detection with real processes', () => {
  it('R14 a killed worker is lost before its lease could run out, and its job is dispatched once more, elsewhere', async () => {
    await startService('broker', { name: 'broker', env: common() });
    const brokerUpAt = performance.now();
    const victim = await worker('fast-victim', 'fast');
    const instanceId = await addInstance('fast_sleep', ['sleep', '30'], 'fast');
    await waitFor(async () => (await executions(instanceId)).some((e) => e.state === 'RUNNING'), { description: 'attempt 1 RUNNING', timeoutMs: 20_000 });
    const survivor = await worker('fast-survivor', 'fast');
    // A broker suspends every loss decision for one lease after it starts (R14): kill after that.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, LEASE_TTL_MS + 500 - (performance.now() - brokerUpAt))));
    const killedAt = performance.now();
    victim.kill('SIGKILL');
    // The lease path cannot act before the lease (15 s) plus its grace: anything inside the lease is the fast signal.
    const elsewhere = await waitFor(
      async () => {
        const runs = await executions(instanceId);
        return runs.find((e) => e.workerId === workerIdOf('fast-survivor')) ?? null;
      },
      { description: 'the job on the survivor before the lease ran out', timeoutMs: LEASE_TTL_MS - 2_000, intervalMs: 100 },
    );
    const movedMs = Math.round(performance.now() - killedAt);
    console.log(`R14 fast path: the killed worker's job reached the survivor ${movedMs} ms after SIGKILL (lease ${LEASE_TTL_MS} ms)`);
    expect(elsewhere.workerId).toBe(workerIdOf('fast-survivor'));
    const lost = await events(instanceId, 'LOST_WORKER');
    expect(lost).toHaveLength(1);
    expect(lost[0]).toContain('AMQP connection closed');
    await survivor.stop();
  }, 90_000);

  it('#23 a worker killed within milliseconds of starting a job, before its ACK left: the run counts as started (LOST_WORKER), not as never received', async () => {
    const marker = path.join(dataDir, 'early-kill-marker');
    // The job itself kills its worker (its parent) the moment it starts: the ACK still lingers.
    const instanceId = await addInstance('early_kill', ['sh', '-c', `if [ -f ${marker} ]; then echo second; else touch ${marker}; kill -9 $PPID; fi`], 'early');
    const victim = await worker('early-victim', 'early');
    await waitFor(async () => (await executions(instanceId)).length > 0 && existsSync(marker), { description: 'the first run started', timeoutMs: 20_000, intervalMs: 20 });
    await waitFor(async () => victim.exitInfo !== undefined, { description: 'the victim died', timeoutMs: 5_000, intervalMs: 20 });
    const survivor = await worker('early-survivor', 'early');
    await waitFor(async () => {
      const [r] = await db.pool.query<RowDataPacket[]>(`SELECT state FROM task_instance WHERE id = ?`, [instanceId]);
      return r[0]?.state === 'SUCCESS';
    }, { description: 'SUCCESS on the survivor', timeoutMs: 40_000 });
    const lost = await events(instanceId, 'LOST_WORKER');
    expect(lost).toHaveLength(1);
    expect(lost[0]).toContain('counted as started');
    expect(await events(instanceId, 'ACK_TIMEOUT')).toEqual([]);
    expect(await events(instanceId, 'REROUTED')).toEqual([]);
    expect((await executions(instanceId)).map((e) => e.workerId)).toEqual([workerIdOf('early-victim'), workerIdOf('early-survivor')]);
    await survivor.stop();
  }, 90_000);

  it('R14 a worker cut off from RabbitMQ but heartbeating Redis is not lost; its result is applied when the link returns', async () => {
    const target = new URL(amqp.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5672) });
    const cutOff = await worker('fast-cutoff', 'cutoff', throughProxy(amqp.url, proxy));
    const instanceId = await addInstance('cutoff_sleep', ['sleep', '6'], 'cutoff');
    await waitFor(async () => (await executions(instanceId)).some((e) => e.state === 'RUNNING'), { description: 'RUNNING on the cut-off worker', timeoutMs: 20_000 });
    await proxy.cut();
    // Far past the silence (2.5 s): the consumer is gone, but the heartbeats go on.
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    expect(await events(instanceId, 'LOST_WORKER')).toEqual([]);
    await proxy.restore();
    await waitFor(async () => {
      const [r] = await db.pool.query<RowDataPacket[]>(`SELECT state FROM task_instance WHERE id = ?`, [instanceId]);
      return r[0]?.state === 'SUCCESS';
    }, { description: 'SUCCESS after the link returned', timeoutMs: 60_000 });
    expect((await executions(instanceId)).map((e) => e.workerId)).toEqual([workerIdOf('fast-cutoff')]);
    expect(await events(instanceId, 'LOST_WORKER')).toEqual([]);
    await cutOff.stop();
  }, 120_000);
});
