/**
 * #18 placement: real worker processes (`services/worker/dist/main.js`: run `pnpm build` first)
 * started with and without `AX_WORKER_TEAMS`, a broker engine routing over their registry
 * entries. A worker serving some teams only never receives another team's work.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { readRegistration } from '@ax/redis';
import { insertTeam } from '@ax/store';
import { assertNoLeftoverProcesses, dumpAllProcessOutput, startService, stopAllProcesses, waitFor } from '@ax/testing';
import type { RowDataPacket } from 'mysql2';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;
let dataDir: string;

async function startWorker(workerId: string, env: Record<string, string>): Promise<void> {
  await startService('worker', {
    name: workerId,
    env: {
      AX_REDIS_URL: h.redis.url,
      AX_AMQP_URL: h.amqp.url,
      AX_NAMESPACE: h.namespace,
      AX_WORKER_ID: workerId,
      AX_WORKER_SLOTS: '8',
      AX_WORKER_DATA_DIR: dataDir,
      AX_PLUGIN_DIR: path.join(dataDir, 'plugins'),
      AX_HEARTBEAT_INTERVAL_MS: '500',
      AX_LOG_LEVEL: 'warn',
      // Routing by team, not the jobs' uids (R25, services/worker/src/executors/job-sandbox.ts).
      AX_JOB_ISOLATION: 'off',
      ...env,
    },
  });
}

beforeAll(async () => {
  // Real workers refuse a dispatch that reaches them less than 1 s before its ACK deadline and
  // keep their lease with the worker's default TTL: the broker's timings are the defaults' order.
  h = await startBrokerHarness({ ackTimeoutMs: 10_000, leaseTtlMs: 15_000 });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'ax-worker-teams-'));
  await insertTeam(h.db.pool, { name: 'a', description: '', maxRunning: null });
  await insertTeam(h.db.pool, { name: 'b', description: '', maxRunning: null });
  await startWorker('w-every-team', { AX_WORKER_TAGS: 'place' });
  await startWorker('w-team-b', { AX_WORKER_TAGS: 'place,gpu', AX_WORKER_TEAMS: 'b' });
  await waitFor(async () => (await readRegistration(h.redis.redis, h.keys, 'w-every-team')) !== null && (await readRegistration(h.redis.redis, h.keys, 'w-team-b')) !== null, {
    description: 'both workers registered',
    timeoutMs: 20_000,
  });
}, 90_000);

afterAll(async () => {
  await stopAllProcesses();
  assertNoLeftoverProcesses();
  await h?.close();
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
});

async function executionsOf(ids: readonly string[]): Promise<Array<{ instanceId: string; workerId: string }>> {
  const [rows] = await h.db.pool.query<RowDataPacket[]>(`SELECT instance_id, worker_id FROM task_execution WHERE instance_id IN (?)`, [ids]);
  return rows.map((r) => ({ instanceId: String(r.instance_id), workerId: String(r.worker_id) }));
}

describe('AX_WORKER_TEAMS', () => {
  it('#18 placement: a worker advertises the teams it serves in its registry entry', async () => {
    expect((await readRegistration(h.redis.redis, h.keys, 'w-team-b'))?.teams).toEqual(['b']);
    expect((await readRegistration(h.redis.redis, h.keys, 'w-every-team'))?.teams).toEqual([]);
  });

  it("#18 placement: a worker with AX_WORKER_TEAMS=b never receives team a's work", async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const taskA = await h.task('place_a', { team: 'a', tags: ['place'], block: 'parallel' });
    const taskB = await h.task('place_b', { team: 'b', tags: ['place'], block: 'parallel' });
    const idsA: string[] = [];
    const idsB: string[] = [];
    for (let i = 0; i < 12; i++) idsA.push(await h.instance(taskA));
    for (let i = 0; i < 12; i++) idsB.push(await h.instance(taskB));
    for (const id of [...idsA, ...idsB]) await h.waitState(id, 'SUCCESS', 30_000);
    const onA = await executionsOf(idsA);
    expect(onA).toHaveLength(12);
    expect(onA.filter((e) => e.workerId !== 'w-every-team')).toEqual([]);
    // Team b's work may go to either worker: both serve team b.
    const onB = await executionsOf(idsB);
    expect(onB).toHaveLength(12);
    expect(onB.every((e) => e.workerId === 'w-every-team' || e.workerId === 'w-team-b')).toBe(true);
  }, 60_000);

  it('#18 placement: an instance whose team no matching worker serves waits with one NO_WORKER event, never failing', async () => {
    // Only w-team-b carries gpu, and it does not serve team a.
    const task = await h.task('place_a_gpu', { team: 'a', tags: ['gpu'], block: 'parallel' });
    const id = await h.instance(task);
    await waitFor(async () => (await h.events(id)).includes('NO_WORKER'), { description: 'NO_WORKER', timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 500)); // several more dispatch polls
    expect((await h.row(id)).state).toBe('PENDING');
    expect((await h.events(id)).filter((t) => t === 'NO_WORKER')).toHaveLength(1);
    const [rows] = await h.db.pool.query<RowDataPacket[]>(`SELECT message FROM event_log WHERE instance_id = ? AND type = 'NO_WORKER'`, [id]);
    expect(String(rows[0]?.message)).toContain('1 not serving team a');
    await h.db.pool.query(`UPDATE task_instance SET state = 'CANCELED', reason = 'CANCELED_BY_USER' WHERE id = ?`, [id]);
  });
});
