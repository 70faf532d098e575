// #47 in the console: a DAG backfill's progress goes to the last downstream task. Real scheduler,
// broker, worker and admin-api processes on MariaDB, Redis and RabbitMQ; Debian's chromium via
// playwright-core. The DAG is dg_root (daily at 03:00) → dg_mid → dg_leaf (dependency-only, by
// dependsOn). An operator backfills dg_root for 3 days from its task page (dry run first) and
// follows the batch page: its total grows to 3 × 3 = 9 as the scheduler creates the downstream
// runs in the batch, and it reads done only once every leaf is final (checked against the API at
// the moment the page says done). A second DAG with a slow middle task is canceled from its batch
// page while a middle run runs: the waiting runs are canceled, no leaf is ever created, and every
// run the batch made is in the batch. Screenshots go to test/browser/artifacts/dag-backfill-*.png.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  assertNoLeftoverProcesses,
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  dumpAllProcessOutput,
  startService,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
} from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { signIn as signInAt } from './admin-alone.js';
import { ARTIFACTS, CHROMIUM, CHROMIUM_FLAGS, attributes, docsShots, noChromium, openPage } from './chromium.js';

const ADMIN_TOKEN = `axt_dagbf_admin_${Math.random().toString(36).slice(2)}`;
const UI_TIMEOUT_MS = 60_000;
const DAYS = 3;
const FINAL = ['SUCCESS', 'FAILED', 'CANCELED'];

const ns = uniqueNamespace('axdbf');
const dataDir = mkdtempSync(join(tmpdir(), 'ax-dag-backfill-'));
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
let browser: Browser | undefined;
let baseUrl = '';
let operatorToken = '';

interface InstanceRow {
  id: string;
  taskName: string;
  state: string;
  bizDate: string;
  rerunBatchId: string | null;
}
interface Batch {
  id: string;
  state: string;
  total: number;
  counts: Record<string, number>;
}

async function api<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text === '' ? {} : JSON.parse(text)) as T;
}

/** Every instance of the DAG `prefix` (its three tasks), through the plain instance list. */
async function dagInstances(prefix: string): Promise<InstanceRow[]> {
  const lists = await Promise.all(['root', 'mid', 'leaf'].map((t) => api<{ items: InstanceRow[] }>('GET', `/api/v1/instances?task=${prefix}_${t}&limit=500`)));
  return lists.flatMap((l) => l.items);
}



function isoDay(offsetDays: number): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

const shell = (script: string) => ({ type: 'shell', command: ['sh', '-c', script] });
const noRetry = { max: 0, backoffSeconds: 0, factor: 1, jitterSeconds: 0 };

/** prefix_root (daily at 03:00) → prefix_mid → prefix_leaf, each running its seconds. */
async function createDag(prefix: string, seconds: { root: number; mid: number; leaf: number }): Promise<void> {
  const common = { block: 'parallel', timeoutSeconds: 60, retry: noRetry };
  await api('POST', '/api/v1/tasks', { name: `${prefix}_root`, schedule: { type: 'cron', expr: '0 3 * * *' }, exec: shell(`sleep ${seconds.root}`), ...common });
  await api('POST', '/api/v1/tasks', { name: `${prefix}_mid`, schedule: { type: 'none' }, exec: shell(`sleep ${seconds.mid}`), dependsOn: [{ task: `${prefix}_root` }], ...common });
  await api('POST', '/api/v1/tasks', { name: `${prefix}_leaf`, schedule: { type: 'none' }, exec: shell(`sleep ${seconds.leaf}`), dependsOn: [{ task: `${prefix}_mid` }], ...common });
}

beforeAll(async () => {
  if (noChromium) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  db = await createTestDatabase();
  redis = await createTestRedis(ns);
  amqp = await createTestAmqp(ns);
  const env = { AX_MYSQL_URL: db.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'warn', AX_EXECUTOR_SECRET: 'dag-backfill-secret-0123456789', AX_WORKER_DATA_DIR: dataDir };
  // A DAG scan each second: a child follows its parent's end within about a second.
  await startService('scheduler', { env: { ...env, AX_SCHEDULER_DAG_SCAN_MS: '1000' } });
  await startService('broker', { env });
  await startService('worker', { env: { ...env, AX_WORKER_ID: 'dag-backfill-w1', AX_WORKER_SLOTS: '4' } });
  const admin = await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } });
  baseUrl = admin.baseUrl;
  const root = await fetch(`${baseUrl}/`);
  if (root.status !== 200) throw new Error(`GET / answered ${root.status}: ${await root.text()} (build the console first)`);
  await createDag('dg', { root: 1, mid: 1, leaf: 1 });
  await createDag('cx', { root: 1, mid: 10, leaf: 1 });
  operatorToken = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'dag-backfill-operator', role: 'operator' })).token;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true, timeout: 30_000 });
}, 150_000);

afterAll(async () => {
  await browser?.close();
  await stopAllProcesses();
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
  assertNoLeftoverProcesses();
}, 60_000);

/** Backfills `task` for days -DAYS-1 … -2 at `concurrency` from its task page; returns the batch id once its page shows. */
async function backfillFromTaskPage(page: Page, task: string, concurrency: number, reason: string): Promise<string> {
  await page.goto(`${baseUrl}/tasks/${task}`);
  await page.locator('[data-action="backfill"]').click();
  const dialog = page.getByTestId('backfill-dialog');
  await dialog.waitFor({ timeout: UI_TIMEOUT_MS });
  await dialog.locator('input[name="from"]').fill(isoDay(-DAYS - 1));
  await dialog.locator('input[name="to"]').fill(isoDay(-2));
  await dialog.locator('input[name="concurrency"]').fill(String(concurrency));
  await dialog.locator('input[name="reason"]').fill(reason);
  await dialog.getByRole('button', { name: 'Preview (dry run)' }).click();
  const preview = dialog.getByTestId('backfill-preview');
  await preview.waitFor({ timeout: UI_TIMEOUT_MS });
  // The dry run plans the root's slots only: the downstream runs come later, from the DAG.
  expect(await preview.getAttribute('data-slots')).toBe(String(DAYS));
  await dialog.locator('[data-action="start-backfill"]').click();
  await page.waitForURL(/\/reruns\/\d+$/, { timeout: UI_TIMEOUT_MS });
  const id = /\/reruns\/(\d+)$/.exec(page.url())?.[1] ?? '';
  expect(id).toMatch(/^\d+$/);
  await page.getByTestId('batch-progress').waitFor({ timeout: UI_TIMEOUT_MS });
  return id;
}

describe.skipIf(noChromium)('a DAG backfill in chromium', () => {
  it('counts every downstream run: the batch page reads done only after the last leaf, at 9 of 9', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (browser as Browser).newContext({ viewport: { width: 1440, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      await signInAt(page, baseUrl, operatorToken, UI_TIMEOUT_MS);
      const batchId = await backfillFromTaskPage(page, 'dg_root', DAYS, 'dag backfill test: three days');
      // Followed live: the bar's total and finished count as the page polls, until it says done.
      const seen: string[] = [];
      // The DAG's runs as the API has them at the moment the page first says done (waitFor
      // retries a callback that throws, so the check is made on this snapshot afterwards).
      const atDone = await waitFor(
        async () => {
          const bar = page.getByTestId('batch-progress');
          seen.push(`${(await bar.getAttribute('data-finished')) ?? ''}/${(await bar.getAttribute('data-total')) ?? ''}`);
          if ((await page.getByTestId('batch-state').innerText()).toLowerCase() !== 'done') return false;
          return dagInstances('dg');
        },
        { description: 'the batch page shows done', timeoutMs: UI_TIMEOUT_MS, intervalMs: 200 },
      );
      // When the page said done, every run of every level was final: the leaves too.
      expect(atDone.filter((r) => r.taskName === 'dg_leaf' && FINAL.includes(r.state))).toHaveLength(DAYS);
      expect(atDone.filter((r) => !FINAL.includes(r.state))).toEqual([]);
      console.log(`dag-backfill.test: finished/total seen on the page: ${[...new Set(seen)].join(', ')}`);
      const bar = page.getByTestId('batch-progress');
      expect(await bar.getAttribute('data-total')).toBe(String(DAYS * 3));
      expect(await bar.getAttribute('data-finished')).toBe(String(DAYS * 3));
      // It moved while we watched, and never read more finished than it had runs.
      expect(new Set(seen).size).toBeGreaterThanOrEqual(2);
      for (const s of seen) {
        const [finished, total] = s.split('/').map(Number);
        expect(finished).toBeLessThanOrEqual(total ?? 0);
      }

      const batch = await api<Batch>('GET', `/api/v1/reruns/${batchId}`);
      expect(batch).toMatchObject({ id: batchId, state: 'done', total: DAYS * 3 });
      expect(batch.counts.SUCCESS).toBe(DAYS * 3);
      const rows = await dagInstances('dg');
      expect(rows.every((r) => r.rerunBatchId === batchId && r.state === 'SUCCESS')).toBe(true);
      expect(rows.map((r) => r.taskName).sort()).toEqual((['dg_leaf', 'dg_mid', 'dg_root'] as const).flatMap((t) => Array.from({ length: DAYS }, () => t)));
      expect(new Set(rows.map((r) => r.bizDate))).toEqual(new Set(Array.from({ length: DAYS }, (_, n) => isoDay(-DAYS - 1 + n))));
      // The batch's instance list on its page: all nine, the leaves among them.
      const table = page.locator('[data-testid="instance-table"] tbody tr');
      await table.nth(DAYS * 3 - 1).waitFor({ timeout: UI_TIMEOUT_MS });
      expect((await attributes(table, 'data-instance')).sort()).toEqual(rows.map((r) => r.id).sort());
      expect(await page.getByText('final: no longer updating').count()).toBe(1);
      await docsShots(page, 'dag-backfill-done', [1440]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('a cancel from the batch page reaches the downstream runs: none waits after it, no leaf is created', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (browser as Browser).newContext({ viewport: { width: 1440, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      await signInAt(page, baseUrl, operatorToken, UI_TIMEOUT_MS);
      // Concurrency 1: one run at a time, so while the slow middle run runs the others wait.
      const batchId = await backfillFromTaskPage(page, 'cx_root', 1, 'dag backfill test: to cancel');
      await waitFor(async () => (await dagInstances('cx')).some((r) => r.taskName === 'cx_mid' && r.state === 'RUNNING'), {
        description: 'a middle run of the batch running',
        timeoutMs: UI_TIMEOUT_MS,
        intervalMs: 200,
      });
      await page.locator('[data-testid="batch-state"]', { hasText: 'running' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await page.locator('[data-action="cancel-batch"]').click();
      const confirm = page.getByTestId('cancel-dialog');
      await confirm.waitFor({ timeout: UI_TIMEOUT_MS });
      await confirm.locator('input[name="cancel-reason"]').fill('dag backfill test: wrong range');
      await confirm.locator('[data-action="confirm-cancel"]').click();
      await page.getByTestId('canceled-notice').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.locator('[data-testid="batch-state"]', { hasText: 'canceled' }).waitFor({ timeout: UI_TIMEOUT_MS });
      // The middle run that was running finishes; then the page's counts are final.
      await page.getByText('final: no longer updating').waitFor({ timeout: UI_TIMEOUT_MS });
      await new Promise((resolve) => setTimeout(resolve, 3_000)); // three DAG scans: no late leaf
      const rows = await dagInstances('cx');
      expect(rows.filter((r) => r.taskName === 'cx_leaf')).toEqual([]);
      expect(rows.filter((r) => !['SUCCESS', 'CANCELED'].includes(r.state))).toEqual([]);
      expect(rows.filter((r) => r.state === 'CANCELED').length).toBeGreaterThanOrEqual(1);
      expect(rows.every((r) => r.rerunBatchId === batchId)).toBe(true);
      const batch = await api<Batch>('GET', `/api/v1/reruns/${batchId}`);
      expect(batch).toMatchObject({ state: 'canceled', total: rows.length });
      // The page, reloaded, counts what the API does.
      await page.reload();
      const bar = page.getByTestId('batch-progress');
      await bar.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await bar.getAttribute('data-total')).toBe(String(rows.length));
      expect(await bar.getAttribute('data-finished')).toBe(String(rows.length));
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
