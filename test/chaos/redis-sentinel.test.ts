/**
 * Drill: the Redis primary killed with SIGKILL under load, Sentinel failing over (#23).
 * Real scheduler, broker, admin-api and two ENROLLED workers (issue #44: their Redis login is
 * their enrollment's ACL user, which Redis keeps per server and does not replicate, so admin-api's
 * reconciler must make it on the promoted replica) reach Redis only through the sentinels of a
 * private group (`AX_REDIS_SENTINELS`); MariaDB and RabbitMQ are the shared ones (a private
 * database and namespace). Ten tasks fire every second for 30 s; the primary dies 10 s in. Checked: every
 * slot of the window has exactly one instance, SUCCESS, and its job ran exactly once: each run
 * appends its instance and execution ids to a file, so 0 lost and 0 doubled are counted from what
 * ran, not from execution rows. A re-route (R8) is a second execution row and one run; the drill
 * prints those. Until 2026-12-06 a dispatch committed at the instant of the kill was one: the
 * slot bookkeeping after the commit threw before the publish (broker best-effort.ts). Printed
 * too: how long the promotion took and how long until slots due after the kill were done again.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow, redisUserOf } from '@ax/core';
import { closeRedis, createRedis, silentLogger } from '@ax/kit';
import { insertTask } from '@ax/store';
import {
  canRunRedisServer,
  createTestAmqp,
  createTestDatabase,
  missingRequirement,
  startRedisSentinelGroup,
  startService,
  startWorkerEnrollment,
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
  const runsFile = (): string => path.join(dataDir, 'runs.log');

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
      AX_EXECUTOR_SECRET: 'sentinel-drill-executor-secret-0123456789',
    };
    for (let i = 0; i < TASKS; i++) {
      await insertTask(
        db.pool,
        parseTaskDefinitionOrThrow({
          name: `sentinel_${i}`,
          schedule: { type: 'cron', expr: '* * * * * *', timezone: 'UTC' },
          // Each run leaves a line: what ran is counted from here (0 lost, 0 doubled).
          exec: { type: 'shell', command: ['sh', '-c', `echo "$AX_INSTANCE_ID $AX_EXECUTION_ID" >> ${runsFile()}`] },
          misfire: { policy: 'catch_up', max: 100 },
          block: 'parallel',
          retry: { max: 0 },
          timeoutSeconds: 30,
        }),
      );
    }
    await startService('broker', { name: 'broker', env });
    const enrolled = await startWorkerEnrollment({ env, dir: dataDir });
    for (const id of ['sentinel-w1', 'sentinel-w2']) {
      await startService('worker', { name: id, env: enrolled.workerEnv({ AX_WORKER_ID: id, AX_WORKER_SLOTS: '16', AX_WORKER_DATA_DIR: dataDir }) });
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
        `SELECT i.id, i.task_name, i.expected_time, i.state,
                (SELECT COUNT(*) FROM task_execution e WHERE e.instance_id = i.id) AS executions
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
    const runs = new Map<string, number>();
    for (const line of existsSync(runsFile()) ? readFileSync(runsFile(), 'utf8').split('\n') : []) {
      const instanceId = line.split(' ')[0];
      if (instanceId) runs.set(instanceId, (runs.get(instanceId) ?? 0) + 1);
    }
    const rerouted = done.filter((r) => Number(r.executions) > 1);
    if (rerouted.length > 0) {
      // What each execution of such a slot went through: a first one never ACKed nor started,
      // ended ACK_TIMEOUT, is a dispatch re-routed (R8); the runs file says what ran.
      const [executions] = await db.pool.query<RowDataPacket[]>(
        `SELECT e.instance_id, e.execution_id, e.worker_id, e.state, e.dispatched_at, e.acked_at, e.started_at, e.ended_at
           FROM task_execution e WHERE e.instance_id IN (?) ORDER BY e.instance_id, e.id`,
        [rerouted.map((r) => String(r.id))],
      );
      console.log(`sentinel drill: executions of the slots with more than one (killed at ${new Date(killedAt).toISOString()}):\n${executions.map((e) => JSON.stringify(e)).join('\n')}`);
    }
    const ranOtherThanOnce = done.filter((r) => runs.get(String(r.id)) !== 1).map((r) => ({ task: String(r.task_name), slot: r.expected_time as Date, runs: runs.get(String(r.id)) ?? 0 }));
    console.log(
      `sentinel drill: ${done.length} slots, ${ranOtherThanOnce.length} run other than once, ${rerouted.length} re-routed (more than one execution row); ` +
        `replica promoted ${promotedMs} ms after SIGKILL; the slot due at the kill done ${Math.round(Number(afterKill[0]?.us) / 1000)} ms after it`,
    );
    expect(done).toHaveLength(expected); // one instance per slot: none lost, none doubled (R1)
    expect(done.every((r) => r.state === 'SUCCESS')).toBe(true);
    expect(ranOtherThanOnce).toEqual([]); // each job ran exactly once
    expect(await group.primaryPort()).toBe(group.replica.port);
    // The enrollment's ACL user is on the promoted replica (it was made on the old primary only).
    const promoted = createRedis(group.replica.url, { logger: silentLogger(), name: 'sentinel-drill' });
    try {
      expect(await promoted.call('ACL', 'GETUSER', redisUserOf(namespace, enrolled.enrollment.id))).not.toBeNull();
    } finally {
      await closeRedis(promoted);
    }
  }, 240_000);
});
