/**
 * Real processes, #22 backlog deferral: a broker started with
 * `AX_BACKLOG_DEFER_BELOW_PRIORITY=5` and a real 4-slot worker flooded with priority-5 jobs.
 * Priority-1 instances added while the pool is backed up wait with one DEFERRED event each, a
 * priority-9 one runs before them, and once the flood has drained every held one runs, once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { redisKeys } from '@ax/kit';
import { insertTask } from '@ax/store';
import { createTestAmqp, createTestDatabase, createTestRedis, startService, stopAllProcesses, uniqueNamespace, waitFor, type TestAmqp, type TestDatabase, type TestRedis } from '@ax/testing';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';

const namespace = uniqueNamespace('axbdefer');
const keys = redisKeys(namespace);
let db: TestDatabase;
let redis: TestRedis;
let amqp: TestAmqp;
let dataDir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(namespace);
  amqp = await createTestAmqp(namespace);
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'ax-broker-defer-'));
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
  await redis.redis.publish(keys.channels.instancesReady, '{}');
  return ids;
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const [r] = await db.pool.query<RowDataPacket[]>(sql, params);
  return Number(r[0]?.n);
}

describe('#22 backlog deferral, with real processes', () => {
  it('priority-1 instances wait (DEFERRED, metrics) while the pool is backed up, priority 9 runs first, and every held one runs exactly once after', async () => {
    const env = { AX_MYSQL_URL: db.url, AX_REDIS_URL: redis.url, AX_AMQP_URL: amqp.url, AX_NAMESPACE: namespace, AX_LOG_LEVEL: 'warn' };
    const broker = await startService('broker', { name: 'broker', env: { ...env, AX_BACKLOG_DEFER_BELOW_PRIORITY: '5' } });
    await startService('worker', { name: 'defer-w', env: { ...env, AX_WORKER_ID: 'defer-w', AX_WORKER_SLOTS: '4', AX_WORKER_DATA_DIR: dataDir } });
    const task = (name: string, command: string[]) =>
      insertTask(db.pool, parseTaskDefinitionOrThrow({ name, schedule: { type: 'none' }, exec: { type: 'shell', command }, block: 'parallel', retry: { max: 0 }, timeoutSeconds: 60 }));
    const flood = await task('defer_flood', ['sleep', '3']);
    const low = await task('defer_low', ['true']);
    const urgent = await task('defer_urgent', ['true']);
    const floodIds = await addInstances(flood.id, 'defer_flood', 5, 8);
    // 8 instances of priority ≥ 5 for 4 slots: the pool's backlog holds (shared in Redis).
    await waitFor(async () => (await redis.redis.hexists(keys.backlogHolds, 'default/*')) === 1, { description: 'the backlog holds', timeoutMs: 10_000 });
    const lowIds = await addInstances(low.id, 'defer_low', 1, 3);
    const [urgentId] = await addInstances(urgent.id, 'defer_urgent', 9, 1);
    await waitFor(async () => (await count(`SELECT COUNT(*) AS n FROM event_log WHERE instance_id IN (?) AND type = 'DEFERRED'`, [lowIds])) === 3, {
      description: '3 DEFERRED events',
      timeoutMs: 10_000,
    });
    // The events commit inside a pass (or a claim) and the gauges are set at the end of a pass:
    // the metrics are waited for, not read once at the instant the third event shows.
    const holdMetric = /ax_backlog_hold\{[^}]*pool="default\/\*"[^}]*\} 1/;
    const deferredMetric = /ax_dispatch_deferred_total\{[^}]*pool="default\/\*"[^}]*\} 3/;
    const metrics = await waitFor(
      async () => {
        const text = await (await fetch(`${broker.baseUrl}/metrics`)).text();
        return holdMetric.test(text) && deferredMetric.test(text) ? text : null;
      },
      { description: 'ax_backlog_hold 1 and ax_dispatch_deferred_total 3', timeoutMs: 5_000 },
    );
    expect(metrics).toMatch(holdMetric);
    expect(metrics).toMatch(deferredMetric);

    const final = `SELECT COUNT(*) AS n FROM task_instance WHERE id IN (?) AND state = 'SUCCESS'`;
    await waitFor(async () => (await count(final, [[...floodIds, ...lowIds, urgentId]])) === 12, { description: 'all 12 SUCCESS', timeoutMs: 45_000, intervalMs: 100 });
    // The priority-9 one was never held and started before any held one was dispatched.
    expect(await count(`SELECT COUNT(*) AS n FROM event_log WHERE instance_id IN (?) AND type = 'DEFERRED'`, [[...floodIds, urgentId]])).toBe(0);
    const [firstLow] = await db.pool.query<RowDataPacket[]>(`SELECT MIN(at) AS at FROM event_log WHERE instance_id IN (?) AND type = 'DISPATCHED'`, [lowIds]);
    const lowDispatchedAt = (firstLow[0] as { at: Date }).at;
    expect(await count(`SELECT COUNT(*) AS n FROM event_log WHERE instance_id = ? AND type = 'DISPATCHED' AND at < ?`, [urgentId, lowDispatchedAt])).toBe(1);
    // Held until the flood fitted into half of the pool: at most 2 of it had not ended then.
    expect(await count(`SELECT COUNT(*) AS n FROM task_instance WHERE id IN (?) AND ended_at > ?`, [floodIds, lowDispatchedAt])).toBeLessThanOrEqual(2);
    // Exactly once each: one execution, one DISPATCHED, one DEFERRED.
    for (const id of lowIds) {
      expect(await count(`SELECT COUNT(*) AS n FROM task_execution WHERE instance_id = ?`, [id])).toBe(1);
      expect(await count(`SELECT COUNT(*) AS n FROM event_log WHERE instance_id = ? AND type = 'DISPATCHED'`, [id])).toBe(1);
      expect(await count(`SELECT COUNT(*) AS n FROM event_log WHERE instance_id = ? AND type = 'DEFERRED'`, [id])).toBe(1);
    }
    await waitFor(async () => (await redis.redis.hexists(keys.backlogHolds, 'default/*')) === 0, { description: 'the hold ended', timeoutMs: 10_000 });
  }, 90_000);
});
