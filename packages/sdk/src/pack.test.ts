// `npm pack` of ax-scheduler-sdk lists every `exports` entry (dist/*.js and their .d.ts) and no test
// file (scripts/check-pack.mjs --dry-run, on the dist/ of the preceding `pnpm build`). The full
// check — pack with prepack, unpack, import every entry with plain node — is
// `pnpm --filter ax-scheduler-sdk check:pack`.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '@ax/testing';

const packageDir = join(repoRoot(), 'packages/sdk');

describe('ax-scheduler-sdk package', () => {
  it('npm pack --dry-run lists the dist entries of every export', () => {
    expect(existsSync(join(packageDir, 'dist/index.js')), 'packages/sdk/dist is missing: run `pnpm build` first').toBe(true);
    const out = execFileSync(process.execPath, [join(packageDir, 'scripts/check-pack.mjs'), '--dry-run'], { cwd: packageDir, encoding: 'utf8' });
    expect(out).toMatch(/every exports entry present/);
  });
});
