// Operator's day two in a real browser (issue #47): Debian's chromium (playwright-core) against
// admin-api, a broker and a worker process on MariaDB, Redis and RabbitMQ. A global pause was
// invisible (18 instances sat PENDING while the dashboard said "Running 0") and a drain could
// not be undone. Here: an admin pauses from the dashboard with a reason; every page shows the
// banner with it; the dashboard's cards say dispatch paused, how many instances wait and are
// late, and how many workers are live and draining, and each card opens the list behind it; a
// worker drained on the Workers page is undrained there; resuming from the banner clears it.
// Checked at 1280 and 390 px; screenshots go to test/browser/artifacts/status-*.png.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
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
import { signIn } from './admin-alone.js';
import { ARTIFACTS, CHROMIUM, CHROMIUM_FLAGS, noChromium } from './chromium.js';

const ADMIN_TOKEN = `axt_status_admin_${Math.random().toString(36).slice(2)}`;
const UI_TIMEOUT_MS = 45_000;
const WORKER = 'status-w-1';
const REASON = 'MySQL maintenance until 02:00 (INC-7)';

const ns = uniqueNamespace('axstat');
const dataDir = mkdtempSync(join(tmpdir(), 'ax-status-'));
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
let browser: Browser | undefined;
let baseUrl = '';

interface Status {
  dispatch: { paused: boolean; reason?: string };
  workers: { live: number; draining: number };
  backlog: { waiting: number; oldestDueSeconds: number };
  late: number;
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

beforeAll(async () => {
  if (noChromium) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  db = await createTestDatabase();
  redis = await createTestRedis(ns);
  amqp = await createTestAmqp(ns);
  const env = { AX_MYSQL_URL: db.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'warn', AX_EXECUTOR_SECRET: 'status-executor-secret-0123456789', AX_WORKER_DATA_DIR: dataDir };
  // The backlog scan every 500 ms (default 5 s): held instances get their reason at once.
  await startService('broker', { env: { ...env, AX_BACKLOG_SCAN_MS: '500' } });
  const admin = await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } });
  baseUrl = admin.baseUrl;
  await startService('worker', { env: { ...env, AX_WORKER_ID: WORKER, AX_WORKER_SLOTS: '2' } });
  // Two runs no worker can take (no worker offers `gpu`): they wait, NO_WORKER.
  await api('POST', '/api/v1/tasks', { name: 'status_gpu', tags: ['gpu'], block: 'parallel', schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] }, timeoutSeconds: 30 });
  for (let i = 0; i < 2; i++) await api('POST', '/api/v1/tasks/status_gpu/trigger', {});
  await waitFor(async () => (await api<Status>('GET', '/api/v1/status')).backlog.waiting === 2 && (await api<Status>('GET', '/api/v1/status')).workers.live === 1, {
    description: 'two held instances and one live worker in GET /status',
    timeoutMs: 30_000,
    intervalMs: 250,
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stopAllProcesses();
  assertNoLeftoverProcesses();
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the pause, the backlog and the workers, seen and undone in the console', () => {
  for (const width of [1280, 390]) {
    it(`at ${width} px: pause with a reason, banner on every page, cards that link, undrain, resume`, async () => {
      onTestFailed(() => dumpAllProcessOutput());
      const context = await browser!.newContext({ viewport: { width, height: 900 } });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
      try {
        await signIn(page, baseUrl, ADMIN_TOKEN, UI_TIMEOUT_MS);
        const now = page.getByTestId('now');
        await now.locator('[data-now="dispatch"]').waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await now.locator('[data-now="dispatch"]').getAttribute('data-value')).toBe('0');

        // Pause from the dashboard: the prompt asks why.
        page.once('dialog', (dialog) => void dialog.accept(REASON));
        await page.locator('[data-action="pause-dispatch"]').click();
        const banner = page.getByTestId('pause-banner');
        await banner.waitFor({ timeout: UI_TIMEOUT_MS });
        expect(await banner.textContent()).toContain(REASON);
        expect((await api<Status>('GET', '/api/v1/status')).dispatch).toMatchObject({ paused: true, reason: REASON });
        await waitFor(async () => (await now.locator('[data-now="dispatch"]').getAttribute('data-value')) === '1', { description: 'the dispatch card says paused', timeoutMs: UI_TIMEOUT_MS });
        await waitFor(async () => (await now.locator('[data-now="waiting"]').getAttribute('data-value')) === '2', { description: 'the waiting card counts 2', timeoutMs: UI_TIMEOUT_MS });
        expect(await now.locator('[data-now="workers"]').getAttribute('data-value')).toBe('1');
        await page.screenshot({ path: join(ARTIFACTS, `status-dashboard-${width}.png`), fullPage: true });

        // A card opens the list behind it; the banner stays on every page.
        await now.locator('[data-now="waiting"]').click();
        await page.waitForURL(/\/instances\?state=PENDING$/, { timeout: UI_TIMEOUT_MS });
        await banner.waitFor({ timeout: UI_TIMEOUT_MS });

        // Drain, then undrain, on the Workers page.
        await page.goto(`${baseUrl}/workers`);
        const row = page.locator(`tr[data-worker="${WORKER}"]`);
        await row.waitFor({ timeout: UI_TIMEOUT_MS });
        page.once('dialog', (dialog) => void dialog.accept());
        await row.locator('[data-action="drain"]').click();
        await row.locator('[data-action="undrain"]').waitFor({ timeout: UI_TIMEOUT_MS });
        expect((await api<Status>('GET', '/api/v1/status')).workers).toEqual({ live: 1, draining: 1 });
        page.once('dialog', (dialog) => void dialog.accept());
        await row.locator('[data-action="undrain"]').click();
        await row.locator('[data-action="drain"]').waitFor({ timeout: UI_TIMEOUT_MS });
        expect((await api<Status>('GET', '/api/v1/status')).workers).toEqual({ live: 1, draining: 0 });
        expect(await banner.isVisible()).toBe(true);
        await page.screenshot({ path: join(ARTIFACTS, `status-workers-${width}.png`), fullPage: true });

        // Resume from the banner: it goes away.
        page.once('dialog', (dialog) => void dialog.accept());
        await banner.locator('[data-action="resume-dispatch"]').click();
        await banner.waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
        expect((await api<Status>('GET', '/api/v1/status')).dispatch.paused).toBe(false);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    }, 180_000);
  }
});
