/**
 * Real processes: two brokers and two workers (`services/broker` and `services/worker` dist, built by `pnpm
 * build`) run N instances of a `shell true` task; every instance ends SUCCESS exactly once,
 * with exactly one successful execution. N defaults to 500 (AX_E2E_INSTANCES=5000 for the
 * full Done-when figure).
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
  type ManagedProcess,
  type TestAmqp,
  type TestDatabase,
  type TestRedis,
} from '@ax/testing';
import type { RowDataPacket } from 'mysql2';

const N = Number(process.env.AX_E2E_INSTANCES ?? 500);
const namespace = uniqueNamespace('axbe2e');
let db: TestDatabase;
let redis: TestRedis;
let amqp: TestAmqp;
let dataDir: string;
const procs: ManagedProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(namespace);
  amqp = await createTestAmqp(namespace);
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'ax-broker-e2e-'));
});

afterAll(async () => {
  await stopAllProcesses({ graceMs: 10_000 });
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('broker with real workers', () => {
  it(`2 brokers × 2 workers run ${N} instances exactly once`, async () => {
    const common = {
      AX_MYSQL_URL: db.url,
      AX_REDIS_URL: redis.url,
      AX_AMQP_URL: amqp.url,
      AX_NAMESPACE: namespace,
      AX_LOG_LEVEL: 'warn',
      AX_EXECUTOR_SECRET: 'broker-e2e-executor-secret-0123456789',
    };
    const brokers = [];
    for (const name of ['broker-1', 'broker-2']) brokers.push(await startService('broker', { name, env: common }));
    procs.push(...brokers);
    // The workers are enrolled, as in production (#44): their own RabbitMQ and Redis logins.
    const enrolled = await startWorkerEnrollment({ env: common, dir: dataDir });
    procs.push(enrolled.adminApi);
    for (const id of ['e2e-w1', 'e2e-w2']) {
      procs.push(
        await startService('worker', {
          name: id,
          env: enrolled.workerEnv({ AX_WORKER_ID: id, AX_WORKER_SLOTS: '16', AX_WORKER_DATA_DIR: dataDir, AX_WORKER_TAGS: 'e2e' }),
        }),
      );
    }
    const task = await insertTask(
      db.pool,
      parseTaskDefinitionOrThrow({ name: 'e2e_true', schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] }, tags: ['e2e'], block: 'parallel', timeoutSeconds: 60 }),
    );
    const started = performance.now();
    const base = Date.UTC(2026, 0, 1);
    for (let i = 0; i < N; i += 500) {
      const rows = Array.from({ length: Math.min(500, N - i) }, (_, k) => {
        const expected = new Date(base + (i + k) * 1000);
        return [task.id, 'e2e_true', expected, '2026-01-01', 'manual', 'PENDING', 1, 1, '{}', 5];
      });
      await db.pool.query(
        `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority)
         VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, NOW(3), ?, ?)').join(', ')}`,
        rows.flat(),
      );
    }
    await redis.redis.publish(redisKeys(namespace).channels.instancesReady, '{}');
    const done = await waitFor(
      async () => {
        const [r] = await db.pool.query<RowDataPacket[]>(`SELECT state, COUNT(*) AS n FROM task_instance GROUP BY state`);
        const counts = Object.fromEntries(r.map((row) => [String(row.state), Number(row.n)]));
        return (counts.SUCCESS ?? 0) === N ? counts : null;
      },
      { description: `${N} instances SUCCESS`, timeoutMs: Math.max(150_000, N * 60), intervalMs: 500 },
    );
    const elapsedMs = Math.round(performance.now() - started);
    const [execs] = await db.pool.query<RowDataPacket[]>(
      `SELECT instance_id, SUM(state = 'SUCCESS') AS ok, COUNT(*) AS n FROM task_execution GROUP BY instance_id`,
    );
    const [latency] = await db.pool.query<RowDataPacket[]>(
      `SELECT AVG(TIMESTAMPDIFF(MICROSECOND, dispatched_at, acked_at)) / 1000 AS avg_ms, MAX(TIMESTAMPDIFF(MICROSECOND, dispatched_at, acked_at)) / 1000 AS max_ms FROM task_execution`,
    );
    const [phases] = await db.pool.query<RowDataPacket[]>(
      `SELECT AVG(TIMESTAMPDIFF(MICROSECOND, e.acked_at, e.started_at)) / 1000 AS ack_start,
              AVG(TIMESTAMPDIFF(MICROSECOND, e.started_at, e.ended_at)) / 1000 AS run,
              AVG(TIMESTAMPDIFF(MICROSECOND, e.ended_at, i.ended_at)) / 1000 AS report,
              AVG(TIMESTAMPDIFF(MICROSECOND, i.created_at, e.dispatched_at)) / 1000 AS wait
         FROM task_execution e JOIN task_instance i ON i.id = e.instance_id`,
    );
    console.log(`e2e phases (avg ms): waited for dispatch ${Number(phases[0]?.wait).toFixed(0)}, ACK→start ${Number(phases[0]?.ack_start).toFixed(0)}, run ${Number(phases[0]?.run).toFixed(0)}, end→applied ${Number(phases[0]?.report).toFixed(0)}`);
    const [byWorker] = await db.pool.query<RowDataPacket[]>(`SELECT worker_id, COUNT(*) AS n FROM task_execution GROUP BY worker_id`);
    console.log(
      `e2e: ${N} instances SUCCESS in ${elapsedMs} ms (${Math.round((N / elapsedMs) * 1000)}/s); executions ${execs.reduce((s, r) => s + Number(r.n), 0)}; ` +
        `dispatch→ACK avg ${Number(latency[0]?.avg_ms).toFixed(1)} ms max ${Number(latency[0]?.max_ms).toFixed(1)} ms; per worker ${JSON.stringify(byWorker.map((r): [string, number] => [String(r.worker_id), Number(r.n)]))}`,
    );
    expect(done.SUCCESS).toBe(N);
    expect(execs).toHaveLength(N);
    expect(execs.every((r) => Number(r.ok) === 1)).toBe(true);
    const [dupes] = await db.pool.query<RowDataPacket[]>(`SELECT instance_id, COUNT(*) AS n FROM event_log WHERE type = 'SUCCEEDED' GROUP BY instance_id HAVING n > 1`);
    expect(dupes).toHaveLength(0);
    // The process side: readiness, metrics, and a clean SIGTERM.
    const broker = brokers[0]!;
    expect((await fetch(`${broker.baseUrl}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`${broker.baseUrl}/metrics`)).text();
    expect(metrics).toContain('ax_dispatches_total');
    expect(metrics).toContain('ax_dispatch_ack_latency_seconds_bucket');
    expect((await broker.stop({ graceMs: 20_000 })).code).toBe(0);
  }, Math.max(240_000, N * 80));
});
