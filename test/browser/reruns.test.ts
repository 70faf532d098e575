// Rerun and backfill batches in the web console (#20), in Debian's chromium (playwright-core)
// against a real stack: scheduler, broker, worker and admin-api processes on MariaDB, Redis and
// RabbitMQ. An operator starts a 7-day backfill with concurrency 2 after its dry run (7 slots),
// follows the batch page's progress bar to done; the counts match the batch's instances and at
// most 2 of them ran at once (from their executions); a second batch is canceled from its page;
// the list shows both. A viewer sees the pages but no Backfill/Cancel, and the API refuses them.
// Screenshots at 1280 and 390 px go to test/browser/artifacts/.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
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
import { ARTIFACTS, CHROMIUM, CHROMIUM_FLAGS, noChromium } from './chromium.js';

const ADMIN_TOKEN = `axt_reruns_admin_${Math.random().toString(36).slice(2)}`;
/** Longest wait for one thing in the UI (a batch to finish, a page to settle). */
const UI_TIMEOUT_MS = 90_000;
const STATES = ['WAITING', 'PENDING', 'DISPATCHED', 'RUNNING', 'RETRY_WAIT', 'SUCCESS', 'FAILED', 'CANCELED'] as const;


const ns = uniqueNamespace('axrr');
const dataDir = mkdtempSync(join(tmpdir(), 'ax-reruns-'));
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
let browser: Browser | undefined;
let baseUrl = '';
let operatorToken = '';
let viewerToken = '';
/** The batches the operator's test made, for the viewer's. */
let firstBatch = '';
let secondBatch = '';

interface Batch {
  id: string;
  mode: string;
  state: string;
  total: number;
  counts: Record<string, number>;
  canceled?: string[];
}
interface InstanceRow {
  id: string;
  taskName: string;
  state: string;
  bizDate: string;
  reason: string | null;
  rerunBatchId: string | null;
}
interface Execution {
  startedAt: string | null;
  endedAt: string | null;
}

async function call(method: 'GET' | 'POST', path: string, body: unknown, token: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as unknown) };
}

async function api<T>(method: 'GET' | 'POST', path: string, body?: unknown, token = ADMIN_TOKEN): Promise<T> {
  const res = await call(method, path, body, token);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as T;
}

/** Every instance of a batch, through the plain instance list (not the batch's own endpoint). */
async function instancesOfBatch(task: string, batchId: string): Promise<InstanceRow[]> {
  const page = await api<{ items: InstanceRow[] }>('GET', `/api/v1/instances?task=${task}&limit=500`);
  return page.items.filter((i) => i.rerunBatchId === batchId);
}

function byState(instances: readonly InstanceRow[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(STATES.map((s) => [s, 0]));
  for (const i of instances) out[i.state] = (out[i.state] ?? 0) + 1;
  return out;
}

/** Most intervals open at once (an end at the same instant as a start does not overlap it). */
function maxOverlap(intervals: ReadonlyArray<{ start: number; end: number }>): number {
  const points = intervals.flatMap((i) => [
    { at: i.start, d: 1 },
    { at: i.end, d: -1 },
  ]);
  points.sort((a, b) => a.at - b.at || a.d - b.d);
  let open = 0;
  let most = 0;
  for (const p of points) {
    open += p.d;
    most = Math.max(most, open);
  }
  return most;
}

function isoDay(offsetDays: number): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  return { page, problems };
}

async function attributes(locator: Locator, name: string): Promise<Array<string | null>> {
  return Promise.all((await locator.all()).map((element) => element.getAttribute(name)));
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.locator('input[name="token"]').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').waitFor({ timeout: UI_TIMEOUT_MS });
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** The page body does not scroll sideways at this width. */
async function expectNoSideways(page: Page): Promise<void> {
  const widths = await page.evaluate<{ page: number; viewport: number }>('({ page: document.documentElement.scrollWidth, viewport: window.innerWidth })');
  expect(widths.page).toBeLessThanOrEqual(widths.viewport);
}

/** What the batch page's legend shows: state → number. */
async function legendOf(page: Page): Promise<Record<string, number>> {
  const items = page.getByTestId('batch-legend').locator('li[data-state]');
  const states = await attributes(items, 'data-state');
  const counts = await attributes(items, 'data-count');
  return Object.fromEntries(states.map((s, n) => [s ?? '', Number(counts[n])]));
}

function nonZero(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));
}

beforeAll(async () => {
  if (noChromium) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  db = await createTestDatabase();
  redis = await createTestRedis(ns);
  amqp = await createTestAmqp(ns);
  const env = {
    AX_MYSQL_URL: db.url,
    AX_NAMESPACE: ns,
    AX_LOG_LEVEL: 'warn',
    AX_EXECUTOR_SECRET: 'reruns-executor-secret-0123456789',
    AX_WORKER_DATA_DIR: dataDir,
  };
  await startService('scheduler', { env });
  await startService('broker', { env });
  await startService('worker', { env: { ...env, AX_WORKER_ID: 'reruns-w1', AX_WORKER_SLOTS: '4' } });
  const admin = await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } });
  baseUrl = admin.baseUrl;
  const root = await fetch(`${baseUrl}/`);
  if (root.status !== 200) throw new Error(`GET / answered ${root.status}: ${await root.text()} (build the console, or set AX_CONSOLE_DIR)`);

  const shell = (script: string) => ({ type: 'shell', command: ['sh', '-c', script] });
  // Daily at 03:00 UTC: one slot per business date. Each run takes 2 seconds, so runs of a
  // backfill overlap unless its concurrency holds them back.
  // `parallel`: the default block strategy (serial) alone would keep them from overlapping.
  await api('POST', '/api/v1/tasks', { name: 'rr_daily', description: 'daily load', schedule: { type: 'cron', expr: '0 3 * * *' }, block: 'parallel', exec: shell('sleep 2; echo loaded'), timeoutSeconds: 60 });
  await api('POST', '/api/v1/tasks', { name: 'rr_slow', description: 'slow daily load', schedule: { type: 'cron', expr: '0 4 * * *' }, exec: shell('sleep 8; echo slow'), timeoutSeconds: 60 });
  operatorToken = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'reruns-operator', role: 'operator' })).token;
  viewerToken = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'reruns-viewer', role: 'viewer' })).token;
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

describe.skipIf(noChromium)('rerun and backfill batches in chromium', () => {
  it('an operator backfills 7 days with concurrency 2 after a dry run, follows it to done, cancels a second batch, and sees both listed', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, operatorToken);
      expect(await page.getByTestId('who').innerText()).toContain('operator');

      // The dialog from the task page if it offers one, else from the Reruns page with a task picker.
      await page.goto(`${baseUrl}/tasks/rr_daily`);
      await page.getByTestId('task-team').waitFor({ timeout: UI_TIMEOUT_MS }); // the task has loaded
      const fromTask = page.getByRole('button', { name: /^Backfill/ });
      const dialog = page.getByTestId('backfill-dialog');
      if ((await fromTask.count()) > 0) {
        console.log('reruns.test: backfill opened from the task page');
        await fromTask.first().click();
        await dialog.waitFor();
      } else {
        console.log('reruns.test: the task page has no Backfill button; backfill opened from the Reruns page');
        await page.getByRole('link', { name: 'Reruns' }).click();
        await page.locator('[data-action="backfill"]').click();
        await dialog.waitFor();
        await dialog.locator('select[name="task"] option[value="rr_daily"]').waitFor({ state: 'attached', timeout: UI_TIMEOUT_MS });
        // Only scheduled tasks can be backfilled: both are offered.
        expect(await attributes(dialog.locator('select[name="task"] option'), 'value')).toEqual(['', 'rr_daily', 'rr_slow']);
        await dialog.locator('select[name="task"]').selectOption('rr_daily');
      }

      const from = isoDay(-10);
      const to = isoDay(-4);
      const dates = Array.from({ length: 7 }, (_, n) => isoDay(-10 + n));
      const start = dialog.locator('[data-action="start-backfill"]');
      expect(await start.isDisabled()).toBe(true);
      expect(await dialog.locator('input[name="concurrency"]').inputValue()).toBe('1'); // default
      await dialog.locator('input[name="from"]').fill(from);
      await dialog.locator('input[name="to"]').fill(to);
      await dialog.locator('input[name="concurrency"]').fill('2');
      expect(await dialog.getByTestId('block-hint').count()).toBe(0); // rr_daily runs in parallel
      // A reason is required: the dry run is not even asked for without one.
      await dialog.getByRole('button', { name: 'Preview (dry run)' }).click();
      expect(await dialog.locator('input[name="reason"]:invalid').count()).toBe(1);
      expect(await dialog.getByTestId('backfill-preview').count()).toBe(0);
      await dialog.locator('input[name="reason"]').fill('reruns test: reload a week');
      await dialog.getByRole('button', { name: 'Preview (dry run)' }).click();
      const preview = dialog.getByTestId('backfill-preview');
      await preview.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await preview.getAttribute('data-slots')).toBe('7');
      expect(await attributes(preview.locator('tbody tr'), 'data-slot')).toEqual(dates);
      expect(await attributes(preview.locator('tbody tr'), 'data-action')).toEqual(Array(7).fill('create'));
      expect(await preview.locator('tbody tr').first().innerText()).toContain(`${dates[0]} 03:00:00 UTC`);
      expect(await preview.locator('h4').innerText()).toBe('7 slots: 7 new, 0 re-run');
      expect((await api<{ items: unknown[] }>('GET', '/api/v1/instances?task=rr_daily')).items).toHaveLength(0); // the dry run changed nothing
      expect(await start.isDisabled()).toBe(false);
      await shot(page, 'reruns-backfill-preview');
      // Another choice on screen: that preview no longer applies.
      await dialog.locator('input[name="concurrency"]').fill('3');
      expect(await start.isDisabled()).toBe(true);
      expect(await dialog.getByTestId('backfill-preview').count()).toBe(0);
      await dialog.locator('input[name="concurrency"]').fill('2');
      await dialog.getByRole('button', { name: 'Preview (dry run)' }).click();
      await preview.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await start.innerText()).toBe('Start backfill (7)');
      await start.click();

      // The batch page, followed to done.
      await page.waitForURL(/\/reruns\/\d+$/, { timeout: UI_TIMEOUT_MS });
      firstBatch = /\/reruns\/(\d+)$/.exec(page.url())?.[1] ?? '';
      expect(firstBatch).toMatch(/^\d+$/);
      await page.getByTestId('batch-progress').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('batch-progress').getAttribute('data-total')).toBe('7');
      // Followed live: the bar's finished count as the page polls, until the batch is done.
      const seenFinished = new Set<string>();
      await waitFor(
        async () => {
          seenFinished.add((await page.getByTestId('batch-progress').getAttribute('data-finished')) ?? '');
          return (await page.getByTestId('batch-state').innerText()).toLowerCase() === 'done';
        },
        { description: 'the batch page shows done', timeoutMs: UI_TIMEOUT_MS, intervalMs: 200 },
      );
      console.log(`reruns.test: finished counts seen on the page: ${[...seenFinished].join(', ')}`);
      expect(seenFinished.size).toBeGreaterThanOrEqual(2); // it moved while we watched (7 runs of 2 s, 2 at a time)
      expect([...seenFinished].every((v) => /^[0-7]$/.test(v))).toBe(true);
      const batch = await api<Batch>('GET', `/api/v1/reruns/${firstBatch}`);
      expect(batch).toMatchObject({ id: firstBatch, mode: 'backfill', state: 'done', total: 7 });
      // The counts match the instances, as the plain instance list has them and as the page shows them.
      const instances = await instancesOfBatch('rr_daily', firstBatch);
      expect(instances.map((i) => i.bizDate).sort()).toEqual(dates);
      expect(batch.counts).toEqual(byState(instances));
      expect(batch.counts.SUCCESS).toBe(7);
      expect(await legendOf(page)).toEqual(nonZero(batch.counts));
      expect(await page.getByTestId('batch-progress').getAttribute('data-finished')).toBe('7');
      const segments = page.getByTestId('batch-progress').locator('.batch-seg');
      expect(await attributes(segments, 'data-state')).toEqual(['SUCCESS']);
      await page.locator('[data-testid="instance-table"] tbody tr').nth(6).waitFor({ timeout: UI_TIMEOUT_MS });
      expect((await attributes(page.locator('[data-testid="instance-table"] tbody tr'), 'data-instance')).sort()).toEqual(instances.map((i) => i.id).sort());
      expect(await page.locator(`[data-testid="instance-table"] a[href="/instances/${instances[0]?.id ?? ''}"]`).count()).toBe(1);
      expect(await page.locator('[data-action="cancel-batch"]').count()).toBe(0); // done: nothing to cancel
      expect(await page.getByText('final: no longer updating').count()).toBe(1);
      await shot(page, 'reruns-batch-done');

      // At most 2 ran at once: from the executions' start and end times.
      const intervals: Array<{ start: number; end: number }> = [];
      for (const i of instances) {
        const detail = await api<{ executions: Execution[] }>('GET', `/api/v1/instances/${i.id}`);
        for (const e of detail.executions) {
          expect(e.startedAt).not.toBeNull();
          expect(e.endedAt).not.toBeNull();
          intervals.push({ start: Date.parse(e.startedAt ?? ''), end: Date.parse(e.endedAt ?? '') });
        }
      }
      expect(intervals).toHaveLength(7);
      const overlap = maxOverlap(intervals);
      console.log(`reruns.test: most runs of the backfill at once: ${overlap}`);
      expect(overlap).toBeGreaterThanOrEqual(1);
      // (4 worker slots and parallel runs: without the batch's limit they would overlap more.)
      expect(overlap).toBeLessThanOrEqual(2);

      // A second batch, canceled from its page while its first slot runs.
      const started = await api<{ batchId: string; instances: string[] }>(
        'POST',
        '/api/v1/reruns',
        { mode: 'backfill', task: 'rr_slow', from: isoDay(-8), to: isoDay(-4), concurrency: 1, reason: 'reruns test: to be canceled' },
        operatorToken,
      );
      secondBatch = started.batchId;
      expect(started.instances).toHaveLength(5);
      await page.goto(`${baseUrl}/reruns/${secondBatch}`);
      await page.locator('[data-testid="batch-state"]', { hasText: 'running' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await page.locator('[data-action="cancel-batch"]').click();
      const confirm = page.getByTestId('cancel-dialog');
      await confirm.waitFor();
      expect(await confirm.innerText()).toContain('CANCELED_BY_USER');
      await confirm.locator('input[name="cancel-reason"]').fill('reruns test: wrong range');
      await shot(page, 'reruns-cancel-confirm');
      await confirm.locator('[data-action="confirm-cancel"]').click();
      const notice = page.getByTestId('canceled-notice');
      await notice.waitFor({ timeout: UI_TIMEOUT_MS });
      await page.locator('[data-testid="batch-state"]', { hasText: 'canceled' }).waitFor({ timeout: UI_TIMEOUT_MS });
      const canceledIds = (await attributes(notice.locator('a'), 'href')).map((h) => h?.replace('/instances/', '') ?? '');
      const byUser = (await instancesOfBatch('rr_slow', secondBatch)).filter((i) => i.state === 'CANCELED' && i.reason === 'CANCELED_BY_USER');
      expect([...canceledIds].sort()).toEqual(byUser.map((i) => i.id).sort());
      expect(await notice.innerText()).toContain(`Canceled ${canceledIds.length} instance`);
      expect(canceledIds.length).toBeGreaterThanOrEqual(1);
      expect(await page.locator('[data-action="cancel-batch"]').count()).toBe(0);
      // The one that had started runs to its end; then the counts are final and match.
      await page.getByText('final: no longer updating').waitFor({ timeout: UI_TIMEOUT_MS });
      const second = await api<Batch>('GET', `/api/v1/reruns/${secondBatch}`);
      expect(second).toMatchObject({ state: 'canceled', total: 5 });
      expect(second.counts).toEqual(byState(await instancesOfBatch('rr_slow', secondBatch)));
      expect(second.counts.CANCELED).toBe(canceledIds.length);
      // What had started before the cancel ran to its end.
      expect(second.counts.SUCCESS).toBe(5 - canceledIds.length);
      expect(await legendOf(page)).toEqual(nonZero(second.counts));
      await shot(page, 'reruns-batch-canceled');

      // The list: both, newest first, with their states, totals and progress.
      await page.getByRole('link', { name: 'Reruns' }).click();
      await page.locator(`tr[data-batch="${firstBatch}"]`).waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await attributes(page.locator('[data-testid="batch-table"] tbody tr'), 'data-batch')).toEqual([secondBatch, firstBatch]);
      expect(await attributes(page.locator('[data-testid="batch-table"] tbody tr'), 'data-state')).toEqual(['canceled', 'done']);
      expect(await page.locator(`tr[data-batch="${firstBatch}"] [data-column="total"]`).innerText()).toBe('7');
      expect(await page.locator(`tr[data-batch="${secondBatch}"] [data-column="total"]`).innerText()).toBe('5');
      expect(await page.locator(`tr[data-batch="${firstBatch}"]`).innerText()).toContain('reruns test: reload a week');
      expect(await page.locator(`tr[data-batch="${firstBatch}"]`).innerText()).toContain('reruns-operator');
      expect(await page.locator(`tr[data-batch="${firstBatch}"] [data-testid="batch-progress"]`).getAttribute('data-finished')).toBe('7');
      await shot(page, 'reruns-list');
      // Paged with the API's cursor: the filter by mode, then one batch a page is not offered
      // here; the API's own paging is covered by the admin-api tests.
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 300_000);

  it('a viewer sees the batches but is offered no backfill or cancel, and the API refuses both', async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await openPage(context);
    // A running batch, so a cancel would be offered to an operator.
    const running = await api<{ batchId: string }>('POST', '/api/v1/reruns', { mode: 'backfill', task: 'rr_slow', from: isoDay(-20), to: isoDay(-17), concurrency: 1, reason: 'reruns test: viewer' });
    try {
      await signIn(page, viewerToken);
      await page.getByRole('link', { name: 'Reruns' }).click();
      await page.locator(`tr[data-batch="${running.batchId}"]`).waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await attributes(page.locator('[data-testid="batch-table"] tbody tr'), 'data-batch')).toEqual([running.batchId, secondBatch, firstBatch]);
      expect(await page.locator('[data-action="backfill"]').count()).toBe(0);
      await page.goto(`${baseUrl}/reruns/${running.batchId}`);
      await page.locator('[data-testid="batch-state"]', { hasText: 'running' }).waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('batch-progress').getAttribute('data-total')).toBe('4');
      expect(await page.locator('[data-action="cancel-batch"]').count()).toBe(0);
      expect(await page.getByRole('button', { name: /Cancel/ }).count()).toBe(0);
      await shot(page, 'reruns-viewer-batch');
      // An unknown batch: the API's 404 as one line.
      await page.goto(`${baseUrl}/reruns/987654`);
      await page.locator('.error-line').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('.error-line').innerText()).toBe('rerun batch "987654" does not exist');
      await page.goto(`${baseUrl}/tasks/rr_daily`);
      await page.getByTestId('task-team').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByRole('button', { name: /Backfill|Rerun|Run now/ }).count()).toBe(0);

      const cancel = await call('POST', `/api/v1/reruns/${running.batchId}/cancel`, {}, viewerToken);
      expect(cancel.status).toBe(403);
      const backfill = await call('POST', '/api/v1/reruns', { mode: 'backfill', task: 'rr_daily', from: isoDay(-30), to: isoDay(-29), reason: 'viewer', dryRun: true }, viewerToken);
      expect(backfill.status).toBe(403);
      expect((await api<Batch>('GET', `/api/v1/reruns/${running.batchId}`)).state).toBe('running');
      // The browser's own log lines of the unknown batch's two 404s (batch and its instances) are expected.
      expect(problems.filter((p) => !/status of 404/.test(p))).toEqual([]);
    } finally {
      await context.close();
      await call('POST', `/api/v1/reruns/${running.batchId}/cancel`, {}, ADMIN_TOKEN);
    }
  }, 120_000);

  it('fits a phone (390 px): the list, a batch and the dialog without sideways scrolling', async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, operatorToken);
      await page.goto(`${baseUrl}/reruns`);
      await page.locator(`tr[data-batch="${firstBatch}"]`).waitFor({ timeout: UI_TIMEOUT_MS });
      await expectNoSideways(page);
      await shot(page, 'reruns-phone-list');
      await page.goto(`${baseUrl}/reruns/${firstBatch}`);
      await page.locator('[data-testid="batch-state"]', { hasText: 'done' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await page.locator('[data-testid="instance-table"] tbody tr').nth(6).waitFor({ timeout: UI_TIMEOUT_MS });
      await expectNoSideways(page);
      const bar = await page.getByTestId('batch-progress').boundingBox();
      expect((bar?.x ?? 0) + (bar?.width ?? Infinity)).toBeLessThanOrEqual(390);
      await shot(page, 'reruns-phone-batch');
      await page.goto(`${baseUrl}/reruns`);
      await page.locator('[data-action="backfill"]').click();
      const dialog = page.getByTestId('backfill-dialog');
      await dialog.waitFor();
      await dialog.locator('select[name="task"] option[value="rr_daily"]').waitFor({ state: 'attached', timeout: UI_TIMEOUT_MS });
      await dialog.locator('select[name="task"]').selectOption('rr_daily');
      await dialog.locator('input[name="from"]').fill(isoDay(-10));
      await dialog.locator('input[name="to"]').fill(isoDay(-4));
      await dialog.locator('input[name="reason"]').fill('phone');
      await dialog.getByRole('button', { name: 'Preview (dry run)' }).click();
      await dialog.getByTestId('backfill-preview').waitFor({ timeout: UI_TIMEOUT_MS });
      // The 7 slots are final now: a re-run of each.
      expect(await attributes(dialog.getByTestId('backfill-preview').locator('tbody tr'), 'data-action')).toEqual(Array(7).fill('rerun'));
      await expectNoSideways(page);
      const startBox = await dialog.locator('[data-action="start-backfill"]').boundingBox();
      expect((startBox?.x ?? 0) + (startBox?.width ?? Infinity)).toBeLessThanOrEqual(390);
      await shot(page, 'reruns-phone-dialog');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
  it('pages the list with the API cursor (25 a page)', async () => {
    // 26 batches in all (3 so far): 23 more one-day backfills.
    for (let n = 0; n < 23; n++) {
      await api('POST', '/api/v1/reruns', { mode: 'backfill', task: 'rr_daily', from: isoDay(-40 - n), to: isoDay(-40 - n), reason: `paging ${n}` });
    }
    const all = await api<{ items: Batch[] }>('GET', '/api/v1/reruns?limit=100');
    expect(all.items).toHaveLength(26);
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, viewerToken);
      await page.goto(`${baseUrl}/reruns`);
      const rows = page.locator('[data-testid="batch-table"] tbody tr');
      await rows.nth(24).waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await attributes(rows, 'data-batch')).toEqual(all.items.slice(0, 25).map((b) => b.id));
      await page.getByRole('button', { name: 'Older →' }).click();
      await page.locator(`tr[data-batch="${firstBatch}"]`).waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await attributes(rows, 'data-batch')).toEqual([firstBatch]);
      expect(await page.getByRole('button', { name: 'Older →' }).count()).toBe(0);
      await page.getByRole('button', { name: '← Newer' }).click();
      await rows.nth(24).waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await attributes(rows, 'data-batch')).toEqual(all.items.slice(0, 25).map((b) => b.id));
      // The mode select narrows, from the first page.
      await page.locator('select[name="mode"]').selectOption('instance');
      await page.getByText('No batches of mode instance.').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
