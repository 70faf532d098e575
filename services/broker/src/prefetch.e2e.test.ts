/**
 * Real processes, R9 prefetch: a worker is reserved up to `slots + prefetch`; what it holds
 * beyond its slots is ACKed, listed in its lease (and apart, as `held`) and started there when a
 * slot frees; held work counts against `block` and a team's `maxRunning` like running work; a
 * broker recalls held work that another worker could start now, the worker answers "released"
 * (a RECALLED refusal) and nothing is lost or run twice; a worker killed with SIGKILL while it
 * holds dispatches has them run again elsewhere, each exactly once.
 *
 * Every job appends its instance id to a file when it starts: the file counts real starts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow, type TaskDefinitionInput } from '@ax/core';
import { redisKeys } from '@ax/kit';
import { readRegistration, type WorkerRegistration } from '@ax/redis';
import { insertTask, insertTeam } from '@ax/store';
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

let db: TestDatabase;
let redis: TestRedis;
let amqp: TestAmqp;
let dataDir: string;
const namespace = uniqueNamespace('axbpf');
const keys = redisKeys(namespace);

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(namespace);
  amqp = await createTestAmqp(namespace);
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'ax-broker-prefetch-'));
});

afterAll(async () => {
  await stopAllProcesses({ graceMs: 5_000 });
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const timings = { AX_LEASE_TTL_MS: '3000', AX_LOST_WORKER_GRACE_MS: '1000', AX_HEARTBEAT_INTERVAL_MS: '500' };
const env = (): Record<string, string> => ({ AX_MYSQL_URL: db.url, AX_REDIS_URL: redis.url, AX_AMQP_URL: amqp.url, AX_NAMESPACE: namespace, AX_LOG_LEVEL: 'warn', ...timings });

function worker(id: string, tag: string, slots: number, prefetch: number) {
  return startService('worker', {
    name: id,
    env: { ...env(), AX_WORKER_ID: id, AX_WORKER_SLOTS: String(slots), AX_WORKER_JOB_PREFETCH: String(prefetch), AX_WORKER_DATA_DIR: dataDir, AX_WORKER_TAGS: tag },
  });
}

/** A task whose jobs append their instance id to `file` when they start, then sleep. */
async function task(name: string, tag: string, file: string, seconds: number, extra: Partial<TaskDefinitionInput> = {}) {
  writeFileSync(file, '');
  return insertTask(
    db.pool,
    parseTaskDefinitionOrThrow({
      name,
      schedule: { type: 'none' },
      exec: { type: 'shell', command: ['sh', '-c', `echo "$AX_INSTANCE_ID" >> ${file}; sleep ${seconds}`] },
      tags: [tag],
      block: 'parallel',
      retry: { max: 0 },
      timeoutSeconds: 120,
      ...extra,
    }),
  );
}

/** Due instances; with `batchId`, reruns of that rerun batch (R20: its concurrency is checked at claim). */
async function addInstances(taskId: string, taskName: string, count: number, batchId: number | null = null): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const [r] = await db.pool.query<ResultSetHeader>(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority, rerun_batch_id)
       VALUES (?, ?, NOW(3) - INTERVAL ? SECOND, CURDATE(), ?, 'PENDING', 1, 1, NOW(3), '{}', 5, ?)`,
      [taskId, taskName, i + 1, batchId === null ? 'manual' : 'rerun', batchId],
    );
    ids.push(String(r.insertId));
  }
  await redis.redis.publish(keys.channels.instancesReady, '{}');
  return ids;
}

async function states(taskName: string): Promise<Record<string, number>> {
  const [r] = await db.pool.query<RowDataPacket[]>(`SELECT state, COUNT(*) AS n FROM task_instance WHERE task_name = ? GROUP BY state`, [taskName]);
  return Object.fromEntries(r.map((row) => [String(row.state), Number(row.n)]));
}

async function active(taskName: string): Promise<number> {
  const s = await states(taskName);
  return (s.DISPATCHED ?? 0) + (s.RUNNING ?? 0);
}

/** Starts per instance id, read from a task's file. */
function starts(file: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of readFileSync(file, 'utf8').split('\n')) if (line !== '') out.set(line, (out.get(line) ?? 0) + 1);
  return out;
}

async function succeededOnce(taskName: string): Promise<boolean> {
  const [r] = await db.pool.query<RowDataPacket[]>(
    `SELECT e.instance_id, COUNT(*) AS n FROM event_log e JOIN task_instance i ON i.id = e.instance_id WHERE i.task_name = ? AND e.type = 'SUCCEEDED' GROUP BY e.instance_id`,
    [taskName],
  );
  return r.every((row) => Number(row.n) === 1);
}

const registration = (id: string): Promise<WorkerRegistration | null> => readRegistration(redis.redis, keys, id);

describe('R9 prefetch with real processes', () => {
  beforeAll(async () => {
    // Recalls are tested on their own below: here nothing is recalled (a long bound).
    await insertTeam(db.pool, { name: 'pfteam', description: '', maxRunning: 3 });
    await startService('broker', { name: 'broker', env: { ...env(), AX_RECALL_HELD_AFTER_MS: '2000' } });
  });

  it('R9 a worker is reserved up to slots + prefetch, holds the rest ACKed and listed in its lease, and starts it itself; each runs once', async () => {
    const file = path.join(dataDir, 'hold.txt');
    const t = await task('pf_hold', 'pfhold', file, 2);
    const w = await worker('pf-hold', 'pfhold', 2, 3);
    const ids = await addInstances(t.id, 'pf_hold', 9);
    let most = 0;
    let seenHeld: WorkerRegistration | null = null;
    await waitFor(async () => {
      most = Math.max(most, await active('pf_hold'));
      const reg = await registration('pf-hold');
      if (reg?.held !== undefined && reg.held.length === 3) seenHeld ??= reg;
      return (await states('pf_hold')).SUCCESS === 9;
    }, { description: '9 SUCCESS', timeoutMs: 60_000, intervalMs: 100 });
    console.log(`R9 prefetch e2e: at most ${most} DISPATCHED/RUNNING on 2 slots + 3 prefetch`);
    expect(most).toBe(5);
    expect(seenHeld).not.toBeNull();
    const held = seenHeld as unknown as WorkerRegistration;
    expect(held.prefetch).toBe(3);
    expect(held.slots).toBe(2);
    // Held dispatches are in the lease (R14) as well as listed apart.
    for (const h of held.held ?? []) expect(held.runningExecutionIds).toContain(h.executionId);
    const started = starts(file);
    expect([...started.keys()].sort()).toEqual([...ids].sort());
    expect([...started.values()].every((n) => n === 1)).toBe(true);
    expect(await succeededOnce('pf_hold')).toBe(true);
    await w.stop();
  }, 90_000);

  it('R9 R4 held dispatches count against block serial, a team maxRunning and a rerun batch concurrency exactly like running ones', async () => {
    const serialFile = path.join(dataDir, 'serial.txt');
    const teamFile = path.join(dataDir, 'team.txt');
    const batchFile = path.join(dataDir, 'batch.txt');
    const serial = await task('pf_serial', 'pflimit', serialFile, 1, { block: 'serial' });
    const team = await task('pf_team', 'pflimit', teamFile, 1, { team: 'pfteam' });
    const w = await worker('pf-limit', 'pflimit', 2, 6);
    await addInstances(serial.id, 'pf_serial', 3);
    await addInstances(team.id, 'pf_team', 7);
    const rerun = await task('pf_batch', 'pflimit', batchFile, 1);
    const [batch] = await db.pool.query<ResultSetHeader>(`INSERT INTO rerun_batch (mode, reason, actor, concurrency, request) VALUES ('backfill', 'test', 'tester', 2, '{}')`);
    await addInstances(rerun.id, 'pf_batch', 5, batch.insertId);
    let mostSerial = 0;
    let mostTeam = 0;
    let mostBatch = 0;
    await waitFor(async () => {
      mostSerial = Math.max(mostSerial, await active('pf_serial'));
      mostTeam = Math.max(mostTeam, await active('pf_team'));
      mostBatch = Math.max(mostBatch, await active('pf_batch'));
      return (await states('pf_serial')).SUCCESS === 3 && (await states('pf_team')).SUCCESS === 7 && (await states('pf_batch')).SUCCESS === 5;
    }, { description: 'all SUCCESS', timeoutMs: 90_000, intervalMs: 100 });
    console.log(`R9 prefetch limits: serial at most ${mostSerial}, team (maxRunning 3) at most ${mostTeam}, batch (concurrency 2) at most ${mostBatch}, on 2 slots + 6 prefetch`);
    expect(mostSerial).toBe(1);
    expect(mostTeam).toBeLessThanOrEqual(3);
    expect(mostBatch).toBeLessThanOrEqual(2);
    expect([...starts(batchFile).values()].every((n) => n === 1)).toBe(true);
    expect([...starts(teamFile).values()].every((n) => n === 1)).toBe(true);
    await w.stop();
  }, 120_000);

  it('R9 held work a broker recalls is released (RECALLED) and runs elsewhere: 0 lost, 0 run twice', async () => {
    const file = path.join(dataDir, 'recall.txt');
    const t = await task('pf_recall', 'pfrecall', file, 5);
    // One slot and 3 held behind a 5 s job: the held ones would wait 5, 10 and 15 s.
    const holder = await worker('pf-recall-a', 'pfrecall', 1, 3);
    const ids = await addInstances(t.id, 'pf_recall', 4);
    await waitFor(async () => ((await registration('pf-recall-a'))?.held?.length ?? 0) === 3, { description: 'pf-recall-a holds 3', timeoutMs: 20_000, intervalMs: 100 });
    const idle = await worker('pf-recall-b', 'pfrecall', 4, 0);
    await waitFor(async () => (await states('pf_recall')).SUCCESS === 4, { description: '4 SUCCESS', timeoutMs: 60_000, intervalMs: 200 });
    const [recalled] = await db.pool.query<RowDataPacket[]>(
      `SELECT COUNT(*) AS n FROM event_log e JOIN task_instance i ON i.id = e.instance_id WHERE i.task_name = 'pf_recall' AND e.type = 'REFUSED' AND e.message LIKE 'refused RECALLED%'`,
    );
    const [ranOn] = await db.pool.query<RowDataPacket[]>(
      `SELECT x.worker_id, COUNT(*) AS n FROM task_execution x JOIN task_instance i ON i.id = x.instance_id WHERE i.task_name = 'pf_recall' AND x.state = 'SUCCESS' GROUP BY x.worker_id`,
    );
    console.log(`R9 recall e2e: ${Number(recalled[0]?.n)} recalled; SUCCESS by worker ${JSON.stringify(ranOn)}`);
    expect(Number(recalled[0]?.n)).toBeGreaterThanOrEqual(1);
    expect(ranOn.some((r) => r.worker_id === 'pf-recall-b')).toBe(true);
    const started = starts(file);
    expect([...started.keys()].sort()).toEqual([...ids].sort()); // 0 lost
    expect([...started.values()].every((n) => n === 1)).toBe(true); // 0 run twice
    expect(await succeededOnce('pf_recall')).toBe(true);
    await Promise.all([holder.stop(), idle.stop()]);
  }, 90_000);

  it('R9 R14 a worker killed with SIGKILL while holding dispatches: they run again elsewhere, each exactly once', async () => {
    const file = path.join(dataDir, 'kill.txt');
    const t = await task('pf_kill', 'pfkill', file, 4);
    const victim = await worker('pf-kill-a', 'pfkill', 1, 3);
    await addInstances(t.id, 'pf_kill', 4);
    let heldAtKill: string[] = [];
    await waitFor(async () => {
      const reg = await registration('pf-kill-a');
      if ((reg?.held?.length ?? 0) !== 3) return false;
      heldAtKill = (reg?.held ?? []).map((h) => h.executionId);
      return true;
    }, { description: 'pf-kill-a holds 3', timeoutMs: 20_000, intervalMs: 100 });
    victim.kill('SIGKILL');
    const survivor = await worker('pf-kill-b', 'pfkill', 4, 0);
    await waitFor(async () => (await states('pf_kill')).SUCCESS === 4, { description: '4 SUCCESS after the kill', timeoutMs: 60_000, intervalMs: 200 });
    const [heldRows] = await db.pool.query<RowDataPacket[]>(`SELECT DISTINCT instance_id FROM task_execution WHERE execution_id IN (?)`, [heldAtKill]);
    const heldInstances = heldRows.map((r) => String(r.instance_id));
    expect(heldInstances).toHaveLength(3);
    const started = starts(file);
    console.log(`R9 kill e2e: starts per instance ${JSON.stringify([...started])}; held at the kill ${JSON.stringify(heldInstances)}`);
    // A held dispatch never started on the killed worker: it started once, on the survivor.
    for (const id of heldInstances) expect(started.get(id)).toBe(1);
    expect(await succeededOnce('pf_kill')).toBe(true);
    await survivor.stop();
  }, 120_000);
});
