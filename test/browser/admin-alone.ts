/**
 * The stack of the browser tests that need only the API and the console: admin-api alone (no
 * scheduler, broker or worker; instances triggered stay PENDING) on a database, Redis prefix and
 * RabbitMQ namespace of the test's own, and a headless chromium. `close` removes all of it.
 */
import { mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { assertNoLeftoverProcesses, createTestAmqp, createTestDatabase, createTestRedis, startService, stopAllProcesses, uniqueNamespace } from '@ax/testing';
import { ARTIFACTS, CHROMIUM, CHROMIUM_FLAGS } from './chromium.js';

export interface AdminAlone {
  baseUrl: string;
  browser: Browser;
  close(): Promise<void>;
}

/** Starts admin-api with `adminToken` as its bootstrap admin (every team) and a browser. */
export async function startAdminAlone(prefix: string, adminToken: string): Promise<AdminAlone> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const ns = uniqueNamespace(prefix);
  const db = await createTestDatabase();
  const redis = await createTestRedis(ns);
  const amqp = await createTestAmqp(ns);
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await stopAllProcesses();
    await amqp.cleanup();
    await redis.cleanup();
    await db.drop();
    assertNoLeftoverProcesses();
  };
  try {
    const env = { AX_MYSQL_URL: db.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'warn', AX_EXECUTOR_SECRET: `${prefix}-console-secret-0123456789`, AX_ADMIN_TOKEN: adminToken };
    const { baseUrl } = await startService('admin-api', { env });
    const root = await fetch(`${baseUrl}/`);
    if (root.status !== 200) throw new Error(`GET / answered ${root.status}: ${await root.text()} (run \`pnpm build\` first)`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true, timeout: 30_000 });
    return { baseUrl, browser, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Signs `page` in with `token` at the console of `baseUrl`, waiting for the header. */
export async function signIn(page: Page, baseUrl: string, token: string, timeoutMs = 30_000): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.locator('input[name="token"]').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').waitFor({ timeout: timeoutMs });
}
