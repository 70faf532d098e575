// The console of a team token in a real browser (Debian's chromium driven by playwright-core,
// headless) against a real admin-api process on MariaDB, Redis and RabbitMQ: two teams, a
// viewer of one of them. It sees its teams in the header, a Team column and a team filter on
// the Tasks and Instances lists, the team on the task page, and nothing of the other team.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { dumpAllProcessOutput } from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { startAdminAlone, type AdminAlone } from './admin-alone.js';
import { ARTIFACTS, noChromium } from './chromium.js';

const ADMIN_TOKEN = `axt_teams_admin_${Math.random().toString(36).slice(2)}`;
const UI_TIMEOUT_MS = 30_000;


let stack: AdminAlone | undefined;
let baseUrl = '';
let paymentsViewer = '';

async function api<T = Record<string, unknown>>(method: 'GET' | 'POST', path: string, body?: unknown, token = ADMIN_TOKEN): Promise<T> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text === '' ? {} : JSON.parse(text)) as T;
}

/** The text of every cell of one column (`data-column`) of a table, in row order. */
async function column(page: Page, table: string, name: string): Promise<string[]> {
  return page.getByTestId(table).locator(`tbody td[data-column="${name}"]`).allInnerTexts();
}

beforeAll(async () => {
  if (noChromium) return;
  stack = await startAdminAlone('axuit', ADMIN_TOKEN);
  baseUrl = stack.baseUrl;
  for (const team of ['payments', 'orders', 'search']) await api('POST', '/api/v1/teams', { name: team, description: `the ${team} team` });
  const job = (name: string, team: string) => ({ name, team, schedule: { type: 'none' }, exec: { type: 'shell', command: ['echo', name] } });
  for (const [name, team] of [['pay_settle', 'payments'], ['pay_refunds', 'payments'], ['ord_export', 'orders'], ['search_index', 'search']] as const) {
    await api('POST', '/api/v1/tasks', job(name, team));
  }
  // No scheduler or broker runs: the triggered instances wait PENDING, which is all the lists need.
  for (const name of ['pay_settle', 'pay_refunds', 'ord_export', 'search_index']) await api('POST', `/api/v1/tasks/${name}/trigger`, {});
  paymentsViewer = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'payments-orders-viewer', role: 'viewer', teams: ['payments', 'orders'] })).token;
}, 120_000);

afterAll(async () => {
  await stack?.close();
}, 60_000);

describe.skipIf(noChromium)('the console of a team token', () => {
  it("#18 console: a token of two teams sees its teams, a Team column and filter, and nothing of a third team", async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (stack as AdminAlone).browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
    });
    try {
      await page.goto(`${baseUrl}/`);
      await page.locator('input[name="token"]').fill(paymentsViewer);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByTestId('who').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('who-teams').innerText()).toBe('teams: payments, orders');

      // Tasks: a Team column; the other team's task is not listed; the filter offers the token's teams only.
      await page.getByRole('link', { name: 'Tasks', exact: true }).click();
      await page.locator('tr[data-task="ord_export"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('task-table').locator('thead th').allInnerTexts()).toContain('team');
      const rows = await page.getByTestId('task-table').locator('tbody tr').all();
      expect(await Promise.all(rows.map((r) => r.getAttribute('data-task')))).toEqual(['ord_export', 'pay_refunds', 'pay_settle']);
      expect(await column(page, 'task-table', 'team')).toEqual(['orders', 'payments', 'payments']);
      expect(await page.locator('tr[data-task="search_index"]').count()).toBe(0);
      const filter = page.getByTestId('team-filter');
      await filter.locator('option[value="payments"]').waitFor({ state: 'attached', timeout: UI_TIMEOUT_MS });
      expect(await filter.locator('option').allInnerTexts()).toEqual(['all my teams', 'orders', 'payments']);
      await filter.selectOption('payments');
      await page.waitForURL('**/tasks?team=payments');
      await page.locator('tr[data-task="ord_export"]').waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
      await page.locator('tr[data-task="pay_settle"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await column(page, 'task-table', 'team')).toEqual(['payments', 'payments']);
      await page.screenshot({ path: join(ARTIFACTS, 'teams-tasks.png'), fullPage: true });

      // A team the token does not cover, typed into the URL, lists nothing (the API answers an empty list).
      await page.goto(`${baseUrl}/tasks?team=search`);
      await page.getByText('No tasks in team search.').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('tr[data-task="search_index"]').count()).toBe(0);

      // The task page shows its team; the other team's task is not found.
      await page.goto(`${baseUrl}/tasks/pay_settle`);
      await page.getByTestId('task-team').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('task-team').innerText()).toBe('team payments');
      await page.goto(`${baseUrl}/tasks/search_index`);
      await page.locator('.error-line').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('.error-line').innerText()).toMatch(/does not exist/);

      // Instances: a Team column and the team filter (kept in the URL).
      await page.goto(`${baseUrl}/instances`);
      await page.getByTestId('instance-table').waitFor({ timeout: UI_TIMEOUT_MS });
      expect((await column(page, 'instance-table', 'team')).sort()).toEqual(['orders', 'payments', 'payments']);
      await page.getByTestId('team-filter').locator('option[value="orders"]').waitFor({ state: 'attached', timeout: UI_TIMEOUT_MS });
      await page.getByTestId('team-filter').selectOption('orders');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL('**/instances?team=orders');
      await page.getByTestId('instance-table').locator('tbody tr').nth(1).waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
      await page.getByTestId('instance-table').locator('tbody tr').first().waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await column(page, 'instance-table', 'team')).toEqual(['orders']);
      await page.screenshot({ path: join(ARTIFACTS, 'teams-instances.png'), fullPage: true });

      // The admin token (every team) is told so, and sees the third team too.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.locator('input[name="token"]').fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByTestId('who-teams').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('who-teams').innerText()).toBe('all teams');
      await page.goto(`${baseUrl}/tasks`);
      await page.locator('tr[data-task="search_index"] td[data-column="team"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('tr[data-task="search_index"] td[data-column="team"]').innerText()).toBe('search');

      // A 404 of the other team's task is the one console error line the browser logs; nothing else.
      expect(problems.filter((p) => !/status of 404/.test(p))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('#47 console: a token of one team starts a new task in its team (not `default`, which it does not cover) and creates it', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const operator = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'payments-operator', role: 'operator', teams: ['payments'] })).token;
    const context = await (stack as AdminAlone).browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await page.goto(`${baseUrl}/`);
      await page.locator('input[name="token"]').fill(operator);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByTestId('who').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.goto(`${baseUrl}/tasks/new`);
      const editor = page.locator('textarea[name="yaml"]');
      await editor.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await editor.inputValue()).toMatch(/^team: payments$/m);
      await editor.fill((await editor.inputValue()).replace('name: my_task', 'name: pay_from_template'));
      await page.locator('[data-action="create"]').click();
      await page.waitForURL(/\/tasks\/pay_from_template$/, { timeout: UI_TIMEOUT_MS });
      expect((await api<{ team: string }>('GET', '/api/v1/tasks/pay_from_template')).team).toBe('payments');

      // #47: disabling asks why (the reason goes to the audit); a disabled task says it fires nothing.
      page.once('dialog', (dialog) => void dialog.accept('paused for the ledger migration'));
      await page.locator('[data-action="disable"]').click();
      await page.getByTestId('disabled-fires').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('disabled-fires').innerText()).toMatch(/^Disabled: it fires nothing until it is enabled\./);
      expect(await page.getByTestId('fire-times').getAttribute('data-enabled')).toBe('false');
      const audit = await api<{ items: Array<{ action: string; target: string; reason: string | null }> }>('GET', '/api/v1/audit?limit=20');
      expect(audit.items.find((e) => e.action === 'task.disable' && e.target === 'task:pay_from_template')?.reason).toBe('paused for the ledger migration');
      // Cancelling the question changes nothing.
      page.once('dialog', (dialog) => void dialog.dismiss());
      await page.locator('[data-action="enable"]').click();
      expect((await api<{ enabled: boolean }>('GET', '/api/v1/tasks/pay_from_template')).enabled).toBe(false);
    } finally {
      await context.close();
    }
  }, 120_000);
});
