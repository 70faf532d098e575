// Task versions in a real browser (issue #47 "Task versions"): Debian's chromium
// (playwright-core) against admin-api on MariaDB and Redis. A task edited twice shows three
// versions on its page (version, when, who); the newest pair is diffed, another pair can be
// picked; an operator rolls back to version 1 with a reason after a confirm, and the page then
// shows version 4 (the old definition saved again) as current; an instance triggered then shows
// task version 4 on its page. Screenshot:
// test/browser/artifacts/task-versions.png.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { dumpAllProcessOutput, waitFor } from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { signIn, startAdminAlone, type AdminAlone } from './admin-alone.js';
import { ARTIFACTS, noChromium } from './chromium.js';

const ADMIN_TOKEN = `axt_versions_admin_${Math.random().toString(36).slice(2)}`;
const UI_TIMEOUT_MS = 45_000;
const TASK = 'versions_ui';
const REASON = 'two broke the report (INC-9)';

let stack: AdminAlone | undefined;
let baseUrl = '';

interface TaskBody {
  version: number;
  description: string;
  exec: { command: string[] };
  [key: string]: unknown;
}

async function api<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text === '' ? {} : JSON.parse(text)) as T;
}

async function edit(changes: Partial<TaskBody>): Promise<void> {
  const current = await api<TaskBody>('GET', `/api/v1/tasks/${TASK}`);
  await api('PUT', `/api/v1/tasks/${TASK}`, { ...current, ...changes });
}

/** The diff's changed lines, as shown: sign and text. */
async function changedLines(page: Page): Promise<string[]> {
  const rows = page.getByTestId('versions-diff').locator('[data-diff="add"], [data-diff="del"]');
  return (await rows.allTextContents()).map((t) => t.replace(/^−/, '-').trim());
}

beforeAll(async () => {
  if (noChromium) return;
  stack = await startAdminAlone('axver', ADMIN_TOKEN);
  baseUrl = stack.baseUrl;
  await api('POST', '/api/v1/tasks', { name: TASK, description: 'one', schedule: { type: 'none' }, exec: { type: 'shell', command: ['echo', 'one'] } });
  await edit({ description: 'two' });
  await edit({ exec: { type: 'shell', command: ['echo', 'three'] } } as Partial<TaskBody>);
}, 120_000);

afterAll(async () => {
  await stack?.close();
}, 60_000);

describe('the versions of a task, diffed and rolled back in the console', () => {
  it('lists three versions after two edits, diffs two of them, rolls back to version 1 as version 4', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (stack as AdminAlone).browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    try {
      await signIn(page, baseUrl, ADMIN_TOKEN, UI_TIMEOUT_MS);
      await page.goto(`${baseUrl}/tasks/${TASK}`);
      const section = page.getByTestId('task-versions');
      const rows = section.locator('tbody tr');
      await waitFor(async () => (await rows.count()) === 3, { description: 'three versions listed', timeoutMs: UI_TIMEOUT_MS });
      expect(await Promise.all((await rows.all()).map((tr) => tr.getAttribute('data-version')))).toEqual(['3', '2', '1']);
      expect(await rows.first().textContent()).toContain('(current)');
      expect(await rows.first().textContent()).toContain('admin');

      // The newest against the one before: the command changed.
      expect(await changedLines(page)).toEqual(['-    - one', '+    - three']);
      // Pick version 1 as the older side: the description changed too.
      await section.getByLabel('diff from version 1').check();
      await waitFor(async () => (await changedLines(page)).some((l) => l.includes('description: one')), { description: 'the diff of 1 → 3', timeoutMs: UI_TIMEOUT_MS });
      expect(await changedLines(page)).toEqual(['-description: one', '+description: two', '-    - one', '+    - three']);
      await page.screenshot({ path: join(ARTIFACTS, 'task-versions.png'), fullPage: true });

      // Roll back to version 1, with a reason, after the confirm.
      await section.locator('tr[data-version="1"] [data-action="rollback"]').click();
      const dialog = page.getByTestId('rollback-dialog');
      await dialog.waitFor({ timeout: UI_TIMEOUT_MS });
      await dialog.locator('input[name="rollback-reason"]').fill(REASON);
      await dialog.locator('[data-action="confirm-rollback"]').click();
      await waitFor(async () => (await rows.count()) === 4, { description: 'four versions listed', timeoutMs: UI_TIMEOUT_MS });
      expect(await rows.first().getAttribute('data-version')).toBe('4');
      expect(await rows.first().textContent()).toContain('(current)');
      const task = await api<TaskBody>('GET', `/api/v1/tasks/${TASK}`);
      expect([task.version, task.description, task.exec.command]).toEqual([4, 'one', ['echo', 'one']]);
      const audit = await api<{ items: Array<{ action: string; reason?: string }> }>('GET', '/api/v1/audit');
      expect(audit.items.find((e) => e.action === 'task.rollback')?.reason).toBe(REASON);

      // An instance names the version it was created from.
      const instance = await api<{ id: string }>('POST', `/api/v1/tasks/${TASK}/trigger`, {});
      await page.goto(`${baseUrl}/instances/${instance.id}`);
      const versionRow = page.locator('tr', { has: page.locator('th', { hasText: 'task version' }) });
      await versionRow.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await versionRow.locator('td').textContent()).toBe('4');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);
});
