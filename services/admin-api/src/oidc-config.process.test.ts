/**
 * `AX_OIDC_*` across real admin-api starts (`services/admin-api/dist/main.js`: run `pnpm build`
 * first): a bad role map entry or a missing setting stops the start with exit code 2 and a line
 * naming it, before anything is connected; the client id and secret are read from files.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceEntry } from '@ax/testing';
import { afterAll, expect, it } from 'vitest';

const folder = mkdtempSync(join(tmpdir(), 'ax-oidc-config-'));
writeFileSync(join(folder, 'client-id'), 'ax-console\n');
writeFileSync(join(folder, 'client-secret'), 'a-client-secret-0123456789\n');
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function start(extra: Record<string, string>): { status: number | null; stderr: string } {
  const run = spawnSync(process.execPath, [serviceEntry('admin-api')], {
    env: {
      ...process.env,
      AX_HTTP_PORT: '65001',
      AX_OIDC_ISSUER: 'https://id.example.com',
      AX_OIDC_CLIENT_ID_FILE: join(folder, 'client-id'),
      AX_OIDC_CLIENT_SECRET_FILE: join(folder, 'client-secret'),
      AX_OIDC_REDIRECT_URI: 'https://ax.example.com/api/v1/auth/oidc/callback',
      ...extra,
    },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: run.status, stderr: run.stderr };
}

it('a bad AX_OIDC_ROLE_MAP entry stops the start, naming the entry', () => {
  const run = start({ AX_OIDC_ROLE_MAP: '{"payments-ops": {"role": "operater", "teams": ["payments"]}}' });
  expect(run.status).toBe(2);
  expect(run.stderr).toContain('AX_OIDC_ROLE_MAP');
  expect(run.stderr).toContain('entry "payments-ops": role must be one of viewer, operator, admin (got "operater")');
}, 60_000);

it('an issuer without a role map stops the start, naming what is missing (the client came from its files)', () => {
  const run = start({});
  expect(run.status).toBe(2);
  expect(run.stderr.trim()).toBe('ax: AX_OIDC_ISSUER is set, so AX_OIDC_ROLE_MAP (or AX_OIDC_ROLE_MAP_FILE) is required (which claim values grant which role and teams)');
}, 60_000);
