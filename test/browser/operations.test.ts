// The operations pages of the web console (#20) in a real browser (Debian's chromium driven by
// playwright-core) against a real stack: scheduler, broker, two workers (one per team) and
// admin-api on MariaDB, Redis and RabbitMQ. What an operator relies on in a day of operations:
// the alert a failing task raised, with its delivery state, and the filters that find it; the
// dead letter a poison message left; the DAG grid of three business dates (states, durations, a
// click opens the instance); instance filters by worker, trigger, team and time range equal to
// the API's answer; bulk cancel and bulk rerun (dry run first) of a selection; local time beside
// UTC. A viewer is offered none of the writes and no dead letters (and the API refuses them).
// Everything is checked at 1280 and 390 px; screenshots go to test/browser/artifacts/ops-*.png.
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

const ADMIN_TOKEN = `axt_ops_admin_${Math.random().toString(36).slice(2)}`;
/** Longest wait for one thing in the UI (a run to finish, a page to settle). */
const UI_TIMEOUT_MS = 45_000;
/** The business dates of the grid's DAG; the middle one fails in `grid_mid`. */
const DATES = ['2026-11-02', '2026-11-03', '2026-11-04'] as const;
/** The browser's zone: local time beside UTC is checked against it. */
const BROWSER_ZONE = 'Asia/Shanghai';
/** The worker of team `default` and the one of team `opsb`. */
const W_DEFAULT = 'ops-w-default';
const W_OPSB = 'ops-w-opsb';


const ns = uniqueNamespace('axops');
const dataDir = mkdtempSync(join(tmpdir(), 'ax-ops-'));
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
let browser: Browser | undefined;
let baseUrl = '';
let viewerToken = '';
let operatorToken = '';

interface Json {
  [key: string]: unknown;
}

async function call(method: 'GET' | 'POST', path: string, body?: unknown, token = ADMIN_TOKEN): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as unknown) };
}

async function api<T = Json>(method: 'GET' | 'POST', path: string, body?: unknown, token = ADMIN_TOKEN): Promise<T> {
  const res = await call(method, path, body, token);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as T;
}

interface InstanceRow {
  id: string;
  taskName: string;
  state: string;
  runNo: number;
  bizDate: string;
  expectedTime: string;
  trigger: string;
  workerId: string | null;
  team: string | null;
}

async function instances(query: string): Promise<InstanceRow[]> {
  return (await api<{ items: InstanceRow[] }>('GET', `/api/v1/instances?limit=500&${query}`)).items;
}

const FINAL = ['SUCCESS', 'FAILED', 'CANCELED'];

/** A page that records what the console would hide from a user: script errors, failed loads. */
async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    // A refused request (the viewer's 403s the test provokes on purpose) is the browser's own log line.
    if (msg.type() === 'error' && !/status of 40[13]/.test(msg.text())) problems.push(`console: ${msg.text()}`);
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
  await page.screenshot({ path: join(ARTIFACTS, `ops-${name}.png`), fullPage: true });
}

/** The page body does not scroll sideways (wide tables scroll in their own box). */
async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const widths = await page.evaluate<{ page: number; viewport: number }>('({ page: document.documentElement.scrollWidth, viewport: window.innerWidth })');
  expect(widths.page).toBeLessThanOrEqual(widths.viewport);
}

/** The ids the instance table shows, in order (waits for the list to settle on `expected`). */
async function shownIds(page: Page, expected: readonly string[]): Promise<string[]> {
  const rows = page.getByTestId('instance-table').locator('tbody tr');
  try {
    await waitFor(async () => JSON.stringify(await attributes(rows, 'data-instance')) === JSON.stringify(expected), {
      description: `the instance table shows ${expected.join(',')}`,
      timeoutMs: 15_000,
      intervalMs: 200,
    });
  } catch {
    // fall through: the assertion below names what is shown
  }
  return (await attributes(rows, 'data-instance')).map((id) => id ?? '');
}

/** The same time in the browser's zone, as the console writes it beside UTC. */
function localText(iso: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', { timeZone: BROWSER_ZONE, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
      .formatToParts(new Date(iso))
      .map((p) => [p.type, p.value]),
  );
  const sameDay = `${parts['year']}-${parts['month']}-${parts['day']}` === iso.slice(0, 10);
  return `${sameDay ? '' : `${parts['month']}-${parts['day']} `}${parts['hour']}:${parts['minute']} local`;
}

const shell = (script: string) => ({ type: 'shell', command: ['sh', '-c', script] });
const noRetry = { max: 0, backoffSeconds: 0, factor: 1, jitterSeconds: 0 };

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
    AX_EXECUTOR_SECRET: 'ops-executor-secret-0123456789',
    AX_WORKER_DATA_DIR: dataDir,
  };
  await startService('scheduler', { env });
  // Alerts go to a webhook nobody listens on: their delivery fails and is retried (delivery "failed").
  await startService('broker', { env: { ...env, AX_ALERT_WEBHOOK_URL: 'http://127.0.0.1:9/ops-test-hook' } });
  const admin = await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } });
  baseUrl = admin.baseUrl;
  const root = await fetch(`${baseUrl}/`);
  if (root.status !== 200) throw new Error(`GET / answered ${root.status}: ${await root.text()} (build the console first)`);
  await api('POST', '/api/v1/teams', { name: 'opsb' });
  await startService('worker', { env: { ...env, AX_WORKER_ID: W_DEFAULT, AX_WORKER_SLOTS: '4', AX_WORKER_TEAMS: 'default' } });
  await startService('worker', { env: { ...env, AX_WORKER_ID: W_OPSB, AX_WORKER_SLOTS: '4', AX_WORKER_TEAMS: 'opsb' } });

  // The grid's DAG: grid_root → grid_mid → grid_leaf; grid_mid fails on the middle date.
  await api('POST', '/api/v1/tasks', { name: 'grid_root', schedule: { type: 'none' }, exec: shell('sleep 0.3; echo root'), timeoutSeconds: 30, retry: noRetry });
  await api('POST', '/api/v1/tasks', {
    name: 'grid_mid',
    schedule: { type: 'none' },
    exec: shell(`sleep 0.6; test "$AX_BIZ_DATE" != "${DATES[1]}"`),
    timeoutSeconds: 30,
    retry: noRetry,
    dependsOn: [{ task: 'grid_root' }],
  });
  await api('POST', '/api/v1/tasks', { name: 'grid_leaf', schedule: { type: 'none' }, exec: shell('echo leaf'), timeoutSeconds: 30, retry: noRetry, dependsOn: [{ task: 'grid_mid' }] });
  // A task of team opsb (its own worker), a slow one to cancel, and one that fails and alerts.
  await api('POST', '/api/v1/tasks', { name: 'ops_b_job', team: 'opsb', schedule: { type: 'none' }, exec: shell('echo b'), timeoutSeconds: 30 });
  await api('POST', '/api/v1/tasks', { name: 'ops_slow', team: 'opsb', schedule: { type: 'none' }, exec: shell('sleep 120'), timeoutSeconds: 300, block: 'parallel' });
  await api('POST', '/api/v1/tasks', { name: 'ops_fail', schedule: { type: 'none' }, exec: shell('echo failing >&2; exit 3'), timeoutSeconds: 30, retry: noRetry });
  viewerToken = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'ops-viewer', role: 'viewer' })).token;
  operatorToken = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'ops-operator', role: 'operator' })).token;

  for (const bizDate of DATES) await api('POST', '/api/v1/tasks/grid_root/trigger', { bizDate });
  await api('POST', '/api/v1/tasks/ops_b_job/trigger', {});
  await api('POST', '/api/v1/tasks/ops_fail/trigger', {});
  // A poison message on the events exchange: the broker cannot parse it and dead-letters it.
  amqp.channel.publish(`${ns}.events`, 'reply', Buffer.from('not json: a poison message from the operations test'));

  await waitFor(
    async () => {
      const mids = await instances('task=grid_mid');
      const leaves = await instances('task=grid_leaf');
      const bJobs = await instances('task=ops_b_job');
      const fails = await instances('task=ops_fail');
      return (
        mids.length === 3 &&
        mids.every((i) => FINAL.includes(i.state)) &&
        leaves.filter((i) => i.state === 'SUCCESS').length === 2 &&
        bJobs.length === 1 &&
        bJobs[0]?.state === 'SUCCESS' &&
        fails.length === 1 &&
        fails[0]?.state === 'FAILED'
      );
    },
    { description: 'the DAG ran on three dates, ops_b_job succeeded and ops_fail failed', timeoutMs: 90_000, intervalMs: 500 },
  );
  await waitFor(async () => (await api<{ items: unknown[] }>('GET', '/api/v1/dead-letters')).items.length > 0, {
    description: 'the poison message is a dead letter',
    timeoutMs: UI_TIMEOUT_MS,
    intervalMs: 250,
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true, timeout: 30_000 });
}, 200_000);

afterAll(async () => {
  await browser?.close();
  await stopAllProcesses();
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
  assertNoLeftoverProcesses();
}, 60_000);

interface AlertRow {
  id: string;
  kind: string;
  severity: string;
  taskName?: string;
  delivery: string;
  attempts: number;
}

describe.skipIf(noChromium)('the operations pages in chromium', () => {
  it('shows the alert a failing task raised with its delivery state, and filters find it', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 }, timezoneId: BROWSER_ZONE });
    const { page, problems } = await openPage(context);
    try {
      // The webhook is down: the broker records failed attempts.
      const failing = await waitFor(
        async () => {
          const list = await api<{ items: AlertRow[] }>('GET', '/api/v1/alerts?kind=FINAL_FAILURE&task=ops_fail');
          const alert = list.items[0];
          return alert !== undefined && alert.delivery === 'failed' ? alert : undefined;
        },
        { description: 'the FINAL_FAILURE alert of ops_fail, its delivery failed', timeoutMs: UI_TIMEOUT_MS, intervalMs: 500 },
      );
      await signIn(page, operatorToken);
      await page.getByRole('link', { name: 'Alerts', exact: true }).click();
      await page.getByTestId('alert-table').waitFor({ timeout: UI_TIMEOUT_MS });
      const all = await api<{ items: AlertRow[] }>('GET', '/api/v1/alerts?limit=50', undefined, operatorToken);
      // Newest first, as the API lists them.
      const shownAll = await attributes(page.getByTestId('alert-table').locator('tbody tr'), 'data-alert');
      expect(shownAll.slice(0, Math.min(3, all.items.length))).toEqual(all.items.slice(0, 3).map((a) => a.id));
      expect(all.items.filter((a) => a.kind === 'FINAL_FAILURE').map((a) => a.taskName)).toEqual(expect.arrayContaining(['ops_fail', 'grid_mid']));

      // Filter: kind and task → only ops_fail's alert, with its severity, message and delivery.
      await page.getByLabel('Kind').selectOption('FINAL_FAILURE');
      await page.getByLabel('Task').fill('ops_fail');
      await page.locator('input[type="submit"][value="Filter"]').click();
      await page.waitForURL('**/alerts?kind=FINAL_FAILURE&task=ops_fail');
      const row = page.locator(`tr[data-alert="${failing.id}"]`);
      await row.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('alert-table').locator('tbody tr').count()).toBe(1);
      expect(await row.locator('[data-severity]').getAttribute('data-severity')).toBe('critical');
      expect(await row.innerText()).toContain('ops_fail instance');
      expect(await row.innerText()).toContain('failed for good');
      const delivery = await api<{ items: AlertRow[] }>('GET', '/api/v1/alerts?kind=FINAL_FAILURE&task=ops_fail');
      await row.locator('[data-delivery="failed"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await row.innerText()).toMatch(/\d+ attempts?/);
      expect(delivery.items[0]?.attempts).toBeGreaterThanOrEqual(1);
      await shot(page, 'alerts');

      // Delivery "sent" finds none (the webhook never answered); severity "warning" neither.
      await page.getByLabel('Delivery').selectOption('sent');
      await page.locator('input[type="submit"][value="Filter"]').click();
      await page.getByTestId('alerts-empty').waitFor({ timeout: UI_TIMEOUT_MS });
      expect((await api<{ items: AlertRow[] }>('GET', '/api/v1/alerts?kind=FINAL_FAILURE&task=ops_fail&delivery=sent')).items).toEqual([]);
      // A time range that ends before the alert was raised: nothing.
      await page.goto(`${baseUrl}/alerts?task=ops_fail&to=2026-01-01T00:00:00.000Z`);
      await page.getByTestId('alerts-empty').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByLabel('Raised before (UTC)').inputValue()).toBe('2026-01-01T00:00');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('shows the dead letter the poison message left, to operators of every team only', async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 }, timezoneId: BROWSER_ZONE });
    const { page, problems } = await openPage(context);
    try {
      const letters = await api<{ items: Array<{ id: string; sourceQueue: string; reason: string; payload: string | null }> }>('GET', '/api/v1/dead-letters', undefined, operatorToken);
      const poison = letters.items.find((d) => d.payload?.includes('a poison message from the operations test') === true);
      expect(poison).toBeDefined();
      await signIn(page, operatorToken);
      await page.getByRole('link', { name: 'Dead letters', exact: true }).click();
      const row = page.locator(`tr[data-dead-letter="${poison?.id ?? ''}"]`);
      await row.waitFor({ timeout: UI_TIMEOUT_MS });
      const text = await row.innerText();
      expect(text).toContain(poison?.sourceQueue ?? '?');
      expect(text).toContain(poison?.reason ?? '?');
      expect(text).toContain('not json: a poison message from the operations test');
      expect(text).toMatch(/UTC\s*· (\d\d-\d\d )?\d\d:\d\d local/);
      await shot(page, 'dead-letters');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('draws the DAG grid of three business dates with the states and durations of the API, and a cell opens its instance', async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 }, timezoneId: BROWSER_ZONE });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, viewerToken);
      // From the graph view (which keeps its date picker) to the grid.
      await page.goto(`${baseUrl}/dag?root=grid_root`);
      // A new page asks GET /session before it draws (#47 cookie sessions): wait for the picker.
      await page.getByLabel('Business date (latest when empty)').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByTestId('to-grid').click();
      await page.waitForURL('**/dag/grid?root=grid_root');
      const grid = page.getByTestId('dag-grid');
      await grid.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await attributes(grid.locator('tbody tr'), 'data-task')).toEqual(['grid_root', 'grid_mid', 'grid_leaf']);
      expect(await attributes(grid.locator('thead th[data-bizdate]'), 'data-bizdate')).toEqual([...DATES]);

      for (const task of ['grid_root', 'grid_mid', 'grid_leaf']) {
        for (const bizDate of DATES) {
          const cell = grid.locator(`td[data-task="${task}"][data-bizdate="${bizDate}"]`);
          const listed = (await instances(`task=${task}&bizDate=${bizDate}`))[0];
          if (listed === undefined) {
            expect(await cell.getAttribute('data-state'), `${task} ${bizDate}`).toBe('NONE');
            continue;
          }
          const detail = await api<{ state: string; executions: Array<{ durationMs: number | null }> }>('GET', `/api/v1/instances/${listed.id}`);
          const ran = detail.executions[detail.executions.length - 1]?.durationMs ?? null;
          expect([await cell.getAttribute('data-state'), await cell.getAttribute('data-instance'), await cell.getAttribute('data-duration-ms')], `${task} ${bizDate}`).toEqual([
            detail.state,
            listed.id,
            ran === null ? '' : String(ran),
          ]);
          if (ran !== null) expect(await cell.innerText()).toMatch(ran < 1000 ? new RegExp(`^${Math.round(ran)} ms`) : /^\d+\.\d s/);
        }
      }
      // What the DAG did: the middle date failed in grid_mid, and its leaf never succeeded.
      expect(await grid.locator(`td[data-task="grid_mid"][data-bizdate="${DATES[1]}"]`).getAttribute('data-state')).toBe('FAILED');
      expect(await grid.locator(`td[data-task="grid_mid"][data-bizdate="${DATES[0]}"]`).getAttribute('data-state')).toBe('SUCCESS');
      expect(await grid.locator(`td[data-task="grid_leaf"][data-bizdate="${DATES[2]}"]`).getAttribute('data-state')).toBe('SUCCESS');
      expect(await grid.locator(`td[data-task="grid_leaf"][data-bizdate="${DATES[1]}"]`).getAttribute('data-state')).not.toBe('SUCCESS');
      // The mid job sleeps 0.6 s: its duration says so.
      expect(Number(await grid.locator(`td[data-task="grid_mid"][data-bizdate="${DATES[0]}"]`).getAttribute('data-duration-ms'))).toBeGreaterThanOrEqual(550);
      await shot(page, 'dag-grid');

      // N is chosen in the form (kept in the URL); two dates only: the oldest goes.
      await page.getByLabel('Business dates').selectOption('7');
      await page.locator('input[type="submit"][value="Show"]').click();
      await page.waitForURL('**/dag/grid?root=grid_root&days=7');
      await page.locator('hgroup', { hasText: 'the last 7 business dates' }).waitFor({ timeout: UI_TIMEOUT_MS });
      // The heading shows the new N before the grid of that N has loaded: wait for the grid's own.
      await page.locator('table[data-testid="dag-grid"][data-days="7"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await attributes(grid.locator('thead th[data-bizdate]'), 'data-bizdate')).toEqual([...DATES]);
      await page.goto(`${baseUrl}/dag/grid?root=grid_root&days=2`);
      await page.locator('table[data-testid="dag-grid"][data-days="2"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByLabel('Business dates').inputValue()).toBe('2');
      expect(await attributes(grid.locator('thead th[data-bizdate]'), 'data-bizdate')).toEqual([DATES[1], DATES[2]]);

      const failedCell = grid.locator(`td[data-task="grid_mid"][data-bizdate="${DATES[1]}"]`);
      const id = (await failedCell.getAttribute('data-instance')) ?? '';
      await failedCell.click();
      await page.waitForURL(`**/instances/${id}`);
      await page.locator('h2 [data-state="FAILED"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('narrows the instance list by worker, trigger, team and time range to what the API says, with local time beside UTC', async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 }, timezoneId: BROWSER_ZONE });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, operatorToken);
      const ids = async (query: string): Promise<string[]> => (await api<{ items: InstanceRow[] }>('GET', `/api/v1/instances?limit=50&${query}`, undefined, operatorToken)).items.map((i) => i.id);

      // Worker: the opsb worker ran ops_b_job only.
      await page.goto(`${baseUrl}/instances`);
      await page.getByTestId('instance-table').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByLabel('Worker').fill(W_OPSB);
      await page.locator('input[type="submit"][value="Filter"]').click();
      await page.waitForURL(`**/instances?worker=${W_OPSB}`);
      const byWorker = await ids(`worker=${W_OPSB}`);
      expect((await instances(`worker=${W_OPSB}`)).map((i) => i.taskName)).toEqual(['ops_b_job']);
      expect(await shownIds(page, byWorker)).toEqual(byWorker);
      expect(await attributes(page.locator('td[data-column="worker"]'), 'data-column')).toHaveLength(1);
      expect(await page.locator('td[data-column="worker"]').first().innerText()).toBe(W_OPSB);

      // Trigger: dependency instances are the DAG's children only.
      await page.goto(`${baseUrl}/instances?trigger=dependency`);
      const byTrigger = await ids('trigger=dependency');
      expect(new Set((await instances('trigger=dependency')).map((i) => i.taskName))).toEqual(new Set(['grid_mid', 'grid_leaf']));
      expect(await shownIds(page, byTrigger)).toEqual(byTrigger);
      expect(await page.getByLabel('Trigger').inputValue()).toBe('dependency');

      // Team: opsb only (ops_b_job); the team of the other worker.
      await page.goto(`${baseUrl}/instances?team=opsb&trigger=manual`);
      const byTeam = await ids('team=opsb&trigger=manual');
      expect(byTeam.length).toBeGreaterThanOrEqual(1);
      expect(await shownIds(page, byTeam)).toEqual(byTeam);
      expect(new Set(await page.locator('td[data-column="team"]').allInnerTexts())).toEqual(new Set(['opsb']));

      // Time range (slots, UTC): the dependency slots of the first business date.
      await page.goto(`${baseUrl}/instances`);
      await page.getByTestId('instance-table').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByLabel('Trigger').selectOption('dependency');
      const mids = await instances('task=grid_mid&trigger=dependency');
      const first = mids.find((i) => i.bizDate === DATES[0]);
      expect(first).toBeDefined();
      const from = first?.expectedTime ?? '';
      const to = new Date(new Date(from).getTime() + 60_000).toISOString();
      await page.getByLabel('Slot from (UTC)').fill(from.slice(0, 16));
      await page.getByLabel('Slot before (UTC)').fill(to.slice(0, 16));
      await page.locator('input[type="submit"][value="Filter"]').click();
      await page.waitForURL(/\/instances\?trigger=dependency&from=.*&to=/);
      const fromIso = new Date(`${from.slice(0, 16)}:00.000Z`).toISOString();
      const toIso = new Date(`${to.slice(0, 16)}:00.000Z`).toISOString();
      const byRange = await ids(`trigger=dependency&from=${encodeURIComponent(fromIso)}&to=${encodeURIComponent(toIso)}`);
      expect(byRange).toContain(first?.id);
      expect(await shownIds(page, byRange)).toEqual(byRange);
      // The filters are kept in the URL: a reload shows the same list.
      await page.reload();
      expect(await shownIds(page, byRange)).toEqual(byRange);

      // Local time beside UTC, in the browser's zone.
      const slot = await page.locator(`tr[data-instance="${first?.id ?? ''}"] td[data-column="slot"]`).innerText();
      expect(slot).toContain(`${from.slice(0, 10)} ${from.slice(11, 19)} UTC`);
      expect(slot).toContain(localText(from));
      await shot(page, 'instances-filtered');

      // A bad filter value is refused by the API with the parameter named; the page shows it.
      await page.goto(`${baseUrl}/instances?trigger=cron`);
      await page.locator('.error-line').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('.error-line').innerText()).toMatch(/trigger/);
      const bad = await call('GET', '/api/v1/instances?trigger=cron');
      expect(bad.status).toBe(400);
      expect(problems.filter((p) => !/status of 400/.test(p))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('cancels a selection after listing it, and reruns a selection after a dry run, showing each result', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 }, timezoneId: BROWSER_ZONE });
    const { page, problems } = await openPage(context);
    try {
      const slow = [await api<InstanceRow>('POST', '/api/v1/tasks/ops_slow/trigger', {}), await api<InstanceRow>('POST', '/api/v1/tasks/ops_slow/trigger', {})];
      const done = (await instances('task=ops_b_job'))[0];
      expect(done?.state).toBe('SUCCESS');
      await signIn(page, operatorToken);
      await page.goto(`${baseUrl}/instances?team=opsb`);
      await page.getByTestId('instance-table').waitFor({ timeout: UI_TIMEOUT_MS });
      for (const i of slow) await page.locator(`input[data-select="${i.id}"]`).check();
      await page.locator(`input[data-select="${done?.id ?? ''}"]`).check();
      expect(await page.getByTestId('selected-count').innerText()).toBe('3');

      // Cancel: the two slow ones are listed; the finished one is left out, saying why.
      await page.getByTestId('bulk-cancel').click();
      const cancel = page.getByTestId('bulk-cancel-dialog');
      await cancel.waitFor();
      expect((await attributes(cancel.getByTestId('bulk-cancel-list').locator('li'), 'data-instance')).sort()).toEqual(slow.map((i) => i.id).sort());
      expect(await cancel.getByTestId('bulk-skipped').innerText()).toContain(`#${done?.id ?? ''}`);
      expect(await cancel.getByTestId('bulk-skipped').innerText()).toContain('already final');
      expect((await instances('task=ops_slow')).every((i) => i.state !== 'CANCELED')).toBe(true); // nothing yet
      await shot(page, 'bulk-cancel');
      await cancel.getByTestId('bulk-confirm').click();
      await cancel.getByTestId('bulk-results').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await attributes(cancel.getByTestId('bulk-results').locator('li'), 'data-ok')).toEqual(['true', 'true']);
      expect(await cancel.getByTestId('bulk-results').innerText()).toContain('now CANCELED');
      expect((await instances('task=ops_slow')).map((i) => i.state)).toEqual(['CANCELED', 'CANCELED']);
      await cancel.getByRole('button', { name: 'Close', exact: true }).last().click();

      // Rerun: the two grid_root instances of the first dates, and a canceled one; a dry run first.
      const roots = (await instances('task=grid_root')).filter((i) => i.bizDate !== DATES[2]);
      expect(roots).toHaveLength(2);
      await page.goto(`${baseUrl}/instances?task=grid_root`);
      await page.getByTestId('instance-table').waitFor({ timeout: UI_TIMEOUT_MS });
      for (const i of roots) await page.locator(`input[data-select="${i.id}"]`).check();
      await page.getByTestId('bulk-rerun').click();
      const rerun = page.getByTestId('bulk-rerun-dialog');
      await rerun.waitFor();
      expect(await rerun.getByTestId('bulk-confirm').count()).toBe(0); // no rerun before the dry run
      await rerun.locator('input[name="reason"]').fill('ops test: bulk rerun');
      await rerun.getByRole('button', { name: 'Preview (dry run)' }).click();
      const plan = rerun.getByTestId('bulk-plan');
      await plan.waitFor({ timeout: UI_TIMEOUT_MS });
      expect((await attributes(plan.locator('li'), 'data-instance')).sort()).toEqual(roots.map((i) => i.id).sort());
      expect(await attributes(plan.locator('li'), 'data-ok')).toEqual(['true', 'true']);
      expect(await plan.innerText()).toContain('rerun grid_root');
      expect((await instances('task=grid_root')).map((i) => i.runNo)).toEqual([1, 1, 1]); // the dry run changed nothing
      await shot(page, 'bulk-rerun-plan');
      await rerun.getByTestId('bulk-confirm').click();
      await rerun.getByTestId('bulk-results').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await attributes(rerun.getByTestId('bulk-results').locator('li'), 'data-ok')).toEqual(['true', 'true']);
      expect(await rerun.getByTestId('bulk-results').innerText()).toContain('rerun started');
      await waitFor(async () => (await instances('task=grid_root')).filter((i) => i.runNo === 2).length === 2, {
        description: 'both selected instances are on run 2',
        timeoutMs: UI_TIMEOUT_MS,
      });
      const reran = (await instances('task=grid_root')).filter((i) => i.runNo === 2).map((i) => i.id).sort();
      expect(reran).toEqual(roots.map((i) => i.id).sort());
      await rerun.getByRole('button', { name: 'Close', exact: true }).last().click();

      // A rerun of an instance that is not final fails, and the failure is named.
      const running = await api<InstanceRow>('POST', '/api/v1/tasks/ops_slow/trigger', {});
      await waitFor(async () => (await instances('task=ops_slow')).find((i) => i.id === running.id)?.state === 'RUNNING', { description: 'ops_slow runs', timeoutMs: UI_TIMEOUT_MS });
      await page.goto(`${baseUrl}/instances?task=ops_slow`);
      await page.getByTestId('instance-table').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.locator(`input[data-select="${running.id}"]`).check();
      await page.getByTestId('bulk-rerun').click();
      await rerun.waitFor();
      expect(await rerun.getByTestId('bulk-skipped').innerText()).toContain('RUNNING: not final');
      await rerun.getByRole('button', { name: 'Back', exact: true }).click();
      await api('POST', `/api/v1/instances/${running.id}/cancel`);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 150_000);

  it('offers a viewer no bulk action and no dead letters, and the API refuses them', async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 }, timezoneId: BROWSER_ZONE });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, viewerToken);
      expect(await page.getByRole('link', { name: 'Dead letters' }).count()).toBe(0);
      expect(await page.getByRole('link', { name: 'Alerts', exact: true }).count()).toBe(1);
      await page.goto(`${baseUrl}/instances`);
      await page.getByTestId('instance-table').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('input[data-select], [data-testid="select-all"], [data-testid="bulk-bar"]').count()).toBe(0);
      // The URL typed by hand: told it needs an operator; the API answers 403.
      await page.goto(`${baseUrl}/dead-letters`);
      await page.getByTestId('needs-operator').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('dead-letter-table').count()).toBe(0);
      expect((await call('GET', '/api/v1/dead-letters', undefined, viewerToken)).status).toBe(403);
      const final = (await instances('task=grid_leaf'))[0];
      expect((await call('POST', '/api/v1/reruns', { mode: 'instance', instanceId: final?.id, reason: 'viewer', dryRun: true }, viewerToken)).status).toBe(403);
      expect((await call('POST', `/api/v1/instances/${final?.id ?? ''}/cancel`, {}, viewerToken)).status).toBe(403);
      // The viewer still reads alerts and the grid.
      await page.goto(`${baseUrl}/alerts?kind=FINAL_FAILURE`);
      await page.getByTestId('alert-table').waitFor({ timeout: UI_TIMEOUT_MS });
      await shot(page, 'viewer-dead-letters');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('fits a phone (390 px): the nav of twelve links stays usable, tables scroll in their own box', async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2, timezoneId: BROWSER_ZONE });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, ADMIN_TOKEN);
      // Every link of the navigation is on screen and can be tapped.
      const links = page.locator('.topbar .nav-links a');
      expect(await links.count()).toBe(12); // with Calendars and Admin (API tokens, worker enrollments), #47
      for (const link of await links.all()) {
        const box = await link.boundingBox();
        expect(box).not.toBeNull();
        expect((box?.x ?? -1) >= 0 && (box?.x ?? 0) + (box?.width ?? Infinity) <= 390).toBe(true);
        expect(box?.height ?? 0).toBeGreaterThanOrEqual(18);
      }
      await expectNoSidewaysScroll(page);
      await shot(page, 'phone-nav');
      await page.locator('.topbar .nav-links a', { hasText: 'Alerts' }).tap();
      await page.getByTestId('alert-table').waitFor({ timeout: UI_TIMEOUT_MS });
      await expectNoSidewaysScroll(page);
      await shot(page, 'phone-alerts');
      await page.goto(`${baseUrl}/dead-letters`);
      await page.getByTestId('dead-letter-table').waitFor({ timeout: UI_TIMEOUT_MS });
      await expectNoSidewaysScroll(page);
      await shot(page, 'phone-dead-letters');
      await page.goto(`${baseUrl}/dag/grid?root=grid_root`);
      await page.getByTestId('dag-grid').waitFor({ timeout: UI_TIMEOUT_MS });
      await expectNoSidewaysScroll(page);
      await shot(page, 'phone-dag-grid');
      await page.goto(`${baseUrl}/instances?team=opsb`);
      await page.getByTestId('instance-table').waitFor({ timeout: UI_TIMEOUT_MS });
      await expectNoSidewaysScroll(page);
      const bulk = await page.getByTestId('bulk-cancel').boundingBox();
      expect((bulk?.x ?? 0) + (bulk?.width ?? Infinity)).toBeLessThanOrEqual(390);
      await shot(page, 'phone-instances');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
