// #47 in the console: an alert's delivery as it really went. Real broker, worker and admin-api
// processes on MariaDB, Redis and RabbitMQ, no platform webhook (no AX_ALERT_WEBHOOK_URL), and
// three teams whose tasks fail for good (FINAL_FAILURE alerts): `quiet` has no alertRoutes, so
// its alert shows delivery "not configured" (only logged), never "sent"; `solo` has one route,
// a webhook of the test's own that answers 200: "sent"; `loud` has that webhook and one nobody
// listens on: "failed", with a line per route (the webhook's "sent", the dead one's "failed"
// and its error). The page's Delivery filter finds the not-configured one alone. Debian's
// chromium via playwright-core; screenshots test/browser/artifacts/alert-delivery-*.png.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
import { signIn as signInAt } from './admin-alone.js';
import { ARTIFACTS, CHROMIUM, CHROMIUM_FLAGS, attributes, docsShots, noChromium, openPage } from './chromium.js';

const ADMIN_TOKEN = `axt_alertdel_admin_${Math.random().toString(36).slice(2)}`;
const UI_TIMEOUT_MS = 45_000;
/** A port nothing listens on (discard): the `loud` team's second route fails there. */
const DEAD_ROUTE = 'http://127.0.0.1:9/dead-hook';

const ns = uniqueNamespace('axald');
const dataDir = mkdtempSync(join(tmpdir(), 'ax-alert-delivery-'));
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
let browser: Browser | undefined;
let baseUrl = '';
let operatorToken = '';
/** The test's webhook: answers 200 and keeps what it was sent. */
let hook: Server | undefined;
let hookUrl = '';
const received: Array<{ text?: string }> = [];

interface AlertRow {
  id: string;
  kind: string;
  taskName?: string;
  team?: string;
  delivery: string;
  attempts: number;
  routes: Array<{ route: string; target: string; format: string; state: string; attempts: number; lastError: string | null }>;
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



/** The FINAL_FAILURE alert of `task` once its delivery is `delivery`. */
async function alertOf(task: string, delivery: string): Promise<AlertRow> {
  return waitFor(
    async () => {
      const alert = (await api<{ items: AlertRow[] }>('GET', `/api/v1/alerts?kind=FINAL_FAILURE&task=${task}`)).items[0];
      return alert?.delivery === delivery ? alert : undefined;
    },
    { description: `the FINAL_FAILURE alert of ${task}, delivery ${delivery}`, timeoutMs: 60_000, intervalMs: 250 },
  );
}

const shell = (script: string) => ({ type: 'shell', command: ['sh', '-c', script] });
const noRetry = { max: 0, backoffSeconds: 0, factor: 1, jitterSeconds: 0 };

beforeAll(async () => {
  if (noChromium) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  hook = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push(JSON.parse(body) as { text?: string });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => hook?.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
  db = await createTestDatabase();
  redis = await createTestRedis(ns);
  amqp = await createTestAmqp(ns);
  const env = { AX_MYSQL_URL: db.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'warn', AX_EXECUTOR_SECRET: 'alert-delivery-secret-0123456789', AX_WORKER_DATA_DIR: dataDir };
  // No AX_ALERT_WEBHOOK_URL: only a team's own routes, if any, take its alerts.
  await startService('broker', { env });
  await startService('worker', { env: { ...env, AX_WORKER_ID: 'alert-delivery-w1', AX_WORKER_SLOTS: '4' } });
  const admin = await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } });
  baseUrl = admin.baseUrl;
  const root = await fetch(`${baseUrl}/`);
  if (root.status !== 200) throw new Error(`GET / answered ${root.status}: ${await root.text()} (build the console first)`);
  await api('POST', '/api/v1/teams', { name: 'quiet', description: 'no alert routes' });
  await api('POST', '/api/v1/teams', { name: 'solo', description: 'one working route', alertRoutes: [{ url: hookUrl, format: 'slack' }] });
  await api('POST', '/api/v1/teams', { name: 'loud', description: 'a working route and a dead one', alertRoutes: [{ url: hookUrl, format: 'slack' }, { url: DEAD_ROUTE, format: 'generic' }] });
  for (const team of ['quiet', 'solo', 'loud']) {
    await api('POST', '/api/v1/tasks', { name: `${team}_fail`, team, schedule: { type: 'none' }, exec: shell(`echo ${team} failing >&2; exit 3`), timeoutSeconds: 30, retry: noRetry });
    await api('POST', `/api/v1/tasks/${team}_fail/trigger`, {});
  }
  operatorToken = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'alert-delivery-operator', role: 'operator' })).token;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true, timeout: 30_000 });
}, 150_000);

afterAll(async () => {
  await browser?.close();
  await stopAllProcesses();
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  await new Promise<void>((resolve) => (hook === undefined ? resolve() : hook.close(() => resolve())));
  rmSync(dataDir, { recursive: true, force: true });
  assertNoLeftoverProcesses();
}, 60_000);

describe.skipIf(noChromium)('alert delivery in chromium', () => {
  it('shows "not configured" for an alert with no route, "sent" for a working route, and each route of a team whose second route fails', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const quiet = await alertOf('quiet_fail', 'not_configured');
    const solo = await alertOf('solo_fail', 'sent');
    const loud = await alertOf('loud_fail', 'failed');
    expect(quiet).toMatchObject({ team: 'quiet', attempts: 0, routes: [] });
    expect(solo.routes).toMatchObject([{ route: 'team', state: 'sent', format: 'slack' }]);
    expect(loud.routes.map((r) => `${r.target} ${r.state}`).sort()).toEqual([`${new URL(hookUrl).origin} sent`, 'http://127.0.0.1:9 failed']);
    // The webhook really got the two alerts of teams that route to it, and nothing of quiet's.
    const texts = received.map((b) => b.text ?? '');
    expect(texts.filter((t) => t.includes('solo_fail'))).toHaveLength(1);
    expect(texts.filter((t) => t.includes('loud_fail')).length).toBeGreaterThanOrEqual(1);
    expect(texts.filter((t) => t.includes('quiet_fail'))).toEqual([]);

    const context = await (browser as Browser).newContext({ viewport: { width: 1440, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      await signInAt(page, baseUrl, operatorToken, UI_TIMEOUT_MS);
      await page.getByRole('link', { name: 'Alerts', exact: true }).click();
      const quietRow = page.locator(`tr[data-alert="${quiet.id}"]`);
      const soloRow = page.locator(`tr[data-alert="${solo.id}"]`);
      const loudRow = page.locator(`tr[data-alert="${loud.id}"]`);
      await quietRow.waitFor({ timeout: UI_TIMEOUT_MS });
      await soloRow.waitFor({ timeout: UI_TIMEOUT_MS });
      await loudRow.waitFor({ timeout: UI_TIMEOUT_MS });

      // No route: "not configured", and why; never "sent".
      const quietDelivery = quietRow.locator('[data-delivery]');
      expect(await quietDelivery.getAttribute('data-delivery')).toBe('not_configured');
      expect((await quietDelivery.innerText()).trim()).toBe('not configured');
      expect(await quietRow.innerText()).toContain('no AX_ALERT_WEBHOOK_URL and no team route: only logged');
      expect(await quietRow.innerText()).not.toMatch(/\bsent\b/);
      expect(await quietRow.locator('[data-route-state]').count()).toBe(0);

      // One working route: "sent" after 1 attempt.
      expect(await soloRow.locator('[data-delivery]').getAttribute('data-delivery')).toBe('sent');
      expect((await soloRow.locator('[data-delivery]').innerText()).trim()).toBe('sent');
      expect(await soloRow.innerText()).toContain('1 attempt');

      // Two routes, one down: "failed", and a line per route saying how far each got.
      expect(await loudRow.locator('[data-delivery]').getAttribute('data-delivery')).toBe('failed');
      const routeLines = loudRow.locator('[data-route-state]');
      expect((await attributes(routeLines, 'data-route-state')).sort()).toEqual(['failed', 'sent']);
      const lines = await routeLines.allInnerTexts();
      expect(lines).toEqual(
        expect.arrayContaining([
          expect.stringMatching(new RegExp(`^team ${new URL(hookUrl).origin.replace(/\./g, '\\.')} \\(slack\\): sent, 1 attempt$`)),
          expect.stringMatching(/^team http:\/\/127\.0\.0\.1:9 \(generic\): failed, \d+ attempts? — .+/),
        ]),
      );
      // Neither route line shows the webhook's path (a webhook's path can be its secret).
      expect(lines.join('\n')).not.toContain('/hook');
      expect(lines.join('\n')).not.toContain('/dead-hook');
      await docsShots(page, 'alert-delivery', [1440]);

      // The Delivery filter: "not configured" finds quiet's alert alone.
      await page.getByLabel('Delivery').selectOption('not_configured');
      await page.locator('input[type="submit"][value="Filter"]').click();
      await page.waitForURL('**/alerts?delivery=not_configured');
      const rows = page.getByTestId('alert-table').locator('tbody tr');
      await waitFor(async () => JSON.stringify(await attributes(rows, 'data-alert')) === JSON.stringify([quiet.id]), {
        description: 'the filtered list holds only the not-configured alert',
        timeoutMs: UI_TIMEOUT_MS,
        intervalMs: 200,
      });
      expect(await attributes(rows, 'data-alert')).toEqual([quiet.id]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
