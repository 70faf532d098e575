// The job log on the instance page (#19 console) in a real browser (Debian's chromium driven by
// playwright-core, headless) against a real stack: scheduler, broker, worker and admin-api
// processes on MariaDB, Redis and RabbitMQ. A shell job prints a line a second for 8 s: the page
// shows each line while the job runs, at most 2 s after it was printed, then the complete log;
// the view sticks to the end until the reader scrolls up (Follow goes back); the stderr switch
// shows only stderr; search finds a line; download saves the whole log; a log
// longer than a page opens on its last page and pages back; another team's instance is a 404.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

const ADMIN_TOKEN = `axt_logs_admin_${Math.random().toString(36).slice(2)}`;
const UI_TIMEOUT_MS = 45_000;
/** The goal of #19: a printed line is readable within 2 s. */
const LIVE_LAG_MS = 2_000;


const ns = uniqueNamespace('axuil');
const dataDir = mkdtempSync(join(tmpdir(), 'ax-console-logs-'));
let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
let browser: Browser | undefined;
let baseUrl = '';
let mineViewer = '';

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

type InstanceDetail = { id: string; state: string; executions: Array<{ executionId: string; attempt: number; state: string }> };

async function trigger(task: string): Promise<string> {
  return (await api<{ id: string }>('POST', `/api/v1/tasks/${task}/trigger`, {})).id;
}

async function finalInstance(id: string): Promise<InstanceDetail> {
  let detail: InstanceDetail | undefined;
  await waitFor(
    async () => {
      detail = await api<InstanceDetail>('GET', `/api/v1/instances/${id}`);
      return ['SUCCESS', 'FAILED', 'CANCELED'].includes(detail.state);
    },
    { description: `instance ${id} final`, timeoutMs: UI_TIMEOUT_MS, intervalMs: 250 },
  );
  return detail as InstanceDetail;
}

/** The whole log of an execution as the API gives it (one page is enough for these jobs). */
async function logText(executionId: string, stream = 'all'): Promise<string> {
  const res = await fetch(`${baseUrl}/api/v1/executions/${executionId}/log?stream=${stream}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status).toBe(200);
  return res.text();
}

/** The text of every log line shown, in order. */
async function shownLines(page: Page): Promise<string[]> {
  return page.getByTestId('log-lines').locator('.log-line .log-text').allInnerTexts();
}

async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  return { page, problems };
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.locator('input[name="token"]').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').waitFor({ timeout: UI_TIMEOUT_MS });
}

beforeAll(async () => {
  if (noChromium) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  db = await createTestDatabase();
  redis = await createTestRedis(ns);
  amqp = await createTestAmqp(ns);
  const env = { AX_MYSQL_URL: db.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'warn', AX_EXECUTOR_SECRET: 'console-logs-secret-0123456789', AX_WORKER_DATA_DIR: dataDir };
  await startService('scheduler', { env });
  await startService('broker', { env });
  await startService('worker', { env: { ...env, AX_WORKER_ID: 'logs-w1', AX_WORKER_SLOTS: '4' } });
  const admin = await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } });
  baseUrl = admin.baseUrl;
  const root = await fetch(`${baseUrl}/`);
  if (root.status !== 200) throw new Error(`GET / answered ${root.status}: ${await root.text()} (run \`pnpm build\` first)`);

  const shell = (script: string) => ({ type: 'shell', command: ['sh', '-c', script] });
  for (const team of ['mine', 'others']) await api('POST', '/api/v1/teams', { name: team, description: `the ${team} team` });
  // A line a second for 8 s, each with the time it was printed (ms since the epoch); two lines on stderr.
  await api('POST', '/api/v1/tasks', {
    name: 'logs_ticker',
    team: 'mine',
    schedule: { type: 'none' },
    exec: shell('for i in 1 2 3 4 5 6 7 8; do echo "tick $i at $(date +%s%3N)"; if [ $i = 3 ] || [ $i = 6 ]; then echo "warning $i on stderr" >&2; fi; sleep 1; done; echo "ticker done"'),
    timeoutSeconds: 60,
  });
  // 8,000 lines of ≈ 97 bytes (≈ 780 KB): more than two pages of the viewer (256 KiB each), so it opens on its last page.
  await api('POST', '/api/v1/tasks', { name: 'logs_long', team: 'mine', schedule: { type: 'none' }, exec: shell(`seq -f '%06g: ${'the quick brown fox jumps over the lazy dog. '.repeat(2).trim()}' 1 8000`), timeoutSeconds: 60 });
  await api('POST', '/api/v1/tasks', { name: 'logs_secret_team', team: 'others', schedule: { type: 'none' }, exec: shell('echo not for you'), timeoutSeconds: 30 });
  // Enough lines to scroll at once, then a line a second: for following, scrolling up and Follow.
  await api('POST', '/api/v1/tasks', { name: 'logs_follow', team: 'mine', schedule: { type: 'none' }, exec: shell('seq 1 80; for i in 1 2 3 4 5 6 7; do echo "late $i"; sleep 1; done'), timeoutSeconds: 60 });
  mineViewer = (await api<{ token: string }>('POST', '/api/v1/tokens', { name: 'mine-viewer', role: 'viewer', teams: ['mine'] })).token;

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

describe.skipIf(noChromium)('the job log in the console', () => {
  it('#19 console: follows a running job live (≤ 2 s behind), then shows the complete log; stderr switch, search, download', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, mineViewer);
      const id = await trigger('logs_ticker');
      await page.goto(`${baseUrl}/instances/${id}`);
      await page.getByTestId('log-viewer').waitFor({ timeout: UI_TIMEOUT_MS });
      // Following starts here: a tick printed while the page was still loading (under CI load that
      // can take seconds) is shown on load, so it says how fast the page loads, not how far behind
      // a live log is. Those are checked with the complete log below.
      const followingFromMs = Date.now();

      // While it runs: each tick printed once the viewer was up appears at most 2 s after the job
      // printed it (same clock: one machine).
      const seenAt = new Map<number, number>();
      const lagMs = new Map<number, number>();
      let stillRunningAt = 0;
      const deadline = Date.now() + UI_TIMEOUT_MS;
      while (seenAt.size < 8 && Date.now() < deadline) {
        const now = Date.now();
        for (const line of await shownLines(page)) {
          const m = /^tick (\d) at (\d{13})$/.exec(line);
          if (m === null) continue;
          const n = Number(m[1]);
          if (!seenAt.has(n)) {
            seenAt.set(n, now);
            lagMs.set(n, now - Number(m[2]));
          }
        }
        if (seenAt.size > 0 && seenAt.size < 8 && (await page.getByTestId('log-viewer').getAttribute('data-complete')) === 'false') stillRunningAt = seenAt.size;
        await page.waitForTimeout(100);
      }
      expect([...seenAt.keys()].sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      // lines were shown before the log was complete, i.e. while the job ran
      expect(stillRunningAt).toBeGreaterThanOrEqual(6);
      const live = [...lagMs].filter(([n]) => (seenAt.get(n) ?? 0) - (lagMs.get(n) ?? 0) >= followingFromMs);
      expect(live.length, 'ticks printed while the viewer followed the job').toBeGreaterThanOrEqual(5);
      for (const [n, lag] of live) expect(lag, `tick ${n} shown ${lag} ms after it was printed`).toBeLessThanOrEqual(LIVE_LAG_MS);

      // Then the complete log: every line, numbered, equal to the API's.
      await page.locator('[data-testid="log-viewer"][data-complete="true"]').waitFor({ timeout: UI_TIMEOUT_MS });
      const detail = await finalInstance(id);
      expect(detail.state).toBe('SUCCESS');
      const executionId = detail.executions[0]?.executionId ?? '';
      const full = await logText(executionId);
      expect(await shownLines(page)).toEqual(full.replace(/\n$/, '').split('\n'));
      expect(await shownLines(page)).toContain('ticker done');
      expect(await page.getByTestId('log-lines').locator('.log-n').allInnerTexts()).toEqual(full.replace(/\n$/, '').split('\n').map((_l, n) => String(n + 1)));
      expect(await page.getByTestId('log-status').innerText()).toMatch(/^complete/);
      await page.screenshot({ path: join(ARTIFACTS, 'logs-complete.png'), fullPage: true });

      // stderr only.
      await page.getByTestId('log-viewer').locator('button[data-view="stderr"]').click();
      await page.locator('[data-testid="log-viewer"][data-view="stderr"][data-complete="true"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByTestId('log-lines').locator('.log-line').first().waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await shownLines(page)).toEqual(['warning 3 on stderr', 'warning 6 on stderr']);
      // stdout only: no stderr line
      await page.getByTestId('log-viewer').locator('button[data-view="stdout"]').click();
      await page.locator('[data-testid="log-viewer"][data-view="stdout"][data-complete="true"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByTestId('log-lines').locator('.log-line').first().waitFor({ timeout: UI_TIMEOUT_MS });
      const stdoutLines = await shownLines(page);
      expect(stdoutLines).toHaveLength(9);
      expect(stdoutLines.some((l) => l.includes('stderr'))).toBe(false);

      // Search: both streams again; "tick 5" is found, marked and counted; next/previous cycle through hits.
      await page.getByTestId('log-viewer').locator('button[data-view="all"]').click();
      await page.locator('[data-testid="log-viewer"][data-view="all"][data-complete="true"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByTestId('log-lines').locator('.log-line').first().waitFor({ timeout: UI_TIMEOUT_MS });
      const search = page.getByRole('searchbox', { name: 'Search the loaded log' });
      await search.fill('tick 5');
      expect(await page.getByTestId('log-matches').innerText()).toBe('1 of 1');
      expect(await page.locator('mark.log-hit.current').innerText()).toBe('tick 5');
      expect(await page.locator('.log-line:has(mark.current) .log-text').innerText()).toMatch(/^tick 5 at \d{13}$/);
      await search.fill('warning');
      expect(await page.getByTestId('log-matches').innerText()).toBe('1 of 2');
      await search.press('Enter');
      expect(await page.getByTestId('log-matches').innerText()).toBe('2 of 2');
      expect(await page.locator('.log-line:has(mark.current) .log-text').innerText()).toBe('warning 6 on stderr');
      await page.getByRole('button', { name: 'previous match' }).click();
      expect(await page.locator('.log-line:has(mark.current) .log-text').innerText()).toBe('warning 3 on stderr');
      await search.fill('no such line');
      expect(await page.getByTestId('log-matches').innerText()).toBe('no match');
      await search.fill('');

      // Download: the whole log, byte for byte as the API gives it.
      const downloading = page.waitForEvent('download');
      await page.locator('button[data-action="download-log"]').click();
      const download = await downloading;
      expect(download.suggestedFilename()).toBe(`${executionId}.log`);
      expect(readFileSync(await download.path(), 'utf8')).toBe(full);

      // On a phone (390 px) the log wraps inside its box: the page does not scroll sideways.
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForTimeout(200);
      const widths = await page.evaluate<{ page: number; viewport: number }>('({ page: document.documentElement.scrollWidth, viewport: window.innerWidth })');
      expect(widths.page).toBeLessThanOrEqual(widths.viewport);
      await page.screenshot({ path: join(ARTIFACTS, 'logs-phone.png'), fullPage: true });

      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('#19 console: a log longer than a page opens on its last page; "Load earlier" pages back to line 1', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const id = await trigger('logs_long');
    const detail = await finalInstance(id);
    expect(detail.state).toBe('SUCCESS');
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, ADMIN_TOKEN);
      await page.goto(`${baseUrl}/instances/${id}`);
      await page.locator('[data-testid="log-viewer"][data-complete="true"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.getByTestId('log-lines').locator('.log-line').first().waitFor({ timeout: UI_TIMEOUT_MS });
      const numberOf = (line: string | undefined): number => Number(/^(\d{6}): the quick/.exec(line ?? '')?.[1] ?? NaN);
      const last = await shownLines(page);
      expect(numberOf(last.at(-1))).toBe(8000);
      // the page starts mid-log (its first line may be cut: pages are cut by bytes); from its second line on, whole lines in order
      const secondShown = numberOf(last[1]);
      expect(secondShown).toBeGreaterThan(1);
      expect(last.slice(1).every((l, n) => numberOf(l) === secondShown + n)).toBe(true);
      expect(await page.getByTestId('log-lines').locator('.log-n').first().innerText()).toBe('1');
      const lines = page.getByTestId('log-lines').locator('.log-line');
      const loadEarlier = page.locator('button[data-action="load-earlier"]');
      let pagesBack = 0;
      for (; (await loadEarlier.count()) > 0 && pagesBack < 5; pagesBack++) {
        const before = await lines.count();
        await loadEarlier.click();
        await waitFor(async () => (await lines.count()) > before, { description: 'an earlier page shown', timeoutMs: UI_TIMEOUT_MS, intervalMs: 200 });
      }
      expect(pagesBack).toBe(2); // ≈ 780 KB: the last 256 KiB, then 256 KiB, then the rest
      // the whole log now, the cut line whole again, numbered from 1
      expect(await loadEarlier.count()).toBe(0);
      const all = await shownLines(page);
      expect(all).toHaveLength(8000);
      expect(all.every((l, n) => numberOf(l) === n + 1)).toBe(true);
      expect(await page.getByTestId('log-lines').locator('.log-n').last().innerText()).toBe('8000');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('#19 console: the live log sticks to its end until the reader scrolls up; Follow goes back to the end', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await openPage(context);
    /** Pixels between the bottom of the log box and the end of its content. */
    const fromEnd = (): Promise<number> => page.evaluate<number>("(() => { const b = document.querySelector('[data-testid=log-lines]'); return b.scrollHeight - b.scrollTop - b.clientHeight; })()");
    const shown = (text: string) => page.getByTestId('log-lines').locator('.log-text', { hasText: new RegExp(`^${text}$`) });
    try {
      await signIn(page, mineViewer);
      const id = await trigger('logs_follow');
      await page.goto(`${baseUrl}/instances/${id}`);
      await shown('late 1').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await fromEnd()).toBeLessThanOrEqual(8);
      expect(await page.locator('button[data-action="follow"]').count()).toBe(0);

      // The reader scrolls up: new lines come in below, the view stays where it is.
      await page.evaluate("document.querySelector('[data-testid=log-lines]').scrollTop = 0");
      await page.locator('button[data-action="follow"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await shown('late 3').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.evaluate<number>("document.querySelector('[data-testid=log-lines]').scrollTop")).toBe(0);

      // Follow: back at the end, and it stays there as lines come.
      expect(await page.locator('button[data-action="follow"]').innerText()).toBe('Follow');
      await page.locator('button[data-action="follow"]').click();
      expect(await fromEnd()).toBeLessThanOrEqual(8);
      await shown('late 5').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.waitForTimeout(100);
      expect(await fromEnd()).toBeLessThanOrEqual(8);
      expect(await page.locator('button[data-action="follow"]').count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it("#19 console: another team's instance and its log are not found (404) for a token of one team", async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const id = await trigger('logs_secret_team');
    const detail = await finalInstance(id);
    const executionId = detail.executions[0]?.executionId ?? '';
    expect(executionId).not.toBe('');
    const asMine = (path: string) => fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${mineViewer}` } });
    expect((await asMine(`/api/v1/executions/${executionId}/log`)).status).toBe(404);
    expect((await asMine(`/api/v1/executions/${executionId}/log/stream`)).status).toBe(404);
    const context = await (browser as Browser).newContext({ viewport: { width: 1280, height: 900 } });
    const { page, problems } = await openPage(context);
    try {
      await signIn(page, mineViewer);
      await page.goto(`${baseUrl}/instances/${id}`);
      await page.locator('.error-line').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.locator('.error-line').innerText()).toMatch(/does not exist|not found/i);
      expect(await page.getByTestId('log-viewer').count()).toBe(0);
      expect(await page.getByText('not for you').count()).toBe(0);
      // the 404 is the one console error line the browser logs
      expect(problems.filter((p) => !/status of 404/.test(p))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
