// #45 in the console: a team's weight (its share of contended slots, R23), run limit and HTTP
// allowlist, in a real browser (Debian's chromium driven by playwright-core, headless) against a
// real admin-api process on MariaDB, Redis and RabbitMQ. An admin of every team sets a weight
// and the API reads it back; a weight the API refuses shows the API's message at the field and
// changes nothing; a viewer reads the settings with nothing to edit.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { dumpAllProcessOutput } from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { startAdminAlone, signIn as signInAt, type AdminAlone } from './admin-alone.js';
import { ARTIFACTS, noChromium } from './chromium.js';

const ADMIN_TOKEN = `axt_weight_admin_${Math.random().toString(36).slice(2)}`;
const UI_TIMEOUT_MS = 30_000;
/** A webhook whose path is its secret: whole to an admin, `https://hooks.example.com/***` to others. */
const ROUTE = 'https://hooks.example.com/services/T000/B000/secret';

let stack: AdminAlone | undefined;
let baseUrl = '';
let viewer = '';

interface TeamBody {
  name: string;
  weight: number;
  maxRunning: number | null;
  httpAllow: string[] | null;
}

/** One request as the admin (or `token`); the status and the parsed answer. */
async function call(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, token = ADMIN_TOKEN): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown> };
}

async function api(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await call(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The team as the API reads it now. */
async function teamOf(name: string): Promise<TeamBody> {
  const page = (await api('GET', '/api/v1/teams?limit=500')) as unknown as { items: TeamBody[] };
  const team = page.items.find((t) => t.name === name);
  if (team === undefined) throw new Error(`team ${name} not listed`);
  return team;
}

async function signIn(page: Page, token: string): Promise<void> {
  await signInAt(page, baseUrl, token, UI_TIMEOUT_MS);
}

beforeAll(async () => {
  if (noChromium) return;
  stack = await startAdminAlone('axuiw', ADMIN_TOKEN);
  baseUrl = stack.baseUrl;
  await api('POST', '/api/v1/teams', { name: 'payments', description: 'the payments team', alertRoutes: [{ url: ROUTE, format: 'slack' }] });
  await api('POST', '/api/v1/teams', { name: 'search', description: 'the search team' });
  viewer = ((await api('POST', '/api/v1/tokens', { name: 'payments-viewer', role: 'viewer', teams: ['payments'] })) as { token: string }).token;
}, 120_000);

afterAll(async () => {
  await stack?.close();
}, 60_000);

describe.skipIf(noChromium)("a team's settings in the console", () => {
  it('#45 console: an admin sets a team\'s weight and the API reads it back; a weight the API refuses is shown at the field and changes nothing; a viewer only reads', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (stack as AdminAlone).browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    try {
      await signIn(page, ADMIN_TOKEN);
      await page.getByRole('link', { name: 'Teams', exact: true }).click();
      const row = page.locator('tr[data-team="payments"]');
      await row.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await row.locator('td[data-column="weight"]').innerText()).toBe('1');
      expect(await row.locator('td[data-column="httpAllow"]').innerText()).toBe('global list');
      expect(await row.locator('td[data-column="alertRoutes"]').innerText()).toBe(`slack ${ROUTE}`);

      // Weight 3 and a run limit: saved, shown, and what the API now says.
      await row.locator('button[data-action="edit"]').click();
      const form = page.getByTestId('team-form');
      await form.locator('input[name="weight"]').fill('3');
      await form.locator('input[name="maxRunning"]').fill('20');
      await form.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Saved team payments').waitFor({ timeout: UI_TIMEOUT_MS });
      await row.locator('td[data-column="weight"]', { hasText: '3' }).waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await row.locator('td[data-column="maxRunning"]').innerText()).toBe('20');
      expect(await teamOf('payments')).toMatchObject({ weight: 3, maxRunning: 20, httpAllow: null });
      expect((await teamOf('search')).weight).toBe(1);
      await page.screenshot({ path: join(ARTIFACTS, 'team-settings.png'), fullPage: true });

      // Weight 0: the API's 400 names the field; the console shows its message there.
      const refused = await call('PATCH', '/api/v1/teams/payments', { weight: 0 });
      expect(refused.status).toBe(400);
      const issues = (refused.body.error as { details: { issues: Array<{ path: string; message: string }> } }).details.issues;
      expect(issues.map((i) => i.path)).toEqual(['weight']);
      await row.locator('button[data-action="edit"]').click();
      await form.locator('input[name="weight"]').fill('0');
      await form.getByRole('button', { name: 'Save' }).click();
      const fieldError = form.locator('[data-field-error="weight"]');
      await fieldError.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await fieldError.innerText()).toBe(issues[0]?.message);
      expect(await form.locator('input[name="weight"]').getAttribute('aria-invalid')).toBe('true');
      expect(await form.locator('.error-line').count()).toBe(0);
      await page.screenshot({ path: join(ARTIFACTS, 'team-settings-error.png'), fullPage: true });
      expect((await teamOf('payments')).weight).toBe(3);
      await form.getByRole('button', { name: 'Cancel' }).click();
      await form.waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });

      // A viewer of payments sees its weight and nothing to edit, and no other team.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await signIn(page, viewer);
      await page.goto(`${baseUrl}/teams`);
      await row.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await row.locator('td[data-column="weight"]').innerText()).toBe('3');
      expect(await page.locator('button[data-action="edit"]').count()).toBe(0);
      expect(await row.locator('td[data-column="alertRoutes"]').innerText()).toBe('slack https://hooks.example.com/***');
      expect(await page.locator('tr[data-team="search"]').count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
  it('#47 console: an admin of every team creates a team, sets its alert routes, and deletes one that owns no task (one with tasks is refused with the API\'s message); reads and rotates a team\'s executor key', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    await api('POST', '/api/v1/tasks', { name: 'pay_owned', team: 'payments', schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] } });
    const context = await (stack as AdminAlone).browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    try {
      await signIn(page, ADMIN_TOKEN);
      await page.goto(`${baseUrl}/teams`);
      const create = page.getByTestId('team-create-form');
      await create.waitFor({ timeout: UI_TIMEOUT_MS });
      await create.locator('input[name="name"]').fill('sandbox');
      await create.locator('input[name="description"]').fill('for trying things');
      await create.getByRole('button', { name: 'Create team' }).click();
      await page.getByText('Created team sandbox').waitFor({ timeout: UI_TIMEOUT_MS });
      const row = page.locator('tr[data-team="sandbox"]');
      await row.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await row.locator('td[data-column="description"]').innerText()).toBe('for trying things');
      expect((await teamOf('sandbox')).weight).toBe(1);
      expect(await page.locator('tr[data-team="default"] button[data-action="delete"]').count()).toBe(0);

      // Its alert routes, one a line as axctl takes them; a format the API refuses is shown at the field.
      await row.locator('button[data-action="edit"]').click();
      const form = page.getByTestId('team-form');
      await form.locator('textarea[name="alertRoutes"]').fill('https://hooks.slack.com/services/T1/B1/s format=teams');
      await form.getByRole('button', { name: 'Save' }).click();
      await form.locator('[data-field-error="alertRoutes"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await form.locator('textarea[name="alertRoutes"]').fill('https://hooks.slack.com/services/T1/B1/s format=slack kinds=FINAL_FAILURE\nhttps://ops.example.com/ax');
      await form.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Saved team sandbox').waitFor({ timeout: UI_TIMEOUT_MS });
      const routes = ((await call('GET', '/api/v1/teams?limit=500')).body.items as Array<{ name: string; alertRoutes: unknown }>).find((x) => x.name === 'sandbox')?.alertRoutes;
      expect(routes).toEqual([
        { url: 'https://hooks.slack.com/services/T1/B1/s', format: 'slack', kinds: ['FINAL_FAILURE'] },
        { url: 'https://ops.example.com/ax', format: 'generic' },
      ]);

      await row.locator('button[data-action="delete"]').click();
      await row.getByRole('button', { name: 'Delete sandbox' }).click();
      await page.getByText('Deleted team sandbox').waitFor({ timeout: UI_TIMEOUT_MS });
      await row.waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
      expect((await call('GET', '/api/v1/teams?limit=500')).body.items).not.toContainEqual(expect.objectContaining({ name: 'sandbox' }));

      const owner = page.locator('tr[data-team="payments"]');
      await owner.locator('button[data-action="delete"]').click();
      await owner.getByRole('button', { name: 'Delete payments' }).click();
      const refused = page.locator('.error-line');
      await refused.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await refused.innerText()).toMatch(/payments/);
      expect(await teamOf('payments')).toMatchObject({ name: 'payments' });
      await page.screenshot({ path: join(ARTIFACTS, 'team-create-delete.png'), fullPage: true });

      // The team's executor key, shown once on request (what the API derives), and a rotation.
      await owner.locator('button[data-action="executor-key"]').click();
      const secret = page.getByTestId('secret');
      await secret.waitFor({ timeout: UI_TIMEOUT_MS });
      const current = (await call('GET', '/api/v1/teams/payments/executor-key')).body as { key: string; keyVersion: number };
      expect(await secret.innerText()).toBe(current.key);
      await page.getByText(`Executor key of team payments, version ${current.keyVersion}`).waitFor({ timeout: UI_TIMEOUT_MS });
      await owner.locator('button[data-action="rotate key"]').click();
      await owner.getByRole('button', { name: 'Rotate the key of payments' }).click();
      await page.getByText(`Executor key of team payments, version ${current.keyVersion + 1}`).waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await secret.innerText()).toBe(((await call('GET', '/api/v1/teams/payments/executor-key')).body as { key: string }).key);
      expect(await secret.innerText()).not.toBe(current.key);
      await owner.locator('td[data-column="keyVersion"]', { hasText: String(current.keyVersion + 1) }).waitFor({ timeout: UI_TIMEOUT_MS });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
