// The console's API tokens, worker enrollments and calendars pages, and the audit log's field
// diff, in a real browser (issue #47 "every action in console and axctl"): Debian's chromium
// (playwright-core) against admin-api on MariaDB, Redis and RabbitMQ (admin-alone.ts). An admin
// of every team creates a token (its secret shown once works against the API, then revoked stops
// working), enrolls workers (the credential shown once authenticates at /workers/self until
// revoked); an operator of one team creates and edits a calendar of its team and sees no other
// team's; a viewer only reads; a team admin sees only its team's tokens and cannot offer "*".
// Screenshots at 1440 and 800 px go to test/browser/artifacts/ (and docs/images with
// AX_CONSOLE_DOCS_SCREENSHOT=1).
import type { BrowserContext, Page } from 'playwright-core';
import { dumpAllProcessOutput, waitFor } from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { signIn, startAdminAlone, type AdminAlone } from './admin-alone.js';
import { docsShots, expectNoSidewaysScroll, noChromium } from './chromium.js';

const ADMIN_TOKEN = `axt_adminpages_${Math.random().toString(36).slice(2)}`;
const UI_TIMEOUT_MS = 45_000;

let stack: AdminAlone | undefined;
let baseUrl = '';
const tokens = { payAdmin: '', payOperator: '', payViewer: '' };

async function call(method: string, path: string, body?: unknown, token = ADMIN_TOKEN): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

async function api<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await call(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as T;
}

async function open(width = 1440): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await (stack as AdminAlone).browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  return { context, page, problems };
}

beforeAll(async () => {
  if (noChromium) return;
  stack = await startAdminAlone('axadm', ADMIN_TOKEN);
  baseUrl = stack.baseUrl;
  for (const team of ['pay', 'ops']) await api('POST', '/api/v1/teams', { name: team, description: `the ${team} team` });
  tokens.payAdmin = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'pay-admin', role: 'admin', teams: ['pay'] })).token;
  tokens.payOperator = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'pay-operator', role: 'operator', teams: ['pay'] })).token;
  tokens.payViewer = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'pay-viewer', role: 'viewer', teams: ['pay'] })).token;
  await api('POST', '/api/v1/tokens', { name: 'ops-ci', role: 'operator', teams: ['ops'] });
  await api('PUT', '/api/v1/calendars/ops-freeze', { team: 'ops', timezone: 'UTC', dates: ['2026-12-24'] });
}, 120_000);

afterAll(async () => {
  // Revoke what is left live so admin-api deletes the enrollment's RabbitMQ and Redis users; close() then removes the rest.
  if (stack !== undefined) {
    const live = await api<{ items: Array<{ id: string }> }>('GET', '/api/v1/workers/enrollments').catch(() => ({ items: [] }));
    for (const e of live.items) await call('DELETE', `/api/v1/workers/enrollments/${e.id}`);
  }
  await stack?.close();
}, 60_000);

describe.skipIf(noChromium)('the admin pages of the console', () => {
  it('#47 API tokens: an admin creates one (the secret shown once works), revokes it (it stops working); a team admin sees its team only', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const { context, page, problems } = await open();
    try {
      await signIn(page, baseUrl, ADMIN_TOKEN, UI_TIMEOUT_MS);
      await page.locator('.topbar .nav-links a', { hasText: 'Admin' }).click();
      await page.waitForURL('**/admin/tokens');
      await page.locator('tr[data-token="ops-ci"]').waitFor({ timeout: UI_TIMEOUT_MS });

      const form = page.getByTestId('token-form');
      await form.locator('input[name="name"]').fill('ci-deploy');
      await form.locator('select[name="role"]').selectOption('operator');
      expect(await form.locator('input[name="teams"][value="*"]').isChecked()).toBe(true);
      await form.locator('input[name="teams"][value="pay"]').check();
      expect(await form.locator('input[name="teams"][value="*"]').isChecked()).toBe(false);
      await form.getByRole('button', { name: 'Create token' }).click();
      const secret = (await page.getByTestId('secret').innerText({ timeout: UI_TIMEOUT_MS })).trim();
      expect(secret).toMatch(/^axt_/);
      const who = await call('GET', '/api/v1/whoami', undefined, secret);
      expect(who.status).toBe(200);
      expect(who.body).toMatchObject({ name: 'ci-deploy', role: 'operator', teams: ['pay'] });
      const row = page.locator('tr[data-token="ci-deploy"]');
      await row.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await row.locator('td[data-column="teams"]').innerText()).toBe('pay');
      await docsShots(page, 'tokens');

      // The secret is not kept: gone once dismissed, and the list never has it.
      await page.getByRole('button', { name: 'I have stored it' }).click();
      expect(await page.getByTestId('secret-once').count()).toBe(0);
      expect(await page.content()).not.toContain(secret);

      // A name taken by a live token: the API's 409 shown.
      await form.locator('input[name="name"]').fill('ci-deploy');
      await form.getByRole('button', { name: 'Create token' }).click();
      await form.locator('.error-line').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await form.locator('.error-line').innerText()).toMatch(/ci-deploy|name/);

      // Revoke, after a confirm: the row says revoked and the secret no longer authenticates.
      await row.locator('[data-action="revoke"]').click();
      await row.locator('[data-action="confirm"]').click();
      await waitFor(async () => (await row.getAttribute('data-state')) === 'revoked', { description: 'ci-deploy revoked', timeoutMs: UI_TIMEOUT_MS });
      expect((await call('GET', '/api/v1/whoami', undefined, secret)).status).toBe(401);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }

    // A team admin: only its team's tokens, and no "*" to offer.
    const team = await open(800);
    try {
      await signIn(team.page, baseUrl, tokens.payAdmin, UI_TIMEOUT_MS);
      await team.page.goto(`${baseUrl}/admin/tokens`);
      await team.page.locator('tr[data-token="pay-viewer"]').waitFor({ timeout: UI_TIMEOUT_MS });
      const names = await team.page.getByTestId('token-table').locator('td[data-column="name"]').allInnerTexts();
      expect(names).not.toContain('ops-ci');
      const boxes = await team.page.getByTestId('teams-picker').locator('input[name="teams"]').all();
      const choices = await Promise.all(boxes.map((b) => b.getAttribute('value')));
      expect(choices).toEqual(['pay']);
      expect(team.problems).toEqual([]);
    } finally {
      await team.context.close();
    }
  }, 120_000);

  it('#47 worker enrollments: an admin enrolls a pool (the credential shown once authenticates), revokes it (it stops)', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const { context, page, problems } = await open();
    try {
      await signIn(page, baseUrl, ADMIN_TOKEN, UI_TIMEOUT_MS);
      await page.goto(`${baseUrl}/admin/tokens`);
      await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Worker enrollments' }).click();
      await page.waitForURL('**/admin/enrollments');
      const form = page.getByTestId('enrollment-form');
      await form.locator('input[name="name"]').fill('pay-pool');
      await form.locator('input[name="tags"]').fill('gpu, linux');
      await form.locator('input[name="teams"][value="pay"]').check();
      await form.getByRole('button', { name: 'Create enrollment' }).click();
      const credential = (await page.getByTestId('secret').innerText({ timeout: UI_TIMEOUT_MS })).trim();
      expect(credential).toMatch(/^axw_enr-[a-z0-9]{12}_/);
      const self = await call('GET', '/api/v1/workers/self', undefined, credential);
      expect(self.status).toBe(200);
      const row = page.locator('tr[data-enrollment="pay-pool"]');
      await row.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await row.locator('td[data-column="teams"]').innerText()).toBe('pay');
      expect(await row.locator('td[data-column="tags"]').innerText()).toMatch(/gpu\s*linux/);
      await docsShots(page, 'enrollments');
      await page.getByRole('button', { name: 'I have stored it' }).click();

      await row.locator('[data-action="revoke"]').click();
      await row.locator('[data-action="confirm"]').click();
      await row.waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
      expect((await call('GET', '/api/v1/workers/self', undefined, credential)).status).toBe(401);
      await page.getByTestId('enrollment-state').selectOption('revoked');
      await page.locator('tr[data-enrollment="pay-pool"][data-state="revoked"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('#47 calendars: an operator of one team creates and edits one of its team, sees no other team\'s; a viewer only reads; an admin deletes', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const { context, page, problems } = await open();
    try {
      await signIn(page, baseUrl, tokens.payOperator, UI_TIMEOUT_MS);
      expect(await page.locator('.topbar .nav-links a', { hasText: 'Admin' }).count()).toBe(0);
      await page.locator('.topbar .nav-links a', { hasText: 'Calendars' }).click();
      await page.getByText('No calendars.').waitFor({ timeout: UI_TIMEOUT_MS }); // ops-freeze is another team's
      await page.locator('[data-action="new-calendar"]').click();
      const form = page.getByTestId('calendar-form');
      await form.locator('input[name="name"]').fill('pay-holidays');
      expect(await form.locator('select[name="team"] option').allInnerTexts()).toEqual(['pay']);
      await form.locator('input[name="timezone"]').fill('Europe/Paris');
      await form.locator('textarea[name="dates"]').fill('2026-12-25\n2027-01-01');
      await form.getByRole('button', { name: 'Create calendar' }).click();
      await page.waitForURL('**/calendars/pay-holidays');
      const view = page.getByTestId('calendar-view');
      await view.getByTestId('calendar-dates').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await view.getByTestId('calendar-dates').locator('li').allInnerTexts()).toEqual(['2026-12-25', '2027-01-01']);
      expect(await view.locator('[data-action="delete"]').count()).toBe(0); // deleting needs an admin

      // Edit: a date added, a bad one refused at the field the API names.
      await view.locator('[data-action="edit"]').click();
      const edit = page.getByTestId('calendar-form');
      await edit.locator('textarea[name="dates"]').fill('2026-12-25\n2027-01-01\n2027-13-01');
      await edit.getByRole('button', { name: 'Save' }).click();
      await edit.locator('.error-line').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await edit.locator('.error-line').innerText()).toMatch(/dates/);
      await edit.locator('textarea[name="dates"]').fill('2026-12-25\n2027-01-01\n2027-05-01');
      await edit.getByRole('button', { name: 'Save' }).click();
      await waitFor(async () => (await page.getByTestId('calendar-dates').locator('li').count()) === 3, { description: 'three dates shown', timeoutMs: UI_TIMEOUT_MS });
      const stored = await api<{ dates: string[]; timezone: string; team: string; version: number }>('GET', '/api/v1/calendars/pay-holidays');
      expect(stored).toMatchObject({ team: 'pay', timezone: 'Europe/Paris', dates: ['2026-12-25', '2027-01-01', '2027-05-01'], version: 2 });
      await page.locator('tr[data-calendar="pay-holidays"] td[data-column="dates"]').filter({ hasText: '3' }).waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('tr[data-calendar="ops-freeze"]').count()).toBe(0);
      await docsShots(page, 'calendars');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }

    // A viewer reads: the list and the dates, no New, Edit or Delete.
    const viewer = await open(800);
    try {
      await signIn(viewer.page, baseUrl, tokens.payViewer, UI_TIMEOUT_MS);
      await viewer.page.goto(`${baseUrl}/calendars/pay-holidays`);
      await viewer.page.getByTestId('calendar-dates').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await viewer.page.locator('[data-action="new-calendar"], [data-action="edit"], [data-action="delete"]').count()).toBe(0);
      await expectNoSidewaysScroll(viewer.page);
      expect(viewer.problems).toEqual([]);
    } finally {
      await viewer.context.close();
    }

    // An admin deletes one, after a confirm.
    const admin = await open();
    try {
      await signIn(admin.page, baseUrl, ADMIN_TOKEN, UI_TIMEOUT_MS);
      await admin.page.goto(`${baseUrl}/calendars/ops-freeze`);
      const view = admin.page.getByTestId('calendar-view');
      await view.locator('[data-action="delete"]').click();
      await view.locator('[data-action="confirm"]').click();
      await admin.page.getByText('Deleted calendar ops-freeze').waitFor({ timeout: UI_TIMEOUT_MS });
      expect((await call('GET', '/api/v1/calendars/ops-freeze')).status).toBe(404);
      // The notice shows at once; the list drops the row when its reload answers.
      await waitFor(async () => (await admin.page.locator('tr[data-calendar="ops-freeze"]').count()) === 0, { description: 'ops-freeze gone from the list', timeoutMs: UI_TIMEOUT_MS });
      expect(admin.problems).toEqual([]);
    } finally {
      await admin.context.close();
    }
  }, 150_000);

  it('#47 the audit log shows each change field by field: old → new, secrets masked', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    await api('POST', '/api/v1/tasks', {
      name: 'audit_http',
      team: 'pay',
      schedule: { type: 'none' },
      exec: { type: 'http', url: 'https://api.example.com/run', headers: { Authorization: 'Bearer first-secret' } },
    });
    const task = await api<{ exec: Record<string, unknown> }>('GET', '/api/v1/tasks/audit_http');
    await api('PUT', '/api/v1/tasks/audit_http', { ...task, timeoutSeconds: 900, exec: { ...task.exec, headers: { Authorization: 'Bearer second-secret', 'X-Api-Key': 'third-secret' } } });
    await api('PUT', '/api/v1/calendars/audit-cal', { team: 'pay', timezone: 'UTC', dates: ['2027-01-01'] });
    await api('PUT', '/api/v1/calendars/audit-cal', { team: 'pay', timezone: 'UTC', dates: ['2027-01-01', '2027-01-02'] });
    const { context, page, problems } = await open();
    try {
      await signIn(page, baseUrl, ADMIN_TOKEN, UI_TIMEOUT_MS);
      await page.goto(`${baseUrl}/audit`);
      const replace = page.locator('tr[data-action="task.replace"]').first().getByTestId('audit-diff');
      await replace.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await replace.locator('tr[data-path="timeoutSeconds"]').innerText()).toMatch(/3600\s*→\s*900/);
      // Header values are stored masked: a header added shows as ***, a changed value shows no change.
      expect(await replace.locator('tr[data-path="exec.headers.X-Api-Key"]').innerText()).toMatch(/\*\*\*/);
      expect(await replace.locator('tr[data-path="exec.headers.X-Api-Key"]').getAttribute('data-kind')).toBe('added');
      expect(await replace.locator('tr[data-path="version"]').count()).toBe(1);
      expect(await replace.locator('tr[data-path="name"]').count()).toBe(0); // unchanged fields are left out
      const cal = page.locator('tr[data-action="calendar.replace"]').first().getByTestId('audit-diff');
      expect(await cal.locator('tr[data-path="dates"]').innerText()).toContain('["2027-01-01"] → ["2027-01-01","2027-01-02"]');
      const created = page.locator('tr[data-action="calendar.create"]').first().getByTestId('audit-diff');
      expect(await created.locator('tr[data-path="timezone"]').getAttribute('data-kind')).toBe('added');
      expect(await page.content()).not.toMatch(/first-secret|second-secret|third-secret/);
      await docsShots(page, 'audit');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
