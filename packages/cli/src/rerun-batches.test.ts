/**
 * A DAG backfill end to end (#47), and `axctl reruns list|get|watch|cancel` on it: the admin
 * API in-process, a real scheduler, broker and worker (built services) on the same MariaDB
 * database, Redis namespace and RabbitMQ namespace; shell jobs that really run.
 *
 * The DAG is bf_root (daily) → bf_mid → bf_leaf (both dependency-only). A backfill of bf_root
 * creates the root's runs; the scheduler creates each downstream run when its parent succeeds,
 * in the root's batch: the batch counts them (not done until the last leaf ran), and its cancel
 * reaches them (no downstream run starts after it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RowDataPacket } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAmqp, startService, stopAllProcesses, waitFor, type TestAmqp } from '@ax/testing';
import { axctl, json, killLeftovers, startApp, taskDef, type TestApp } from './axctl.test-helper.js';

let t: TestApp;
let amqp: TestAmqp;
let dataDir: string;

const sh = (script: string): { type: 'shell'; command: string[] } => ({ type: 'shell', command: ['sh', '-c', script] });
const day = (offset: number): string => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

interface Batch {
  id: string;
  state: string;
  total: number;
  finished: number;
  counts: Record<string, number>;
}

/** Every instance of the DAG's tasks, straight from the table. */
async function dagInstances(prefix: string): Promise<Array<{ id: string; task: string; bizDate: string; state: string; batch: string | null }>> {
  const [rows] = await t.pool.query<RowDataPacket[]>(
    "SELECT id, task_name, DATE_FORMAT(biz_date, '%Y-%m-%d') AS d, state, rerun_batch_id FROM task_instance WHERE task_name LIKE ? ORDER BY id",
    [`${prefix}%`],
  );
  return rows.map((r) => ({ id: String(r['id']), task: String(r['task_name']), bizDate: String(r['d']), state: String(r['state']), batch: r['rerun_batch_id'] == null ? null : String(r['rerun_batch_id']) }));
}

/** Creates prefix_root (daily at 03:00) → prefix_mid → prefix_leaf, each running `seconds`. */
async function createDag(prefix: string, seconds: { root: number; mid: number; leaf: number }): Promise<void> {
  const bodies = [
    taskDef(`${prefix}_root`, { schedule: { type: 'cron', expr: '0 3 * * *' }, block: 'parallel', exec: sh(`sleep ${seconds.root}`), timeoutSeconds: 60 }),
    taskDef(`${prefix}_mid`, { schedule: { type: 'none' }, block: 'parallel', exec: sh(`sleep ${seconds.mid}`), timeoutSeconds: 60 }),
    taskDef(`${prefix}_leaf`, { schedule: { type: 'none' }, block: 'parallel', exec: sh(`sleep ${seconds.leaf}`), timeoutSeconds: 60 }),
  ];
  for (const body of bodies) expect((await t.call('POST', '/api/v1/tasks', { body })).status).toBe(201);
  for (const [parent, child] of [[`${prefix}_root`, `${prefix}_mid`], [`${prefix}_mid`, `${prefix}_leaf`]]) {
    expect((await t.call('POST', '/api/v1/edges', { body: { parent, child } })).status).toBe(201);
  }
}

beforeAll(async () => {
  t = await startApp();
  amqp = await createTestAmqp(t.namespace);
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'axctl-reruns-'));
  await createDag('bf', { root: 1, mid: 1, leaf: 1 });
  await createDag('cx', { root: 1, mid: 10, leaf: 1 });
  const common = { AX_MYSQL_URL: t.db.url, AX_REDIS_URL: t.redis.url, AX_AMQP_URL: amqp.url, AX_NAMESPACE: t.namespace, AX_LOG_LEVEL: 'warn' };
  await startService('scheduler', { name: 'scheduler', env: { ...common, AX_SCHEDULER_DAG_SCAN_MS: '1000' } });
  await startService('broker', { name: 'broker', env: common });
  await startService('worker', { name: 'worker', env: { ...common, AX_WORKER_ID: 'reruns-w1', AX_WORKER_SLOTS: '4', AX_WORKER_DATA_DIR: dataDir } });
}, 120_000);

afterAll(async () => {
  expect(killLeftovers()).toBe(0);
  await stopAllProcesses({ graceMs: 5_000 });
  await amqp?.cleanup();
  await t?.close();
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
});

describe('a DAG backfill', () => {
  it('counts every downstream run: `reruns watch` ends only after the last leaf ran, 6/6', async () => {
    const started = await t.call('POST', '/api/v1/reruns', { body: { mode: 'backfill', task: 'bf_root', from: day(-3), to: day(-2), concurrency: 2, reason: 'history' } });
    expect(started.status).toBe(202);
    const batchId = String((started.body as { batchId: unknown }).batchId);

    // Every poll of the batch, beside `watch`: "done" may only be seen once all six ran.
    const seen: Batch[] = [];
    let watching = true;
    const poller = (async () => {
      while (watching) {
        const b = (await t.call('GET', `/api/v1/reruns/${batchId}`)).body as Batch;
        if (b.state !== 'running') {
          const rows = await dagInstances('bf_');
          expect(rows.filter((r) => r.state === 'SUCCESS')).toHaveLength(6);
        }
        seen.push(b);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const watched = await axctl(t, ['reruns', 'watch', batchId], { killAfterMs: 90_000 });
    watching = false;
    await poller;
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.errLines.at(-1)).toBe(`batch ${batchId}: done 6/6 (100%): SUCCESS 6`);
    expect(Math.max(...seen.map((b) => b.total))).toBe(6);

    const rows = await dagInstances('bf_');
    expect(rows.map((r) => r.task).sort()).toEqual(['bf_leaf', 'bf_leaf', 'bf_mid', 'bf_mid', 'bf_root', 'bf_root']);
    expect(rows.every((r) => r.batch === batchId && r.state === 'SUCCESS')).toBe(true);
    expect(new Set(rows.map((r) => r.bizDate))).toEqual(new Set([day(-3), day(-2)]));

    const got = await axctl(t, ['reruns', 'get', batchId]);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toMatch(/^state:\s+done$/m);
    expect(got.stdout).toMatch(/^progress:\s+6\/6 \(100%\)$/m);
    expect(got.lines.filter((l) => /\bbf_leaf\b.*\bSUCCESS\b/.test(l))).toHaveLength(2);

    const listed = await axctl(t, ['reruns', 'list', '--mode', 'backfill', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(json<{ items: Batch[] }>(listed).items.find((b) => b.id === batchId)).toMatchObject({ state: 'done', total: 6, finished: 6 });
  }, 120_000);

  it('a cancel reaches the downstream runs: none is pending after it, none starts later', async () => {
    // Concurrency 1: one run at a time. Canceled while a (slow) mid runs: the other date's
    // root or mid waits (PENDING, canceled), and the running mid's leaf is never created.
    const started = await t.call('POST', '/api/v1/reruns', { body: { mode: 'backfill', task: 'cx_root', from: day(-3), to: day(-2), concurrency: 1, reason: 'to cancel' } });
    expect(started.status).toBe(202);
    const batchId = String((started.body as { batchId: unknown }).batchId);
    await waitFor(async () => (await dagInstances('cx_mid')).some((r) => r.state === 'RUNNING'), { timeoutMs: 30_000, description: 'a downstream run running' });

    const timedOut = await axctl(t, ['reruns', 'watch', batchId, '--timeout', '1s'], { killAfterMs: 30_000 });
    expect(timedOut.code).toBe(124);
    expect(timedOut.stderr).toMatch(/still running after 1s; stopped watching, the batch goes on/);

    const canceled = await axctl(t, ['reruns', 'cancel', batchId, '--reason', 'enough']);
    expect(canceled.code, canceled.stderr).toBe(0);
    expect(canceled.lines[0]).toMatch(new RegExp(`^batch ${batchId} canceled: 1 instance not yet started canceled \\(\\d+\\)$`));

    // The mid that was running finishes; its leaf is never created, nothing of the batch waits.
    await waitFor(async () => (await dagInstances('cx_')).every((r) => ['SUCCESS', 'FAILED', 'CANCELED'].includes(r.state)), { timeoutMs: 30_000, description: 'every run final' });
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // three DAG scans: no late leaf
    const rows = await dagInstances('cx_');
    expect(rows.filter((r) => r.task === 'cx_leaf')).toEqual([]);
    expect(rows.filter((r) => !['SUCCESS', 'CANCELED'].includes(r.state))).toEqual([]);
    expect(rows.every((r) => r.batch === batchId)).toBe(true);

    const watched = await axctl(t, ['reruns', 'watch', batchId], { killAfterMs: 30_000 });
    expect(watched.code).toBe(1);
    expect(watched.stderr).toMatch(new RegExp(`batch ${batchId} was canceled`));
  }, 120_000);
});
