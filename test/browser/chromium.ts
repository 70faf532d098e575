/**
 * What every browser test starts from: Debian's chromium driven headless by playwright-core,
 * the flags it needs in a container, and the folder screenshots go to (ignored by git).
 */
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { missingRequirement, repoRoot } from '@ax/testing';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { expect, it } from 'vitest';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
export const ARTIFACTS = join(repoRoot(), 'test/browser/artifacts');

/** CI installs chromium (.ci/run): there a missing one fails; a workstation without it skips, saying so. */
export const noChromium = missingRequirement(it, { name: CHROMIUM, present: existsSync(CHROMIUM), install: 'apt-get install chromium' });

/**
 * A full-page screenshot to test/browser/artifacts/NAME.png at each of `widths` (px); with
 * AX_CONSOLE_DOCS_SCREENSHOT=1 also to docs/images/console-NAME-WIDTH.png, the shots
 * docs/console.md shows. The viewport is left at the last width.
 */
export async function docsShots(page: Page, name: string, widths: readonly number[] = [1440, 800]): Promise<void> {
  const height = page.viewportSize()?.height ?? 900;
  for (const width of widths) {
    await page.setViewportSize({ width, height });
    const file = join(ARTIFACTS, `${name}-${width}.png`);
    await page.screenshot({ path: file, fullPage: true });
    if (process.env.AX_CONSOLE_DOCS_SCREENSHOT === '1') copyFileSync(file, join(repoRoot(), `docs/images/console-${name}-${width}.png`));
  }
}

/** The page does not scroll sideways at its viewport's width (tables scroll in their own box). */
export async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const widths = await page.evaluate<{ page: number; viewport: number }>('({ page: document.documentElement.scrollWidth, viewport: window.innerWidth })');
  expect(widths.page).toBeLessThanOrEqual(widths.viewport);
}

/** A new page of `context` that collects page errors and console errors (not the signed-out console's 401 on GET /session). */
export async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    // The signed-out console's GET /session before the sign-in answers 401: the browser logs it.
    if (msg.type() === 'error' && !/status of 401/.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
  return { page, problems };
}

/** The attribute `name` of every element `locator` matches, in order. */
export async function attributes(locator: Locator, name: string): Promise<Array<string | null>> {
  return Promise.all((await locator.all()).map((element) => element.getAttribute(name)));
}
