// Task authoring in a real browser (Debian's chromium via playwright-core) against a real stack
// (scheduler, broker, worker, admin-api on MariaDB, Redis, RabbitMQ): an operator creates a cron
// task in Asia/Shanghai from YAML, sees the API's error at the field for a bad cron, fixes it in
// the form, saves; creates a second task; edits the first (diff shown, a version conflict
// explained and reloaded) adding a dependsOn; sees a cycle refused as the server names it;
// triggers with params through the dialog and follows the instance to SUCCESS; an admin deletes
// a task after reading its consequences; a viewer is offered none of the writes and the API
// refuses them. Screenshots at 1280 and 390 px go to test/browser/artifacts/.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
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

const ADMIN_TOKEN = `axt_authoring_admin_${Math.random().toString(36).slice(2)}`;
const UI_TIMEOUT_MS = 45_000;


const ns = uniqueNamespace('axau');
const dataDir = mkdtempSync(join(tmpdir(), 'ax-authoring-'));
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
let browser: Browser | undefined;
let baseUrl = '';
let operatorToken = '';
let viewerToken = '';

interface Json {
  [key: string]: unknown;
}

async function call(method: string, path: string, body?: unknown, token = ADMIN_TOKEN, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as Json };
}

async function api<T = Json>(method: string, path: string, body?: unknown, token = ADMIN_TOKEN): Promise<T> {
  const res = await call(method, path, body, token);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as T;
}

async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    // Refusals made on purpose (400 bad cron, 409 conflict and cycle, 404 missing task) are logged by the browser itself; anything else is a problem.
    if (msg.type() === 'error' && !/status of (400|404|409)/.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
  return { page, problems };
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

async function noSideways(page: Page): Promise<void> {
  const widths = await page.evaluate<{ page: number; viewport: number }>('({ page: document.documentElement.scrollWidth, viewport: window.innerWidth })');
  expect(widths.page).toBeLessThanOrEqual(widths.viewport);
}

const MAIN_YAML = (expr: string) => `name: au_main
description: ""
team: default
schedule:
  type: cron
  expr: "${expr}"
  timezone: Asia/Shanghai
exec:
  type: shell
  command: [sh, -c, "echo run {{params.run}} for {{bizDate}}"]
timeoutSeconds: 600
enabled: true
`;

beforeAll(async () => {
  if (noChromium) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  db = await createTestDatabase();
  redis = await createTestRedis(ns);
  amqp = await createTestAmqp(ns);
  const env = { AX_MYSQL_URL: db.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'warn', AX_EXECUTOR_SECRET: 'authoring-executor-secret-0123456789', AX_WORKER_DATA_DIR: dataDir };
  await startService('scheduler', { env });
  await startService('broker', { env });
  await startService('worker', { env: { ...env, AX_WORKER_ID: 'authoring-w1', AX_WORKER_SLOTS: '4' } });
  const admin = await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } });
  baseUrl = admin.baseUrl;
  const root = await fetch(`${baseUrl}/`);
  if (root.status !== 200) throw new Error(`GET / answered ${root.status}: ${await root.text()} (build the console first)`);
  operatorToken = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'authoring-operator', role: 'operator' })).token;
  viewerToken = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'authoring-viewer', role: 'viewer' })).token;
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

describe.skipIf(noChromium)('task authoring in chromium', () => {
  it('an operator creates from YAML (field error, fix, save), edits with a diff and a version conflict, adds dependsOn, sees a cycle, triggers with params to SUCCESS', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, operatorToken);
      await page.getByRole('link', { name: 'Tasks', exact: true }).click();
      await page.locator('[data-action="new-task"]').click();
      await page.waitForURL(`${baseUrl}/tasks/new`);
      // An operator is not an admin: no delete anywhere.
      expect(await page.getByTestId('cannot-save').count()).toBe(0);

      // A bad cron: the API's message, on its line under the YAML editor.
      await page.locator('textarea[name="yaml"]').fill(MAIN_YAML('0 25 * * *'));
      await page.locator('[data-action="create"]').click();
      const yamlIssue = page.locator('[data-testid="yaml-issues"] li[data-issue-path="schedule.expr"]');
      await yamlIssue.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await yamlIssue.getAttribute('data-issue-line')).toBe('6');
      expect(await yamlIssue.innerText()).toMatch(/line 6\s*schedule\.expr: invalid cron expression "0 25 \* \* \*": hour field "25" is out of range 0-23/);
      await shot(page, 'authoring-yaml-error');

      // The same draft in the form: the message at the cron field; fix it there.
      await page.locator('[data-mode="form"]').click();
      const cronError = page.locator('[data-field-error="schedule.expr"]');
      await cronError.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await cronError.innerText()).toContain('hour field "25" is out of range 0-23');
      expect(await page.locator('input[name="schedule.timezone"]').inputValue()).toBe('Asia/Shanghai');
      expect(await page.locator('textarea[name="exec.command"]').inputValue()).toBe('sh\n-c\necho run {{params.run}} for {{bizDate}}');
      await shot(page, 'authoring-form-error');
      await page.locator('input[name="schedule.expr"]').fill('30 2 * * *');
      // Back to YAML: the fix is in the text (one draft, two views).
      await page.locator('[data-mode="yaml"]').click();
      expect(await page.locator('textarea[name="yaml"]').inputValue()).toContain('expr: 30 2 * * *');
      await page.locator('[data-action="create"]').click();
      await page.waitForURL(`${baseUrl}/tasks/au_main`, { timeout: UI_TIMEOUT_MS });
      const created = await api<Json>('GET', '/api/v1/tasks/au_main');
      expect(created['schedule']).toEqual({ type: 'cron', expr: '30 2 * * *', timezone: 'Asia/Shanghai' });
      expect(created['version']).toBe(1);
      // Its next fire times: 02:30 in Shanghai is 18:30 UTC.
      await page.getByTestId('fire-times').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('fire-times').innerText()).toMatch(/18:30:00 UTC[\s\S]*02:30:00 GMT\+8/);
      expect(await page.locator('[data-action="delete"]').count()).toBe(0);

      // A second task, the parent-to-be.
      await page.goto(`${baseUrl}/tasks/new`);
      await page.locator('textarea[name="yaml"]').fill('name: au_upstream\nschedule: {type: none}\nexec: {type: shell, command: [echo, upstream]}\n');
      await page.locator('[data-action="create"]').click();
      await page.waitForURL(`${baseUrl}/tasks/au_upstream`, { timeout: UI_TIMEOUT_MS });

      // Edit au_main in the form: a parent and a shorter timeout; the diff before saving.
      await page.goto(`${baseUrl}/tasks/au_main`);
      await page.locator('[data-action="edit"]').click();
      await page.waitForURL(`${baseUrl}/tasks/au_main/edit`);
      await page.locator('textarea[name="yaml"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.locator('[data-mode="form"]').click();
      await page.locator('[data-action="add-parent"]').click();
      await page.locator('input[name="dependsOn.0.task"]').fill('au_upstream');
      await page.locator('input[name="timeoutSeconds"]').fill('120');
      await page.locator('[data-action="review"]').click();
      await page.getByTestId('diff').waitFor({ timeout: UI_TIMEOUT_MS });
      const added = (await page.locator('[data-diff="add"]').allInnerTexts()).map((t) => t.trim());
      const removed = (await page.locator('[data-diff="del"]').allInnerTexts()).map((t) => t.trim());
      expect(added).toEqual(expect.arrayContaining(['+timeoutSeconds: 120', '+dependsOn:', '+  - task: au_upstream']));
      expect(removed).toEqual(['−timeoutSeconds: 600']);
      await shot(page, 'authoring-diff');

      // Someone else changes it meanwhile: the save is refused and explained; reload shows theirs.
      const theirs = await api<Json>('GET', '/api/v1/tasks/au_main');
      await api('PUT', '/api/v1/tasks/au_main', { ...theirs, description: 'changed elsewhere' });
      await page.locator('[data-action="save"]').click();
      const conflict = page.getByTestId('version-conflict');
      await conflict.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await conflict.innerText()).toContain('au_main was changed by someone else since you opened it: reload to see their version');
      await shot(page, 'authoring-version-conflict');
      await page.locator('[data-action="reload-theirs"]').click();
      await page.getByRole('heading', { name: 'Changes against version 2' }).waitFor({ timeout: UI_TIMEOUT_MS });
      expect((await page.locator('[data-diff="del"]').allInnerTexts()).map((t) => t.trim())).toEqual(expect.arrayContaining(['−description: changed elsewhere']));
      // Keep their description: edit it back in the form, review again, save.
      await page.locator('input[name="timeoutSeconds"]').fill('120');
      await page.locator('[data-mode="yaml"]').click();
      const yaml = await page.locator('textarea[name="yaml"]').inputValue();
      await page.locator('textarea[name="yaml"]').fill(yaml.replace('description: ""', 'description: changed elsewhere'));
      await page.locator('[data-action="review"]').click();
      await page.getByTestId('diff').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('[data-diff="del"]').allInnerTexts()).toEqual(['−timeoutSeconds: 600']);
      await page.locator('[data-action="save"]').click();
      await page.waitForURL(`${baseUrl}/tasks/au_main`, { timeout: UI_TIMEOUT_MS });
      const edited = await api<Json>('GET', '/api/v1/tasks/au_main');
      expect(edited).toMatchObject({ version: 3, timeoutSeconds: 120, description: 'changed elsewhere', dependsOn: [{ task: 'au_upstream', rule: 'ALL_SUCCESS' }] });
      expect((await api<{ edges: Json[] }>('GET', '/api/v1/dag')).edges).toEqual([{ parent: 'au_upstream', child: 'au_main', rule: 'ALL_SUCCESS' }]);

      // A cycle: au_upstream depending on au_main is refused, named as the server names it.
      await page.goto(`${baseUrl}/tasks/au_upstream/edit`);
      await page.locator('textarea[name="yaml"]').waitFor({ timeout: UI_TIMEOUT_MS });
      const up = await page.locator('textarea[name="yaml"]').inputValue();
      await page.locator('textarea[name="yaml"]').fill(`${up}dependsOn:\n  - task: au_main\n`);
      await page.locator('[data-action="review"]').click();
      await page.locator('[data-action="save"]').click();
      const cycle = page.locator('[data-testid="yaml-issues"] li[data-issue-path="dependsOn"]');
      await cycle.waitFor({ timeout: UI_TIMEOUT_MS });
      const refusal = await call('PUT', '/api/v1/tasks/au_upstream', { ...(await api<Json>('GET', '/api/v1/tasks/au_upstream')), dependsOn: [{ task: 'au_main' }] });
      expect(refusal.status).toBe(409);
      const serverSays = (refusal.body['error'] as { message: string; details: { cycle: string[] } });
      expect(serverSays.details.cycle).toEqual(['au_upstream', 'au_main', 'au_upstream']);
      expect(await cycle.innerText()).toContain(serverSays.message);
      expect(serverSays.message).toBe('dependsOn: cycle au_upstream → au_main → au_upstream');
      await shot(page, 'authoring-cycle');
      expect((await api<Json>('GET', '/api/v1/tasks/au_upstream'))['dependsOn']).toBeUndefined();

      // Trigger au_main with params through the dialog: a bad JSON first, then the confirmation.
      await page.goto(`${baseUrl}/tasks/au_main`);
      await page.locator('[data-action="run-now"]').click();
      const dialog = page.getByTestId('trigger-dialog');
      await dialog.waitFor({ timeout: UI_TIMEOUT_MS });
      await dialog.locator('textarea[name="params"]').fill('["not", "an object"]');
      await dialog.getByRole('button', { name: 'Review' }).click();
      expect(await dialog.locator('[data-field-error="params"]').innerText()).toContain('params: must be a JSON object');
      expect(await dialog.locator('[data-action="confirm-run"]').isDisabled()).toBe(true);
      await dialog.locator('textarea[name="params"]').fill('{"run": "ui", "n": 2}');
      await dialog.locator('input[name="bizDate"]').fill('2026-12-01');
      await dialog.locator('input[name="idempotencyKey"]').fill('authoring-run-1');
      await dialog.getByRole('button', { name: 'Review' }).click();
      expect(await dialog.getByTestId('trigger-confirmation').innerText()).toBe(
        'Run au_main now on team default with 2 params, biz date 2026-12-01 (Idempotency-Key authoring-run-1: a repeat within 24 h returns the same instance)',
      );
      await shot(page, 'authoring-trigger');
      await dialog.locator('[data-action="confirm-run"]').click();
      await page.waitForURL(/\/instances\/\d+$/, { timeout: UI_TIMEOUT_MS });
      const instanceId = /\/instances\/(\d+)$/.exec(page.url())?.[1] ?? '';
      const instance = await api<Json>('GET', `/api/v1/instances/${instanceId}`);
      expect(instance).toMatchObject({ taskName: 'au_main', trigger: 'manual', bizDate: '2026-12-01', params: { run: 'ui', n: 2 } });
      // The key was sent: the same key answers the same instance.
      const again = await call('POST', '/api/v1/tasks/au_main/trigger', {}, operatorToken, { 'Idempotency-Key': 'authoring-run-1' });
      expect(again.body['id']).toBe(instanceId);
      // Watch it succeed on its page.
      await page.locator('h2 [data-state="SUCCESS"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect((await api<Json>('GET', `/api/v1/instances/${instanceId}`))['state']).toBe('SUCCESS');

      // The task list shows the last run's state.
      await page.goto(`${baseUrl}/tasks`);
      const lastRun = page.locator('tr[data-task="au_main"] [data-column="last-run"]');
      await lastRun.locator('[data-state="SUCCESS"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await lastRun.locator('a').getAttribute('href')).toBe(`/instances/${instanceId}`);
      expect(await page.locator('tr[data-task="au_upstream"] [data-column="last-run"]').innerText()).toBe('never');
      await shot(page, 'authoring-tasks-last-run');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 240_000);

  it('a task kept by axctl apply --source says so on its page, in its editor and in the task list, which filters by it (#47)', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const yaml = 'name: au_managed\nschedule: {type: none}\nexec: {type: shell, command: [echo, managed]}\n';
    const res = await fetch(`${baseUrl}/api/v1/tasks/import?managedBy=ops-repo`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/yaml' }, body: yaml });
    expect(res.status).toBe(200);
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, operatorToken);
      await page.goto(`${baseUrl}/tasks/au_managed`);
      const marker = page.getByTestId('managed-by');
      await marker.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await marker.getAttribute('data-source')).toBe('ops-repo');
      expect(await marker.innerText()).toContain('edits here will be overwritten by the next axctl apply --source ops-repo');
      await page.locator('[data-action="edit"]').click();
      await page.waitForURL(`${baseUrl}/tasks/au_managed/edit`);
      await page.getByTestId('managed-by').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.goto(`${baseUrl}/tasks`);
      await page.locator('tr[data-task="au_managed"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('tr[data-task="au_managed"] [data-column="managed-by"]').innerText()).toBe('ops-repo');
      // A task made in the console carries no marker, and its page no warning.
      expect((await page.locator('tr[data-task="au_main"] [data-column="managed-by"]').innerText()).trim()).toBe('—');
      // The marker links to the list of its source's tasks only (GET /tasks?managedBy=), and back.
      await page.locator('tr[data-task="au_managed"] [data-column="managed-by"] a').click();
      await page.waitForURL(`${baseUrl}/tasks?managedBy=ops-repo`, { timeout: UI_TIMEOUT_MS });
      await page.locator('tr[data-task="au_main"]').waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
      await page.locator('tr[data-task="au_managed"]').waitFor({ timeout: UI_TIMEOUT_MS }); // the filtered list, once loaded
      expect(await page.locator('tr[data-task]').count()).toBe(1);
      expect(await page.locator('tr[data-task]').first().getAttribute('data-task')).toBe('au_managed');
      expect(await page.getByTestId('managed-by-filter').innerText()).toContain('ops-repo');
      await page.getByRole('link', { name: 'Show tasks of every source' }).click();
      await page.waitForURL(`${baseUrl}/tasks`, { timeout: UI_TIMEOUT_MS });
      await page.locator('tr[data-task="au_main"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.goto(`${baseUrl}/tasks/au_main`);
      await page.locator('[data-action="edit"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('managed-by').count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('an admin deletes a task after reading what goes with it', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const upstreamRun = await api<{ id: string }>('POST', '/api/v1/tasks/au_upstream/trigger', {});
    await waitFor(async () => (await api<Json>('GET', `/api/v1/instances/${upstreamRun.id}`))['state'] === 'SUCCESS', { description: 'au_upstream ran', timeoutMs: UI_TIMEOUT_MS, intervalMs: 250 });
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, ADMIN_TOKEN);
      await page.goto(`${baseUrl}/tasks/au_upstream`);
      await page.locator('[data-action="delete"]').click();
      const dialog = page.getByTestId('delete-dialog');
      await dialog.getByTestId('delete-consequences').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await dialog.locator('[data-consequence="parents"]').innerText()).toBe('It has no parent edges.');
      expect(await dialog.locator('[data-consequence="children"]').innerText()).toBe('Its edge to child au_main goes too: that task no longer waits for it.');
      expect(await dialog.locator('[data-consequence="instances"]').innerText()).toContain('Its instances stay');
      expect(await dialog.locator('[data-consequence="running"]').innerText()).toBe('A running instance is not killed: it runs to its end. None is in progress now.');
      expect(await dialog.locator('[data-action="confirm-delete"]').isDisabled()).toBe(true);
      await shot(page, 'authoring-delete');
      await dialog.locator('input[name="confirmName"]').fill('au_upstream');
      await dialog.locator('[data-action="confirm-delete"]').click();
      await page.waitForURL(`${baseUrl}/tasks?deleted=au_upstream`, { timeout: UI_TIMEOUT_MS });
      expect(await page.locator('.notice').innerText()).toContain('Deleted au_upstream');
      expect((await call('GET', '/api/v1/tasks/au_upstream')).status).toBe(404);
      expect((await api<Json>('GET', '/api/v1/tasks/au_main'))['dependsOn']).toBeUndefined();
      expect((await api<{ items: Json[] }>('GET', '/api/v1/instances?task=au_upstream')).items.map((i) => i['id'])).toEqual([upstreamRun.id]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('a viewer is offered no New/Edit/Delete/Run, the editor says it cannot save, and the API refuses', async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, viewerToken);
      await page.goto(`${baseUrl}/tasks`);
      await page.locator('tr[data-task="au_main"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('[data-action="new-task"], [data-action="run-now"], input[role="switch"]').count()).toBe(0);
      await page.goto(`${baseUrl}/tasks/au_main`);
      await page.getByTestId('fire-times').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('[data-action="edit"], [data-action="delete"], [data-action="run-now"], [data-action="backfill"]').count()).toBe(0);
      await page.goto(`${baseUrl}/tasks/au_main/edit`);
      await page.getByTestId('cannot-save').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('cannot-save').innerText()).toContain('Creating and editing tasks needs the operator role');
      expect(await page.locator('[data-action="review"]').isDisabled()).toBe(true);
      await page.goto(`${baseUrl}/tasks/new`);
      await page.getByTestId('cannot-save').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('[data-action="create"]').isDisabled()).toBe(true);
      await shot(page, 'authoring-viewer-editor');
      // A task that is not there: the API's 404, as one line.
      await page.goto(`${baseUrl}/tasks/au_nope/edit`);
      await page.locator('.error-line').waitFor({ timeout: UI_TIMEOUT_MS });
      const notFound = await call('GET', '/api/v1/tasks/au_nope', undefined, viewerToken);
      expect(notFound.status).toBe(404);
      expect(await page.locator('.error-line').innerText()).toBe((notFound.body['error'] as { message: string }).message);
      const current = await api<Json>('GET', '/api/v1/tasks/au_main', undefined, viewerToken);
      expect((await call('POST', '/api/v1/tasks', { name: 'au_viewer', schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] } }, viewerToken)).status).toBe(403);
      expect((await call('PUT', '/api/v1/tasks/au_main', { ...current, timeoutSeconds: 5 }, viewerToken)).status).toBe(403);
      expect((await call('DELETE', '/api/v1/tasks/au_main', undefined, viewerToken)).status).toBe(403);
      expect((await call('POST', '/api/v1/tasks/au_main/trigger', {}, viewerToken)).status).toBe(403);
      expect((await call('DELETE', '/api/v1/tasks/au_main', undefined, operatorToken)).status).toBe(403);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('fits a phone (390 px): editor, diff, trigger dialog and task list without sideways scrolling', async () => {
    const context = await (browser as Browser).newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, operatorToken);
      await page.goto(`${baseUrl}/tasks`);
      await page.locator('tr[data-task="au_main"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await noSideways(page);
      await shot(page, 'authoring-phone-tasks');
      // "Run now…" on the list opens the same dialog, naming the task's team; nothing runs until confirmed.
      const before = (await api<{ items: Json[] }>('GET', '/api/v1/instances?task=au_main')).items.length;
      await page.locator('tr[data-task="au_main"] [data-action="run-now"]').click();
      const listDialog = page.getByTestId('trigger-dialog');
      await listDialog.getByRole('button', { name: 'Review' }).click();
      expect(await listDialog.getByTestId('trigger-confirmation').innerText()).toBe("Run au_main now on team default with no params, biz date of today's slot in the task's zone");
      await listDialog.getByRole('button', { name: 'Cancel' }).click();
      await listDialog.waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
      expect((await api<{ items: Json[] }>('GET', '/api/v1/instances?task=au_main')).items.length).toBe(before);
      await page.goto(`${baseUrl}/tasks/au_main/edit`);
      await page.locator('textarea[name="yaml"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await noSideways(page);
      await shot(page, 'authoring-phone-yaml');
      await page.locator('[data-mode="form"]').click();
      await page.locator('input[name="timeoutSeconds"]').fill('90');
      await page.locator('[data-action="review"]').click();
      await page.getByTestId('diff').waitFor({ timeout: UI_TIMEOUT_MS });
      await noSideways(page);
      await shot(page, 'authoring-phone-diff');
      await page.goto(`${baseUrl}/tasks/au_main`);
      await page.locator('[data-action="run-now"]').click();
      await page.getByTestId('trigger-dialog').waitFor({ timeout: UI_TIMEOUT_MS });
      await noSideways(page);
      await shot(page, 'authoring-phone-trigger');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
