// OIDC sign-in of the console (#48) and one sign-in for every tab (#47), in a real browser
// (Debian's chromium driven by playwright-core) against a real OpenID provider (oidc-provider)
// and a real admin-api process on MariaDB, Redis and RabbitMQ: a user of group `payments-ops`
// signs in through the provider, is an operator of team payments only, a second tab is signed
// in already, sign-out ends the session in every tab, a user whose groups grant nothing is told
// so, and a session idle past AX_SESSION_IDLE_S is refused.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { dumpAllProcessOutput, freePort } from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { signIn, startAdminAlone, type AdminAlone } from './admin-alone.js';
import { ARTIFACTS, noChromium } from './chromium.js';
import { startTestProvider, type TestProvider } from './oidc-provider.js';

const ADMIN_TOKEN = `axt_oidc_admin_${Math.random().toString(36).slice(2)}`;
const UI_TIMEOUT_MS = 30_000;
const IDLE_S = 10;
const ROLE_MAP = {
  'payments-ops': { role: 'operator', teams: ['payments'] },
  'platform-admins': { role: 'admin', teams: ['*'] },
};

let stack: AdminAlone | undefined;
let provider: TestProvider | undefined;
let baseUrl = '';

async function api(method: 'GET' | 'POST', path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
}

beforeAll(async () => {
  if (noChromium) return;
  // The console's address is needed by the provider (its registered callback) before admin-api starts.
  const port = await freePort();
  const redirectUri = `http://127.0.0.1:${port}/api/v1/auth/oidc/callback`;
  provider = await startTestProvider({
    clientId: 'ax-console',
    clientSecret: 'ax-console-secret-0123456789',
    redirectUri,
    accounts: { alice: ['payments-ops', 'everyone'], mallory: ['marketing'] },
  });
  stack = await startAdminAlone('axoidc', ADMIN_TOKEN, {
    env: {
      AX_HTTP_PORT: String(port),
      AX_OIDC_ISSUER: provider.issuer,
      AX_OIDC_CLIENT_ID: 'ax-console',
      AX_OIDC_CLIENT_SECRET: 'ax-console-secret-0123456789',
      AX_OIDC_REDIRECT_URI: redirectUri,
      AX_OIDC_SCOPES: 'openid profile groups',
      AX_OIDC_ROLE_MAP: JSON.stringify(ROLE_MAP),
      AX_SESSION_IDLE_S: String(IDLE_S),
    },
  });
  baseUrl = stack.baseUrl;
  for (const team of ['payments', 'orders']) await api('POST', '/api/v1/teams', { name: team });
  const job = (name: string, team: string) => ({ name, team, schedule: { type: 'none' }, exec: { type: 'shell', command: ['echo', name] } });
  for (const [name, team] of [['pay_settle', 'payments'], ['ord_export', 'orders']] as const) await api('POST', '/api/v1/tasks', job(name, team));
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await provider?.close();
}, 60_000);

async function taskNames(page: Page): Promise<(string | null)[]> {
  await page.goto(`${baseUrl}/tasks`);
  await page.locator('tr[data-task]').first().waitFor({ timeout: UI_TIMEOUT_MS });
  const rows = await page.getByTestId('task-table').locator('tbody tr').all();
  return Promise.all(rows.map((r) => r.getAttribute('data-task')));
}

describe.skipIf(noChromium)('OIDC sign-in of the console', () => {
  it('#48 a payments-ops user is an operator of payments only; a second tab shares the sign-in; sign-out ends it everywhere; an idle session is refused', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (stack as AdminAlone).browser.newContext({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    context.on('weberror', (err) => problems.push(`page error: ${err.error().message}`));
    try {
      const page = await context.newPage();
      await signIn(page, baseUrl, { oidcLogin: 'alice' });
      expect(await page.getByTestId('who').innerText()).toBe('alice (operator)');
      expect(await page.getByTestId('who-teams').innerText()).toBe('teams: payments');
      expect(await taskNames(page)).toEqual(['pay_settle']);
      // The cookie is HttpOnly and SameSite=Lax; the page's script cannot read it.
      const cookie = (await context.cookies(baseUrl)).find((c) => c.name === 'ax_session');
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
      expect(await page.evaluate<string>('document.cookie')).not.toContain('ax_session');
      await page.screenshot({ path: join(ARTIFACTS, 'oidc-signed-in.png'), fullPage: true });

      // #47: a new tab is signed in already.
      const second = await context.newPage();
      await second.goto(`${baseUrl}/`);
      await second.getByTestId('who').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await second.getByTestId('who').innerText()).toBe('alice (operator)');

      // Sign-out in the second tab ends the session on the server: the first tab is signed out at its next request.
      await second.getByRole('button', { name: 'Sign out' }).click();
      await second.locator('input[name="token"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await page.reload();
      await page.locator('input[name="token"]').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('who').count()).toBe(0);
      await second.close();

      // Signed in again (the provider remembers alice), then left idle past AX_SESSION_IDLE_S with no tab open.
      await signIn(page, baseUrl, { oidcLogin: 'alice' });
      await page.close();
      await new Promise((resolve) => setTimeout(resolve, (IDLE_S + 2) * 1000));
      const later = await context.newPage();
      await later.goto(`${baseUrl}/`);
      await later.locator('input[name="token"]').waitFor({ timeout: UI_TIMEOUT_MS });
      await later.getByText('the session has expired after being idle').waitFor({ timeout: UI_TIMEOUT_MS });
      await later.screenshot({ path: join(ARTIFACTS, 'oidc-session-expired.png'), fullPage: true });
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it('#48 a user whose groups map to nothing is signed in at the provider but not let in, and told why', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const context = await (stack as AdminAlone).browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${baseUrl}/`);
      await page.getByTestId('oidc-sign-in').click();
      await page.locator('input[name="login"]').fill('mallory');
      await page.locator('input[name="password"]').fill('any-password');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      const consent = page.getByRole('button', { name: 'Continue' });
      const refused = page.getByText('none of its groups grants access to ax');
      await consent.or(refused).first().waitFor({ timeout: UI_TIMEOUT_MS });
      if (await consent.isVisible()) await consent.click();
      await refused.waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await page.getByTestId('who').count()).toBe(0);
      expect((await context.cookies(baseUrl)).some((c) => c.name === 'ax_session')).toBe(false);
    } finally {
      await context.close();
    }
  }, 120_000);
});
