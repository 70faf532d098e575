// The dashboard's figures on a real stack (#20), like `pnpm start`: scheduler, broker, worker
// and admin-api processes on MariaDB, Redis and RabbitMQ, with a scheduled task, a manual task
// with a dependency child (whose instances carry their biz date's midnight as expectedTime), a
// failing task with retries and a slow task. The five figures (total, failed, average trigger delay, longest
// run, top failing) and the hourly points are computed here by hand from the instances and
// executions the API returns, then `GET /stats/today`, `GET /stats/hourly` and the rendered
// cards (chromium, 1280 and 390 px) must show exactly those.
//
// The rule (ADMIN-API.md, docs): an instance counts in the day and hour it became due — a
// scheduled slot at its expected time, a dependency instance when it was created (its parents
// satisfied), a retried one at its retry time — and its trigger delay runs from then to its
// current execution's start; durations are those of executions (start → end).
// One figure cannot be exact from the API alone: a retry's due time is the broker's NOW plus the
// backoff, and the API shows only the RETRY_SCHEDULED event written a statement later; so a
// retried instance's delay computed here may be short by those milliseconds (bounded below).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
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

const ADMIN_TOKEN = `axt_figures_admin_${Math.random().toString(36).slice(2)}`;
const UI_TIMEOUT_MS = 90_000;
const HOUR_MS = 3_600_000;
/** Most milliseconds between the broker's retry transition and its RETRY_SCHEDULED event (same transaction). */
const RETRY_EVENT_SLACK_MS = 250;


const ns = uniqueNamespace('axfig');
const dataDir = mkdtempSync(join(tmpdir(), 'ax-figures-'));
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
let browser: Browser | undefined;
let baseUrl = '';

interface Instance {
  id: string;
  taskName: string;
  expectedTime: string;
  bizDate: string;
  trigger: string;
  state: string;
  createdAt: string;
  currentExecutionId: string | null;
}
interface Execution {
  executionId: string;
  ackedAt: string | null;
  startedAt: string | null;
  endedAt: string | null;
}
interface InstanceEvent {
  type: string;
  at: string;
  data?: Record<string, unknown>;
}
interface Detail extends Instance {
  executions: Execution[];
  events: InstanceEvent[];
}
interface Today {
  day: string;
  total: number;
  succeeded: number;
  failed: number;
  running: number;
  avgTriggerDelayMs: number | null;
  maxDurationMs: number | null;
  topFailing: Array<{ task: string; count: number }>;
}
interface Hour {
  hour: string;
  runs: number;
  succeeded: number;
  failed: number;
  avgFireLagMs: number | null;
  avgTriggerDelayMs: number | null;
}

async function api<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text === '' ? {} : JSON.parse(text)) as T;
}

async function instances(query = ''): Promise<Instance[]> {
  return (await api<{ items: Instance[] }>('GET', `/api/v1/instances?limit=500${query}`)).items;
}

const t = (iso: string): number => Date.parse(iso);
const startOf = (e: Execution): number | null => (e.startedAt ?? e.ackedAt) === null ? null : t(e.startedAt ?? e.ackedAt ?? '');

/** One instance as the figures see it, by hand. */
interface Figured {
  inst: Detail;
  /** When it became due (ms); `exact` false when it comes from a RETRY_SCHEDULED event. */
  due: number;
  exact: boolean;
  /** Start of its current execution − due, ≥ 0; null when it has not started. */
  delay: number | null;
  /** Its longest execution, ms; null without an ended one. */
  longest: number | null;
}

function figure(inst: Detail): Figured {
  const candidates: Array<{ at: number; exact: boolean }> = [{ at: t(inst.expectedTime), exact: true }];
  if (inst.trigger === 'dependency') candidates.push({ at: t(inst.createdAt), exact: true });
  for (const e of inst.events) if (e.type === 'DEPS_MET') candidates.push({ at: t(e.at), exact: true });
  const retries = inst.events.filter((e) => e.type === 'RETRY_SCHEDULED');
  const lastRetry = retries[retries.length - 1];
  if (lastRetry !== undefined) candidates.push({ at: t(lastRetry.at) + Number(lastRetry.data?.['delayMs'] ?? 0), exact: false });
  const latest = candidates.reduce((a, b) => (b.at > a.at ? b : a));
  const current = inst.executions.find((e) => e.executionId === inst.currentExecutionId) ?? inst.executions[inst.executions.length - 1];
  const started = current === undefined ? null : startOf(current);
  const lengths = inst.executions.flatMap((e) => (e.endedAt !== null && startOf(e) !== null ? [t(e.endedAt) - (startOf(e) ?? 0)] : []));
  return {
    inst,
    due: latest.at,
    exact: latest.exact,
    delay: started === null ? null : Math.max(0, started - latest.at),
    longest: lengths.length === 0 ? null : Math.max(...lengths),
  };
}

const mean = (xs: readonly number[]): number | null => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

/** `avg` as the API rounds it lies within [low, high] (the retried instances' slack on top). */
function expectMeanWithin(apiValue: number | null, rows: readonly Figured[]): void {
  const started = rows.filter((r) => r.delay !== null);
  if (started.length === 0) {
    expect(apiValue).toBeNull();
    return;
  }
  const low = mean(started.map((r) => r.delay ?? 0)) ?? 0;
  const slack = (started.filter((r) => !r.exact).length * RETRY_EVENT_SLACK_MS) / started.length;
  expect(apiValue).not.toBeNull();
  if (slack === 0) {
    expect(apiValue).toBe(Math.round(low));
  } else {
    expect(apiValue ?? -1).toBeGreaterThanOrEqual(Math.round(low));
    expect(apiValue ?? Infinity).toBeLessThanOrEqual(Math.round(low + slack));
  }
}

async function attributes(locator: Locator, name: string): Promise<Array<string | null>> {
  return Promise.all((await locator.all()).map((element) => element.getAttribute(name)));
}

async function signIn(page: Page): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.locator('input[name="token"]').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').waitFor({ timeout: UI_TIMEOUT_MS });
}

beforeAll(async () => {
  if (noChromium) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  db = await createTestDatabase();
  redis = await createTestRedis(ns);
  amqp = await createTestAmqp(ns);
  const env = { AX_MYSQL_URL: db.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'warn', AX_EXECUTOR_SECRET: 'figures-executor-secret-0123456789', AX_WORKER_DATA_DIR: dataDir };
  await startService('scheduler', { env });
  await startService('broker', { env });
  await startService('worker', { env: { ...env, AX_WORKER_ID: 'figures-w1', AX_WORKER_SLOTS: '4' } });
  const admin = await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } });
  baseUrl = admin.baseUrl;
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

describe.skipIf(noChromium)('the dashboard figures on a running stack', () => {
  it('GET /stats/today, /stats/hourly and the cards equal the figures computed from the instances and executions', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const shell = (script: string) => ({ type: 'shell', command: ['sh', '-c', script] });
    const noRetry = { max: 0, backoffSeconds: 1, factor: 1, jitterSeconds: 0 };
    // A manual parent (a scheduled one satisfies its child only once its biz date is over) and
    // its child, whose instance of today is created when the parent succeeds.
    await api('POST', '/api/v1/tasks', { name: 'fg_parent', schedule: { type: 'none' }, retry: noRetry, exec: shell('sleep 0.5; echo parent'), timeoutSeconds: 30 });
    await api('POST', '/api/v1/tasks', { name: 'fg_child', schedule: { type: 'none' }, retry: noRetry, exec: shell('echo child'), timeoutSeconds: 30 });
    await api('POST', '/api/v1/edges', { parent: 'fg_parent', child: 'fg_child' });
    await api('POST', '/api/v1/tasks', { name: 'fg_tick', schedule: { type: 'fixed_rate', everySeconds: 4 }, block: 'parallel', retry: noRetry, exec: shell('echo tick'), timeoutSeconds: 30 });
    await api('POST', '/api/v1/tasks', {
      name: 'fg_fail',
      schedule: { type: 'fixed_rate', everySeconds: 6 },
      block: 'parallel',
      retry: { max: 2, backoffSeconds: 1, factor: 1, jitterSeconds: 0 },
      exec: shell('echo broken >&2; exit 3'),
      timeoutSeconds: 30,
    });
    await api('POST', '/api/v1/tasks', { name: 'fg_slow', schedule: { type: 'fixed_rate', everySeconds: 8 }, block: 'parallel', retry: noRetry, exec: shell('sleep 2.5; echo slow'), timeoutSeconds: 30 });

    await api('POST', '/api/v1/tasks/fg_parent/trigger', {});
    let seen = '';
    onTestFailed(() => console.log(`dashboard-figures: instances seen last: ${seen}`));
    // Let it run until each kind has finished twice, then stop the schedules and let the rest end.
    await waitFor(
      async () => {
        const all = await instances();
        const n = (task: string, state: string) => all.filter((i) => i.taskName === task && i.state === state).length;
        seen = JSON.stringify(all.map((i) => [i.taskName, i.trigger, i.state]));
        return n('fg_fail', 'FAILED') >= 2 && n('fg_slow', 'SUCCESS') >= 2 && n('fg_child', 'SUCCESS') >= 1;
      },
      { description: 'two failed fg_fail, two slow runs, a child', timeoutMs: 120_000, intervalMs: 500 },
    );
    for (const task of ['fg_tick', 'fg_fail', 'fg_slow']) await api('POST', `/api/v1/tasks/${task}/disable`, {});
    await waitFor(async () => (await instances('&state=WAITING,PENDING,DISPATCHED,RUNNING,RETRY_WAIT')).length === 0, {
      description: 'every instance final',
      timeoutMs: UI_TIMEOUT_MS,
      intervalMs: 500,
    });

    const today = await api<Today>('GET', '/api/v1/stats/today');
    const hourly = await api<{ day: string; hours: Hour[] }>('GET', `/api/v1/stats/hourly?day=${today.day}`);
    const dayStart = t(`${today.day}T00:00:00.000Z`);
    const details = await Promise.all((await instances()).map((i) => api<Detail>('GET', `/api/v1/instances/${i.id}`)));
    const figured = details.map(figure).filter((f) => f.due >= dayStart && f.due < dayStart + 24 * HOUR_MS);

    // What this stack made: the dependency children, a child's expectedTime is its biz date's
    // midnight (hours before it was created), and each failing instance ran 3 attempts.
    const children = figured.filter((f) => f.inst.taskName === 'fg_child');
    expect(children.length).toBeGreaterThanOrEqual(1);
    for (const c of children) {
      expect(c.inst.trigger).toBe('dependency');
      expect(c.inst.expectedTime).toBe(`${c.inst.bizDate}T00:00:00.000Z`);
      expect(c.due).toBe(t(c.inst.createdAt));
    }
    const failing = figured.filter((f) => f.inst.taskName === 'fg_fail');
    for (const f of failing) {
      expect(f.inst.state).toBe('FAILED');
      expect(f.inst.executions).toHaveLength(3);
      expect(f.exact).toBe(false);
    }

    // The five figures.
    const failed = figured.filter((f) => f.inst.state === 'FAILED');
    const byTask = new Map<string, number>();
    for (const f of failed) byTask.set(f.inst.taskName, (byTask.get(f.inst.taskName) ?? 0) + 1);
    const topFailing = [...byTask.entries()].map(([task, count]) => ({ task, count })).sort((a, b) => b.count - a.count || (a.task < b.task ? -1 : 1)).slice(0, 5);
    const longest = Math.max(...figured.map((f) => f.longest ?? 0));
    expect(today).toMatchObject({
      total: figured.length,
      succeeded: figured.filter((f) => f.inst.state === 'SUCCESS').length,
      failed: failed.length,
      running: 0,
      maxDurationMs: longest,
      topFailing,
    });
    expect(topFailing).toEqual([{ task: 'fg_fail', count: failing.length }]);
    expectMeanWithin(today.avgTriggerDelayMs, figured);
    // The longest run is a slow one (2.5 s of sleep), from its execution, not the instance row.
    expect(figured.find((f) => f.longest === longest)?.inst.taskName).toBe('fg_slow');
    expect(longest).toBeGreaterThanOrEqual(2500);
    // Without the children counted from their midnight, no delay is anywhere near an hour.
    expect(today.avgTriggerDelayMs ?? Infinity).toBeLessThan(60_000);

    // The hourly points: each instance in the hour it became due.
    expect(hourly.hours).toHaveLength(24);
    for (const [h, hour] of hourly.hours.entries()) {
      const inHour = figured.filter((f) => Math.floor((f.due - dayStart) / HOUR_MS) === h);
      const scheduled = inHour.filter((f) => f.inst.trigger === 'schedule');
      const lag = mean(scheduled.map((f) => t(f.inst.createdAt) - t(f.inst.expectedTime)));
      expect({ h, hour: hour.hour, runs: hour.runs, succeeded: hour.succeeded, failed: hour.failed, avgFireLagMs: hour.avgFireLagMs }).toEqual({
        h,
        hour: new Date(dayStart + h * HOUR_MS).toISOString(),
        runs: inHour.length,
        succeeded: inHour.filter((f) => f.inst.state === 'SUCCESS').length,
        failed: inHour.filter((f) => f.inst.state === 'FAILED').length,
        avgFireLagMs: lag === null ? null : Math.max(0, Math.round(lag)),
      });
      expectMeanWithin(hour.avgTriggerDelayMs, inHour);
    }
    // A child is plotted in the hour it was created, not at its biz date's 00:00.
    const childHours = new Set(children.map((c) => Math.floor((t(c.inst.createdAt) - dayStart) / HOUR_MS)));
    for (const h of childHours) expect(hourly.hours[h]?.runs ?? 0).toBeGreaterThanOrEqual(1);

    // The cards show exactly those.
    for (const width of [1280, 390]) {
      const context = await (browser as Browser).newContext({ viewport: { width, height: 900 } });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (err) => problems.push(err.message));
      try {
        await signIn(page);
        await page.locator('[data-stat="total"]').waitFor({ timeout: UI_TIMEOUT_MS });
        await page.locator('.chart .uplot').nth(2).waitFor({ timeout: UI_TIMEOUT_MS });
        const names = await attributes(page.locator('[data-stat]'), 'data-stat');
        const values = await attributes(page.locator('[data-stat]'), 'data-value');
        expect(Object.fromEntries(names.map((n, k) => [n ?? '', values[k] ?? null]))).toEqual({
          total: String(figured.length),
          succeeded: String(today.succeeded),
          failed: String(failed.length),
          running: '0',
          avgTriggerDelayMs: String(today.avgTriggerDelayMs),
          maxDurationMs: String(longest),
        });
        const rows = await page.locator('[data-testid="top-failing"] tbody tr').all();
        expect(await Promise.all(rows.map(async (r) => ({ task: await r.getAttribute('data-task'), count: Number(await r.getAttribute('data-count')) })))).toEqual(topFailing);
        expect(await page.locator('[data-stat="maxDurationMs"] strong').innerText()).toBe(`${(longest / 1000).toFixed(1)} s`);
        const widths = await page.evaluate<{ page: number; viewport: number }>('({ page: document.documentElement.scrollWidth, viewport: window.innerWidth })');
        expect(widths.page).toBeLessThanOrEqual(widths.viewport);
        await page.screenshot({ path: join(ARTIFACTS, `dashboard-figures-${width}.png`), fullPage: true });
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    }
  }, 360_000);
});
