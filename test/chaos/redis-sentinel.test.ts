/**
 * Drill: the Redis primary killed with SIGKILL under load, Sentinel failing over (#23).
 * Real scheduler, broker and two workers reach Redis only through the sentinels of a private
 * group (`AX_REDIS_SENTINELS`); MariaDB and RabbitMQ are the shared ones (a private database and
 * namespace). Ten tasks fire every second for 30 s; the primary dies 10 s in. Checked: every
 * slot of the window has exactly one instance, SUCCESS, run by exactly one execution (0 lost,
 * 0 doubled); printed: how long the promotion took and how long until slots due after the kill
 * were done again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { insertTask } from '@ax/store';
import {
  canRunRedisServer,
  createTestAmqp,
  createTestDatabase,
  missingRequirement,
  startRedisSentinelGroup,
  startService,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
  type RedisSentinelGroup,
  type TestAmqp,
  type TestDatabase,
} from '@ax/testing';
import type { RowDataPacket } from 'mysql2';

const TASKS = 10;
const WINDOW_MS = 30_000;
const KILL_AFTER_MS = 10_000;

describe.skipIf(missingRequirement(it, { name: 'redis-server', present: canRunRedisServer(), install: 'apt-get install redis-server' }))('drill: Redis primary killed, Sentinel fails over', () => {
  const namespace = uniqueNamespace('axsentinel');
  let db: TestDatabase;
  let amqp: TestAmqp;
  let group: RedisSentinelGroup;
  let dataDir: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    amqp = await createTestAmqp(namespace);
    group = await startRedisSentinelGroup();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'ax-sentinel-drill-'));
  }, 120_000);

  afterAll(async () => {
    await stopAllProcesses({ graceMs: 5_000 });
    await group?.cleanup();
    await amqp?.cleanup();
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('0 lost, 0 doubled; the stack goes on against the promoted replica', async () => {
    const env = {
      AX_MYSQL_URL: db.url,
      // Only the password, database and TLS come from the URL with sentinels: the host is never used.
      AX_REDIS_URL: 'redis://127.0.0.1:1',
      AX_REDIS_SENTINELS: group.sentinels.join(','),
      AX_REDIS_SENTINEL_NAME: group.name,
      AX_AMQP_URL: amqp.url,
      AX_NAMESPACE: namespace,
      AX_LOG_LEVEL: 'warn',
    };
    for (let i = 0; i < TASKS; i++) {
      await insertTask(
        db.pool,
        parseTaskDefinitionOrThrow({
          name: `sentinel_${i}`,
          schedule: { type: 'cron', expr: '* * * * * *', timezone: 'UTC' },
          exec: { type: 'shell', command: ['true'] },
          misfire: { policy: 'catch_up', max: 100 },
          block: 'parallel',
          retry: { max: 0 },
          timeoutSeconds: 30,
        }),
      );
    }
    await startService('broker', { name: 'broker', env });
    for (const id of ['sentinel-w1', 'sentinel-w2']) {
      await startService('worker', { name: id, env: { ...env, AX_WORKER_ID: id, AX_WORKER_SLOTS: '16', AX_WORKER_DATA_DIR: dataDir } });
    }
    await startService('scheduler', { name: 'scheduler', env });
    const fromMs = Math.ceil((Date.now() + 3_000) / 1000) * 1000;
    const toMs = fromMs + WINDOW_MS;
    await new Promise((resolve) => setTimeout(resolve, fromMs + KILL_AFTER_MS - Date.now()));
    const killedAt = Date.now();
    await group.primary.kill('SIGKILL');
    const promotedMs = await group.waitForPrimary(group.replica.port);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, toMs - Date.now())));

    const slotsInWindow = async (): Promise<RowDataPacket[]> =>
      (await db.pool.query<RowDataPacket[]>(
        `SELECT i.task_name, i.expected_time, i.state,
                (SELECT COUNT(*) FROM task_execution e WHERE e.instance_id = i.id) AS runs
           FROM task_instance i WHERE i.expected_time >= ? AND i.expected_time < ?`,
        [new Date(fromMs), new Date(toMs)],
      ))[0];
    const expected = TASKS * (WINDOW_MS / 1000);
    const done = await waitFor(async () => {
      const rows = await slotsInWindow();
      return rows.filter((r) => r.state === 'SUCCESS').length >= expected ? rows : null;
    }, { description: `all ${expected} slots of the window SUCCESS`, timeoutMs: 90_000, intervalMs: 500 });
    const [afterKill] = await db.pool.query<RowDataPacket[]>(
      `SELECT TIMESTAMPDIFF(MICROSECOND, ?, MAX(ended_at)) AS us FROM task_instance WHERE expected_time >= ? AND expected_time < ?`,
      [new Date(killedAt), new Date(killedAt), new Date(killedAt + 1_000)],
    );
    console.log(
      `sentinel drill: ${done.length} slots, ${done.filter((r) => Number(r.runs) !== 1).length} with other than one execution; ` +
        `replica promoted ${promotedMs} ms after SIGKILL; the slot due at the kill done ${Math.round(Number(afterKill[0]?.us) / 1000)} ms after it`,
    );
    const doubled = done.filter((r) => Number(r.runs) !== 1);
    if (doubled.length > 0) {
      // What each execution of a doubled slot went through: a second execution after an ACK
      // timeout whose first never started is a re-route (R8); two that started are a double run.
      const [executions] = await db.pool.query<RowDataPacket[]>(
        `SELECT i.task_name, i.expected_time, e.execution_id, e.worker_id, e.state, e.reason, e.dispatched_at, e.acked_at, e.started_at, e.ended_at
           FROM task_instance i JOIN task_execution e ON e.instance_id = i.id
          WHERE i.expected_time >= ? AND i.expected_time < ? AND (SELECT COUNT(*) FROM task_execution x WHERE x.instance_id = i.id) <> 1
          ORDER BY i.task_name, i.expected_time, e.id`,
        [new Date(fromMs), new Date(toMs)],
      );
      console.log(`sentinel drill: executions of the doubled slots (killed at ${new Date(killedAt).toISOString()}):\n${executions.map((e) => JSON.stringify(e)).join('\n')}`);
    }
    expect(done).toHaveLength(expected); // one instance per slot: none lost, none doubled (R1)
    expect(done.every((r) => r.state === 'SUCCESS')).toBe(true);
    expect(doubled).toEqual([]); // each run once
    expect(await group.primaryPort()).toBe(group.replica.port);
  }, 240_000);
});
