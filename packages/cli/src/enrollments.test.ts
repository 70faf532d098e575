/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   --json output is untyped JSON here; the assertions check its shape. */
/**
 * axctl and worker enrollments against the real admin API (in-process, test database, the test
 * RabbitMQ and Redis): `workers enroll` writes the credential to a new 0600 file and prints only
 * the id (or prints the credential once), `workers enrollments` lists them without credentials,
 * `workers revoke` ends one.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKER_CREDENTIAL_PATTERN } from '@ax/core';
/* eslint-disable-next-line import-x/no-relative-packages -- test harness: tokens of one team, stored as the admin API's tests store them */
import { addToken } from '../../../services/admin-api/src/harness.test-helper.js';
import { axctlIn, json, killLeftovers, startApp, type AxctlResult, type TestApp } from './axctl.test-helper.js';

let t: TestApp;
let dir: string;
let adminPay: string;

function ok(r: AxctlResult): AxctlResult {
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r;
}

async function bootstrapStatus(credential: string): Promise<number> {
  return (await t.call('GET', '/api/v1/workers/self', { token: credential })).status;
}

beforeAll(async () => {
  t = await startApp();
  dir = mkdtempSync(path.join(tmpdir(), 'axctl-enroll-'));
  for (const name of ['payments', 'orders']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  adminPay = await addToken(t.pool, 'admin-pay', 'admin', ['payments']);
});
afterAll(async () => {
  expect(killLeftovers()).toBe(0);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  await t?.close(); // deletes the enrollments' RabbitMQ and Redis users (harness)
});

describe('#44 axctl: workers enroll', () => {
  it('--credential-file writes the credential to a new file of mode 0600 and prints only the id', async () => {
    const file = path.join(dir, 'pay.credential');
    const r = ok(await axctlIn(t, ['workers', 'enroll', '--name', 'pay-pool', '--team', 'payments', '--tag', 'gpu', '--credential-file', file], { token: adminPay }));
    expect(r.lines).toHaveLength(1);
    const id = r.lines[0] ?? '';
    expect(id).toMatch(/^enr-[a-z0-9]{12}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const credential = readFileSync(file, 'utf8').trim();
    expect(WORKER_CREDENTIAL_PATTERN.exec(credential)?.[1]).toBe(id);
    expect(r.stdout).not.toContain(credential);
    const self = await t.call('GET', '/api/v1/workers/self', { token: credential });
    expect(self.body.enrollment).toEqual({ id, name: 'pay-pool', teams: ['payments'], tags: ['gpu'] });
  });

  it('without a file prints the credential once; --json is the API answer; repeated --team names several teams', async () => {
    const r = ok(await axctlIn(t, ['workers', 'enroll', '--name', 'shared', '--team', 'payments', '--team', 'orders'], { token: t.tokens.admin }));
    expect(r.lines[0]).toMatch(/^enrollment enr-[a-z0-9]{12} \(shared\) for payments, orders$/);
    const credential = /^credential \(shown once; store it now\): (axw_\S+)$/.exec(r.lines[1] ?? '')?.[1] ?? '';
    expect(await bootstrapStatus(credential)).toBe(200);
    const j = json<any>(ok(await axctlIn(t, ['workers', 'enroll', '--name', 'all', '--team', '*', '--json'], { token: t.tokens.admin })));
    expect(j).toMatchObject({ name: 'all', teams: ['*'], credential: expect.stringMatching(WORKER_CREDENTIAL_PATTERN) });
  });

  it('never overwrites a file: an existing --credential-file is a usage error before anything is created', async () => {
    const file = path.join(dir, 'exists');
    writeFileSync(file, 'keep me');
    const before = json<any>(ok(await axctlIn(t, ['workers', 'enrollments', '--state', 'all', '--json'], { token: t.tokens.admin }))).items.length;
    const r = await axctlIn(t, ['workers', 'enroll', '--name', 'clobber', '--team', 'payments', '--credential-file', file], { token: t.tokens.admin });
    expect(r.code).toBe(2);
    expect(r.errLines[0]).toMatch(/--credential-file: .*exists; it is never overwritten/);
    expect(readFileSync(file, 'utf8')).toBe('keep me');
    expect(json<any>(ok(await axctlIn(t, ['workers', 'enrollments', '--state', 'all', '--json'], { token: t.tokens.admin }))).items.length).toBe(before);
  });

  it('the API refusing answers exit 1 with its one line: a team the token does not cover is 404 naming it', async () => {
    const r = await axctlIn(t, ['workers', 'enroll', '--name', 'sneaky', '--team', 'payments', '--team', 'orders'], { token: adminPay });
    expect(r.code).toBe(1);
    expect(r.errLines).toEqual(['axctl: workers enroll: team "orders" does not exist (404 NOT_FOUND)']);
    expect((await axctlIn(t, ['workers', 'enroll', '--team', 'payments'], { token: adminPay })).code).toBe(2); // --name missing
  });
});

describe('#44 axctl: workers enrollments and revoke', () => {
  it('lists the enrollments of the token\'s teams without credentials, and revokes one', async () => {
    const file = path.join(dir, 'to-revoke.credential');
    const id = ok(await axctlIn(t, ['workers', 'enroll', '--name', 'to-revoke', '--team', 'payments', '--credential-file', file], { token: adminPay })).lines[0] ?? '';
    const credential = readFileSync(file, 'utf8').trim();
    const table = ok(await axctlIn(t, ['workers', 'enrollments'], { token: adminPay }));
    expect(table.lines[0]).toMatch(/^ID\s+NAME\s+TEAMS\s+TAGS\s+WORKERS\s+CREATED\s+BY\s+REVOKED$/);
    expect(table.lines.find((l) => l.startsWith(id))).toMatch(new RegExp(`^${id}\\s+to-revoke\\s+payments\\s+-\\s+0\\s+\\S+\\s+admin-pay\\s+-$`));
    expect(table.lines.some((l) => l.includes('shared'))).toBe(false); // payments+orders: not all the token's teams
    expect(table.stdout).not.toContain(credential);

    expect(ok(await axctlIn(t, ['workers', 'revoke', id], { token: adminPay })).lines).toEqual([
      `enrollment ${id} revoked: its credential, RabbitMQ and Redis users no longer work, and its workers are gone from the registry`,
    ]);
    expect(await bootstrapStatus(credential)).toBe(401);
    const revoked = json<any>(ok(await axctlIn(t, ['workers', 'enrollments', '--state', 'revoked', '--json'], { token: adminPay })));
    expect(revoked.items.map((e: any) => e.id)).toEqual([id]);
    expect(ok(await axctlIn(t, ['workers', 'revoke', id, '--json'], { token: adminPay })).stdout).toContain('"revoked": true'); // again: harmless

    expect((await axctlIn(t, ['workers', 'revoke', 'not-an-id'], { token: adminPay })).code).toBe(2);
    const unknown = await axctlIn(t, ['workers', 'revoke', 'enr-000000000000'], { token: adminPay });
    expect(unknown.code).toBe(1);
    expect(unknown.errLines[0]).toMatch(/404 NOT_FOUND/);
  });
});
