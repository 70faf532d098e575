// The web console in a real browser (Debian's chromium driven by playwright-core, headless)
// against a real stack: scheduler, broker, worker and admin-api processes on MariaDB, Redis and
// RabbitMQ. What an operator relies on: signing in with a token, a dashboard whose figures are
// the API's, "run now" followed to SUCCESS with its events and output, a rerun that shows its
// dry run first; a viewer is offered no action; the console fits a phone.
// Screenshots go to test/browser/artifacts/ (AX_CONSOLE_DOCS_SCREENSHOT=1 also refreshes
// docs/images/console-dashboard.png).
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import {
  assertNoLeftoverProcesses,
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  dumpAllProcessOutput,
  repoRoot,
  startService,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
} from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { ARTIFACTS, CHROMIUM, CHROMIUM_FLAGS, noChromium } from './chromium.js';

const ADMIN_TOKEN = `axt_console_admin_${Math.random().toString(36).slice(2)}`;
/** Longest wait for one thing in the UI (a run to finish, a page to settle). */
const UI_TIMEOUT_MS = 45_000;


const ns = uniqueNamespace('axui');
const dataDir = mkdtempSync(join(tmpdir(), 'ax-console-'));
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
let browser: Browser | undefined;
let baseUrl = '';
let viewerToken = '';

interface Json {
  [key: string]: unknown;
}

async function api<T = Json>(method: 'GET' | 'POST', path: string, body?: unknown, token = ADMIN_TOKEN): Promise<T> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text === '' ? {} : JSON.parse(text)) as T;
}

/** The elements that reach past the right edge of the screen, outermost first, to name in a failure. */
function overflowing(page: Page): Promise<string> {
  return page.evaluate<string>(`(() => {
    const out = [];
    for (const el of document.body.querySelectorAll('*')) {
      const right = el.getBoundingClientRect().right;
      if (right <= window.innerWidth + 0.5) continue;
      if (el.parentElement && el.parentElement.getBoundingClientRect().right > window.innerWidth + 0.5) continue;
      out.push(el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '') + ' (right ' + Math.round(right) + ' px): ' + (el.textContent || '').trim().slice(0, 60));
    }
    return out.slice(0, 5).join('; ') || 'none found';
  })()`);
}

type InstanceRow = { id: string; taskName: string; state: string; runNo: number };

async function instancesOf(task: string): Promise<InstanceRow[]> {
  return (await api<{ items: InstanceRow[] }>('GET', `/api/v1/instances?task=${task}`)).items;
}

/** Everything that was started has ended: the figures stop moving. */
async function waitQuiet(): Promise<void> {
  await waitFor(
    async () => {
      const open = await api<{ items: InstanceRow[] }>('GET', '/api/v1/instances?state=WAITING,PENDING,DISPATCHED,RUNNING,RETRY_WAIT');
      return open.items.length === 0;
    },
    { description: 'no instance left that is not final', timeoutMs: UI_TIMEOUT_MS, intervalMs: 250 },
  );
}

/** A page that records what the console would hide from a user: script errors, CSP refusals, failed loads. */
async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    // A 401 of a refused sign-in is the browser's own log line, and expected where the test signs in badly.
    if (msg.type() === 'error' && !/status of 401/.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
  return { page, problems };
}

/** One attribute of every element a locator matches, in document order. (No DOM callbacks: this file is type-checked without the DOM lib.) */
async function attributes(locator: Locator, name: string): Promise<Array<string | null>> {
  return Promise.all((await locator.all()).map((element) => element.getAttribute(name)));
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.locator('input[name="token"]').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').waitFor({ timeout: UI_TIMEOUT_MS });
}

async function shot(page: Page, name: string): Promise<string> {
  const file = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
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
    AX_EXECUTOR_SECRET: 'console-executor-secret-0123456789',
    AX_WORKER_DATA_DIR: dataDir,
  };
  await startService('scheduler', { env });
  await startService('broker', { env });
  await startService('worker', { env: { ...env, AX_WORKER_ID: 'console-w1', AX_WORKER_SLOTS: '4', AX_WORKER_TAGS: 'etl' } });
  // Figures computed per request: the test compares the dashboard with the API at one moment,
  // right after its runs (the figures' cache is tested in stats-cache.test.ts and teams.test.ts).
  const admin = await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN, AX_STATS_MAX_AGE_MS: '0' } });
  baseUrl = admin.baseUrl;
  const root = await fetch(`${baseUrl}/`);
  if (root.status !== 200) throw new Error(`GET / answered ${root.status}: ${await root.text()} (run \`pnpm build\` first)`);

  const shell = (script: string) => ({ type: 'shell', command: ['sh', '-c', script] });
  await api('POST', '/api/v1/tasks', { name: 'console_ok', description: 'says hello', schedule: { type: 'none' }, exec: shell('echo hello from the console test'), timeoutSeconds: 30 });
  await api('POST', '/api/v1/tasks', { name: 'console_child', schedule: { type: 'none' }, exec: shell('echo child'), timeoutSeconds: 30 });
  await api('POST', '/api/v1/tasks', { name: 'console_fail', schedule: { type: 'none' }, exec: shell('echo failing >&2; exit 3'), timeoutSeconds: 30 });
  await api('POST', '/api/v1/tasks', {
    name: 'console_nightly',
    schedule: { type: 'cron', expr: '30 2 * * *', timezone: 'Asia/Shanghai' },
    exec: shell('echo nightly'),
  });
  await api('POST', '/api/v1/edges', { parent: 'console_ok', child: 'console_child' });
  viewerToken = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'console-viewer', role: 'viewer' })).token;
  // A failure today, so the dashboard has a failing task to show.
  await api('POST', '/api/v1/tasks/console_fail/trigger', {});
  await waitFor(async () => (await instancesOf('console_fail')).some((i) => i.state === 'FAILED'), {
    description: 'console_fail fails',
    timeoutMs: UI_TIMEOUT_MS,
    intervalMs: 250,
  });

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

describe.skipIf(noChromium)('the web console in chromium', () => {
  it('signs in, runs a task to SUCCESS, shows its events and output, reruns it after a dry run, and shows the API figures', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      // A wrong token: one line, the API's message.
      await page.goto(`${baseUrl}/`);
      await page.locator('input[name="token"]').fill('not-a-token');
      await page.getByRole('button', { name: 'Sign in' }).click();
      const refused = page.locator('.error-line');
      await refused.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await refused.innerText()).toBe('the bearer token is unknown or revoked');
      await shot(page, 'sign-in');

      await signIn(page, ADMIN_TOKEN);
      expect(await page.getByTestId('who').innerText()).toContain('admin');
      // #47: the token was exchanged for an HttpOnly session cookie; the page keeps no copy of it.
      expect(await page.evaluate<string>('JSON.stringify(sessionStorage) + JSON.stringify(localStorage) + document.cookie')).not.toContain(ADMIN_TOKEN);

      // Tasks: search, then "run now".
      await page.getByRole('link', { name: 'Tasks', exact: true }).click();
      await page.getByRole('searchbox', { name: 'Search tasks' }).fill('console_ok');
      await page.getByRole('button', { name: 'Search' }).click();
      const row = page.locator('tr[data-task="console_ok"]');
      await row.waitFor({ timeout: UI_TIMEOUT_MS });
      await page.locator('tr[data-task="console_fail"]').waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
      // "Run now…" opens the trigger dialog; confirmed, it opens the new instance's page.
      await row.locator('[data-action="run-now"]').click();
      const trigger = page.getByTestId('trigger-dialog');
      await trigger.getByRole('button', { name: 'Review' }).click();
      await trigger.locator('[data-action="confirm-run"]').click();
      await page.waitForURL(/\/instances\/\d+$/, { timeout: UI_TIMEOUT_MS });
      const instanceId = /\/instances\/(\d+)$/.exec(page.url())?.[1] ?? '';
      expect(instanceId).toMatch(/^\d+$/);

      // The instance page follows it to SUCCESS.
      await page.locator('h2 [data-state="SUCCESS"]').waitFor({ timeout: UI_TIMEOUT_MS });
      const events = await attributes(page.getByTestId('events').locator('li'), 'data-event');
      expect(events).toEqual(expect.arrayContaining(['CREATED', 'DISPATCHED', 'SUCCEEDED']));
      expect(await page.getByTestId('output-tail').innerText()).toContain('hello from the console test');
      expect(await page.getByTestId('executions').locator('tbody tr').count()).toBe(1);
      await shot(page, 'instance-success');

      // Rerun: the button to apply is there only after the dry-run preview.
      await page.locator('[data-action="rerun"]').click();
      const dialog = page.getByTestId('rerun-dialog');
      await dialog.waitFor();
      const apply = dialog.getByRole('button', { name: /^Rerun/ });
      expect(await apply.isDisabled()).toBe(true);
      await dialog.locator('input[name="reason"]').fill('console test: run it again');
      await dialog.getByRole('button', { name: 'Preview (dry run)' }).click();
      const preview = dialog.getByTestId('rerun-preview');
      await preview.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await preview.locator('tbody tr').count()).toBe(1);
      expect(await preview.locator('tbody tr').first().innerText()).toContain(`rerun #${instanceId}`);
      expect((await instancesOf('console_ok')).find((i) => i.id === instanceId)?.runNo).toBe(1); // the dry run changed nothing
      await shot(page, 'rerun-preview');
      await apply.click();
      const rerunNotice = page.locator('.notice', { hasText: 'Rerun requested' });
      await rerunNotice.waitFor({ timeout: UI_TIMEOUT_MS });
      // The notice links to the rerun's batch page, the one the API lists for it.
      const batches = await api<{ items: Array<{ id: string; reason: string }> }>('GET', '/api/v1/reruns');
      const batch = batches.items.find((b) => b.reason === 'console test: run it again');
      expect(batch).toBeDefined();
      expect(await rerunNotice.getByRole('link', { name: `batch #${batch?.id}` }).getAttribute('href')).toBe(`/reruns/${batch?.id}`);
      await waitFor(async () => (await instancesOf('console_ok')).find((i) => i.id === instanceId)?.runNo === 2, {
        description: 'the rerun is recorded as run 2',
        timeoutMs: UI_TIMEOUT_MS,
      });
      await page.locator('[data-testid="instance-facts"]', { hasText: 'run 2' }).waitFor({ timeout: UI_TIMEOUT_MS });
      await page.locator('h2 [data-state="SUCCESS"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('executions').locator('tbody tr').count()).toBe(2);
      // #47: the run column tells the two runs apart (attempts restart at 1), and so do the log tabs.
      expect(await page.getByTestId('executions').locator('td[data-column="run"]').allInnerTexts()).toEqual(['1', '2']);
      expect(await page.getByTestId('executions').locator('td[data-column="attempt"]').allInnerTexts()).toEqual(['1', '1']);
      expect(await page.locator('.log-tabs [role="tab"]').allInnerTexts()).toEqual([expect.stringMatching(/^run 2 · attempt 1/), expect.stringMatching(/^run 1 · attempt 1/)]);

      // The dashboard shows what the API says (once nothing is moving any more).
      await waitQuiet();
      await page.getByRole('link', { name: 'Dashboard' }).click();
      await page.locator('[data-stat="total"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.locator('.chart .uplot').first().waitFor({ timeout: UI_TIMEOUT_MS });
      const stats = await api<{ total: number; succeeded: number; failed: number; running: number; avgTriggerDelayMs: number | null; maxDurationMs: number | null; topFailing: Array<{ task: string; count: number }> }>(
        'GET',
        '/api/v1/stats/today',
      );
      const names = await attributes(page.locator('[data-stat]'), 'data-stat');
      const values = await attributes(page.locator('[data-stat]'), 'data-value');
      const shown = Object.fromEntries(names.map((name, n): [string, string | null] => [name ?? '', values[n] ?? null]));
      expect(shown).toEqual({
        total: String(stats.total),
        succeeded: String(stats.succeeded),
        failed: String(stats.failed),
        running: String(stats.running),
        avgTriggerDelayMs: stats.avgTriggerDelayMs === null ? '' : String(stats.avgTriggerDelayMs),
        maxDurationMs: stats.maxDurationMs === null ? '' : String(stats.maxDurationMs),
      });
      expect(stats.total).toBeGreaterThanOrEqual(3); // console_fail, console_ok, console_child
      expect(stats.failed).toBeGreaterThanOrEqual(1);
      const failingRows = await page.locator('[data-testid="top-failing"] tbody tr').all();
      const topFailing = await Promise.all(failingRows.map(async (r) => ({ task: await r.getAttribute('data-task'), count: Number(await r.getAttribute('data-count')) })));
      expect(topFailing).toEqual(stats.topFailing);
      expect(await page.locator('.chart .uplot').count()).toBe(3);
      const dashboard = await shot(page, 'dashboard');
      if (process.env.AX_CONSOLE_DOCS_SCREENSHOT === '1') copyFileSync(dashboard, join(repoRoot(), 'docs/images/console-dashboard.png'));

      // Task detail: next fire times in UTC and in the task's zone.
      await page.goto(`${baseUrl}/tasks/console_nightly`);
      const fireTimes = page.getByTestId('fire-times');
      await fireTimes.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await fireTimes.locator('thead').innerText()).toContain('Asia/Shanghai');
      const first = await fireTimes.locator('tbody tr').first().innerText();
      expect(first).toMatch(/18:30:00 UTC/); // 02:30 in Shanghai is 18:30 UTC the day before
      expect(first).toMatch(/02:30:00/);

      // DAG view: both tasks drawn and coloured by the latest business date's states.
      await page.goto(`${baseUrl}/dag?root=console_ok`);
      await page.locator('g.dag-node[data-task="console_child"][data-state="SUCCESS"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('g.dag-node[data-task="console_ok"]').getAttribute('data-state')).toBe('SUCCESS');
      expect(await page.locator('path.dag-edge').count()).toBe(1);
      await shot(page, 'dag');

      // Workers and the audit log.
      await page.getByRole('link', { name: 'Workers' }).click();
      await page.locator('tr[data-worker="console-w1"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('tr[data-worker="console-w1"]').innerText()).toContain('etl');
      await page.getByRole('link', { name: 'Audit' }).click();
      await page.locator('tr[data-action="rerun.instance"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('tr[data-action="rerun.instance"]').innerText()).toContain('console test: run it again');
      expect(await page.locator('tr[data-action="task.trigger"]').count()).toBeGreaterThanOrEqual(1);
      await shot(page, 'audit');

      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 240_000);

  it('offers a viewer no action the role may not do', async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, viewerToken);
      expect(await page.getByTestId('who').innerText()).toContain('viewer');
      expect(await page.getByRole('link', { name: 'Audit' }).count()).toBe(0);

      await page.getByRole('link', { name: 'Tasks', exact: true }).click();
      await page.locator('tr[data-task="console_ok"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('[data-action="run-now"]').count()).toBe(0);
      expect(await page.locator('input[role="switch"]').count()).toBe(0);

      await page.goto(`${baseUrl}/tasks/console_ok`);
      await page.getByTestId('instance-table').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByRole('button', { name: /Run now|Disable|Enable|Rerun/ }).count()).toBe(0);

      const instanceId = (await instancesOf('console_ok'))[0]?.id ?? '';
      await page.goto(`${baseUrl}/instances/${instanceId}`);
      await page.getByTestId('instance-facts').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('[data-action="rerun"], [data-action="cancel"]').count()).toBe(0);

      await page.getByRole('link', { name: 'Workers' }).click();
      await page.locator('tr[data-worker="console-w1"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('[data-action="drain"]').count()).toBe(0);
      await shot(page, 'viewer-workers');

      // And the API agrees: the viewer's token cannot trigger.
      await expect(api('POST', '/api/v1/tasks/console_ok/trigger', {}, viewerToken)).rejects.toThrow(/403/);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('fits a phone (390 px): no sideways scrolling of the page', async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, ADMIN_TOKEN);
      await page.locator('[data-stat="total"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.locator('.chart .uplot').first().waitFor({ timeout: UI_TIMEOUT_MS });
      const widths = await page.evaluate<{ page: number; viewport: number }>('({ page: document.documentElement.scrollWidth, viewport: window.innerWidth })');
      expect(widths.page, `wider than the screen: ${await overflowing(page)}`).toBeLessThanOrEqual(widths.viewport);
      await shot(page, 'phone-dashboard');
      await page.goto(`${baseUrl}/tasks`);
      await page.locator('tr[data-task="console_ok"]').waitFor({ timeout: UI_TIMEOUT_MS });
      // Wide tables scroll inside their own box, not the page; "Run now" is reachable without scrolling.
      expect(await page.evaluate<number>('document.documentElement.scrollWidth'), `wider than the screen: ${await overflowing(page)}`).toBeLessThanOrEqual(widths.viewport);
      const runNow = await page.locator('tr[data-task="console_ok"] [data-action="run-now"]').boundingBox();
      expect(runNow).not.toBeNull();
      expect((runNow?.x ?? 0) + (runNow?.width ?? Infinity)).toBeLessThanOrEqual(widths.viewport);
      await shot(page, 'phone-tasks');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
