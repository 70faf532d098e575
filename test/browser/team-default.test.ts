// #47 in the console: a new task starts in the token's team. An operator whose token covers
// exactly one team (`payments`) opens **New task**: the YAML template says `team: payments` (not
// `default`, a team that token does not cover and the API would refuse), and saving the template
// as it is makes a task of payments. An operator of every team (`*`) gets `team: default`.
// Real admin-api process on MariaDB, Redis and RabbitMQ; Debian's chromium via playwright-core.
import type { Page } from 'playwright-core';
import { dumpAllProcessOutput } from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { startAdminAlone, signIn as signInAt, type AdminAlone } from './admin-alone.js';
import { docsShots, noChromium, openPage } from './chromium.js';

const ADMIN_TOKEN = `axt_teamdef_admin_${Math.random().toString(36).slice(2)}`;
const UI_TIMEOUT_MS = 30_000;

let stack: AdminAlone | undefined;
let baseUrl = '';
let paymentsOperator = '';
let everyTeamOperator = '';

async function api<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as T };
}

async function created<T>(path: string, body: unknown): Promise<T> {
  const res = await api<T>('POST', path, body);
  if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}


/** Signs in with `token` and opens New task from the task list; returns the template's text. */
async function newTaskTemplate(page: Page, token: string): Promise<string> {
  await signInAt(page, baseUrl, token, UI_TIMEOUT_MS);
  await page.getByRole('link', { name: 'Tasks', exact: true }).click();
  await page.locator('[data-action="new-task"]').click();
  await page.waitForURL(`${baseUrl}/tasks/new`);
  const yaml = page.locator('textarea[name="yaml"]');
  await yaml.waitFor({ timeout: UI_TIMEOUT_MS });
  return yaml.inputValue();
}

beforeAll(async () => {
  if (noChromium) return;
  stack = await startAdminAlone('axtdef', ADMIN_TOKEN);
  baseUrl = stack.baseUrl;
  await created('/api/v1/teams', { name: 'payments', description: 'the payments team' });
  await created('/api/v1/teams', { name: 'search', description: 'the search team' });
  paymentsOperator = (await created<{ token: string }>('/api/v1/tokens', { name: 'payments-operator', role: 'operator', teams: ['payments'] })).token;
  everyTeamOperator = (await created<{ token: string }>('/api/v1/tokens', { name: 'every-team-operator', role: 'operator' })).token;
}, 120_000);

afterAll(async () => {
  await stack?.close();
}, 60_000);

describe.skipIf(noChromium)('the new-task template starts in the token\'s team', () => {
  it('an operator of payments only gets team: payments and saves the template as it is', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (stack as AdminAlone).browser.newContext({ viewport: { width: 1440, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      const template = await newTaskTemplate(page, paymentsOperator);
      expect(template).toMatch(/^team: payments$/m);
      expect(template).not.toMatch(/^team: default$/m);
      await docsShots(page, 'new-task-team', [1440]);
      // Saved as it is, but for its name: a task of payments, opened after the save.
      await page.locator('textarea[name="yaml"]').fill(template.replace('name: my_task', 'name: pay_settle'));
      await page.locator('[data-action="create"]').click();
      await page.waitForURL(`${baseUrl}/tasks/pay_settle`, { timeout: UI_TIMEOUT_MS });
      await page.getByTestId('task-team').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('task-team').innerText()).toContain('payments');
      const task = await api<{ team: string; name: string }>('GET', '/api/v1/tasks/pay_settle');
      expect(task.status).toBe(200);
      expect(task.body).toMatchObject({ name: 'pay_settle', team: 'payments' });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('an operator of every team (*) gets team: default', async () => {
    const context = await (stack as AdminAlone).browser.newContext({ viewport: { width: 1440, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      const template = await newTaskTemplate(page, everyTeamOperator);
      expect(template).toMatch(/^team: default$/m);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
