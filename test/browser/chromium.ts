/**
 * What every browser test starts from: Debian's chromium driven headless by playwright-core,
 * the flags it needs in a container, and the folder screenshots go to (ignored by git).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { missingRequirement, repoRoot } from '@ax/testing';
import { it } from 'vitest';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
export const ARTIFACTS = join(repoRoot(), 'test/browser/artifacts');

/** CI installs chromium (.ci/run): there a missing one fails; a workstation without it skips, saying so. */
export const noChromium = missingRequirement(it, { name: CHROMIUM, present: existsSync(CHROMIUM), install: 'apt-get install chromium' });
