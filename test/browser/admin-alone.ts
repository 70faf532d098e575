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

/** More of the admin API's environment (e.g. `AX_OIDC_*`, `AX_HTTP_PORT` to know its URL beforehand). */
export interface AdminAloneOptions {
  readonly env?: Readonly<Record<string, string>>;
}

/** Starts admin-api with `adminToken` as its bootstrap admin (every team) and a browser. */
export async function startAdminAlone(prefix: string, adminToken: string, options: AdminAloneOptions = {}): Promise<AdminAlone> {
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
    const env = { AX_MYSQL_URL: db.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'warn', AX_EXECUTOR_SECRET: `${prefix}-console-secret-0123456789`, AX_ADMIN_TOKEN: adminToken, ...options.env };
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

/** A user of the test's OpenID provider (oidc-provider's development login form: any password). */
export interface OidcLogin {
  readonly oidcLogin: string;
}

/**
 * Signs `page` in at the console of `baseUrl`, waiting for the header: with an API token, or
 * through the OpenID provider (its login form and consent, when it asks them).
 */
export async function signIn(page: Page, baseUrl: string, who: string | OidcLogin, timeoutMs = 30_000): Promise<void> {
  await page.goto(`${baseUrl}/`);
  if (typeof who === 'string') {
    await page.locator('input[name="token"]').fill(who);
    await page.getByRole('button', { name: 'Sign in' }).click();
  } else {
    await page.getByTestId('oidc-sign-in').click();
    const login = page.locator('input[name="login"]');
    const consent = page.getByRole('button', { name: 'Continue' });
    const header = page.getByTestId('who');
    // The provider asks for a login unless it has a session, and for consent once per client.
    await login.or(consent).or(header).first().waitFor({ timeout: timeoutMs });
    if (await login.isVisible()) {
      await login.fill(who.oidcLogin);
      await page.locator('input[name="password"]').fill('any-password');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await consent.or(header).first().waitFor({ timeout: timeoutMs });
    }
    if (await consent.isVisible()) await consent.click();
  }
  await page.getByTestId('who').waitFor({ timeout: timeoutMs });
}
