/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   --json output is untyped JSON here; the assertions check its shape. */
/**
 * axctl `tokens` and `calendars` (#47: every console action in axctl) against the real admin
 * API (in-process, test database): a created token's secret printed once and working, a team
 * admin refused tokens of other teams with the API's one line, revoke; calendars listed, shown,
 * applied from flags and from a file, `get -o yaml` applied back unchanged, deleted.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
/* eslint-disable-next-line import-x/no-relative-packages -- test harness: tokens of one team, stored as the admin API's tests store them */
import { addToken } from '../../../services/admin-api/src/harness.test-helper.js';
import { axctlIn, json, killLeftovers, startApp, type AxctlResult, type TestApp } from './axctl.test-helper.js';

let t: TestApp;
let dir: string;
let adminPay: string;
let operatorPay: string;

function ok(r: AxctlResult): AxctlResult {
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r;
}

/** Exit 1, nothing on stdout, one stderr line; answers it. */
function failed(r: AxctlResult): string {
  expect(r.code, r.stderr).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.errLines).toHaveLength(1);
  return r.errLines[0] ?? '';
}

beforeAll(async () => {
  t = await startApp();
  dir = mkdtempSync(path.join(tmpdir(), 'axctl-cal-'));
  for (const name of ['payments', 'orders']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  adminPay = await addToken(t.pool, 'admin-pay', 'admin', ['payments']);
  operatorPay = await addToken(t.pool, 'operator-pay', 'operator', ['payments']);
});
afterAll(async () => {
  expect(killLeftovers()).toBe(0);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  await t?.close();
});

describe('#47 axctl tokens', () => {
  it('create prints the secret once on its own line, and it works; list shows it without the secret; revoke ends it', async () => {
    const r = ok(await axctlIn(t, ['tokens', 'create', 'ci-deploy', '--role', 'operator', '--team', 'payments'], { token: adminPay }));
    expect(r.lines[0]).toMatch(/^token \d+ \(ci-deploy, operator\) for payments$/);
    const id = /^token (\d+)/.exec(r.lines[0] ?? '')?.[1] ?? '';
    const secret = /^secret \(shown once; store it now\): (\S+)$/.exec(r.lines[1] ?? '')?.[1] ?? '';
    expect(r.lines).toHaveLength(2);
    expect((await t.call('GET', '/api/v1/whoami', { token: secret })).body).toMatchObject({ role: 'operator', teams: ['payments'] });

    const table = ok(await axctlIn(t, ['tokens', 'list'], { token: adminPay }));
    expect(table.lines[0]).toMatch(/^\s*ID\s+NAME\s+ROLE\s+TEAMS\s+CREATED\s+LAST USED\s+REVOKED$/);
    expect(table.lines.find((l) => l.includes('ci-deploy'))).toMatch(new RegExp(`^\\s*${id}\\s+ci-deploy\\s+operator\\s+payments\\s+\\S+Z\\s+\\S+Z\\s+-$`));
    expect(table.lines.some((l) => l.includes('admin-user'))).toBe(false); // a token of every team: not within payments
    expect(table.stdout).not.toContain(secret);
    expect(json<any>(ok(await axctlIn(t, ['tokens', 'list', '--json'], { token: t.tokens.admin }))).items.map((i: any) => i.name)).toContain('admin-user');

    expect(ok(await axctlIn(t, ['tokens', 'revoke', id], { token: adminPay })).lines).toEqual([`token ${id} revoked: it is refused from now on and its log streams end`]);
    expect((await t.call('GET', '/api/v1/whoami', { token: secret })).status).toBe(401);
    const listed = json<any>(ok(await axctlIn(t, ['tokens', 'list', '--json'], { token: adminPay }))).items.find((i: any) => i.id === id);
    expect(listed.revokedAt).toEqual(expect.any(String));
    expect(failed(await axctlIn(t, ['tokens', 'revoke', id], { token: adminPay }))).toBe(`axctl: tokens revoke: token "${id}" does not exist (404 NOT_FOUND)`);
  });

  it("--json is the API's answer; repeated --team and \"*\"", async () => {
    const j = json<any>(ok(await axctlIn(t, ['tokens', 'create', 'two-teams', '--role', 'viewer', '--team', 'payments', '--team', 'orders', '--json'], { token: t.tokens.admin })));
    expect(j).toEqual({ id: expect.any(String), name: 'two-teams', role: 'viewer', teams: ['payments', 'orders'], token: expect.any(String) });
    const all = ok(await axctlIn(t, ['tokens', 'create', 'everything', '--role', 'viewer', '--team', '*'], { token: t.tokens.admin }));
    expect(all.lines[0]).toMatch(/^token \d+ \(everything, viewer\) for every team \(\*\)$/);
  });

  it("a team admin is refused tokens of other teams: the API's one line, exit 1, nothing created", async () => {
    for (const team of ['orders', '*']) {
      expect(failed(await axctlIn(t, ['tokens', 'create', `sneaky-${team === '*' ? 'all' : team}`, '--role', 'admin', '--team', team], { token: adminPay }))).toBe(
        'axctl: tokens create: this token may create tokens only for its own teams (403 FORBIDDEN)', // not "needs a higher role": it is an admin
      );
    }
    const names = json<any>(ok(await axctlIn(t, ['tokens', 'list', '--json', '--limit', '500'], { token: t.tokens.admin }))).items.map((i: any) => i.name);
    expect(names.filter((n: string) => n.startsWith('sneaky'))).toEqual([]);
    expect(failed(await axctlIn(t, ['tokens', 'create', 'x', '--role', 'viewer', '--team', 'payments'], { token: operatorPay }))).toMatch(/\(403 FORBIDDEN\); the token needs a higher role$/);
  });

  it('usage errors are exit 2: no --role, a bad role, no --team, a bad id', async () => {
    for (const args of [
      ['tokens', 'create', 'x', '--team', 'payments'],
      ['tokens', 'create', 'x', '--role', 'root', '--team', 'payments'],
      ['tokens', 'create', 'x', '--role', 'viewer'],
      ['tokens', 'revoke', 'abc'],
    ]) {
      const r = await axctlIn(t, args, { token: t.tokens.admin });
      expect({ args, code: r.code, lines: r.errLines.length }).toEqual({ args, code: 2, lines: 1 });
    }
  });
});

describe('#47 axctl calendars', () => {
  it('apply from flags creates, then replaces; list and get show it; --json is the resource', async () => {
    const made = ok(await axctlIn(t, ['calendars', 'apply', 'holidays-pay', '--team', 'payments', '--timezone', 'Europe/Paris', '--dates', '2026-12-25,2027-01-01'], { token: operatorPay }));
    expect(made.lines).toEqual(['calendar holidays-pay created: team payments, zone Europe/Paris, 2 dates (version 1)']);
    const again = ok(await axctlIn(t, ['calendars', 'apply', 'holidays-pay', '--timezone', 'Europe/Paris', '--dates', '2026-12-25', '--dates', '2026-12-24 2027-01-01'], { token: operatorPay }));
    expect(again.lines).toEqual(['calendar holidays-pay replaced: team payments, zone Europe/Paris, 3 dates (version 2)']); // the token's only team

    const table = ok(await axctlIn(t, ['calendars', 'list'], { token: operatorPay }));
    expect(table.lines[0]).toMatch(/^NAME\s+TEAM\s+TIMEZONE\s+DATES\s+NEXT DATE\s+VERSION\s+UPDATED$/);
    expect(table.lines[1]).toMatch(/^holidays-pay\s+payments\s+Europe\/Paris\s+3\s+\S+\s+2\s+\S+Z$/);
    const shown = ok(await axctlIn(t, ['calendars', 'get', 'holidays-pay']));
    expect(shown.lines).toContain('dates:      2026-12-24, 2026-12-25, 2027-01-01');
    const j = json<any>(ok(await axctlIn(t, ['calendars', 'get', 'holidays-pay', '--json'])));
    expect(j).toEqual((await t.call('GET', '/api/v1/calendars/holidays-pay')).body);
    expect(json<any>(ok(await axctlIn(t, ['calendars', 'list', '--team', 'orders', '--json']))).items).toEqual([]);
  });

  it('get -o yaml applies back unchanged, as does get --json; a file with flags: the flags win', async () => {
    const yaml = ok(await axctlIn(t, ['calendars', 'get', 'holidays-pay', '-o', 'yaml'])).stdout;
    expect(yaml).toBe('name: holidays-pay\nteam: payments\ntimezone: Europe/Paris\ndates:\n  - 2026-12-24\n  - 2026-12-25\n  - 2027-01-01\n');
    const file = path.join(dir, 'holidays.yaml');
    writeFileSync(file, yaml);
    const before = (await t.call('GET', '/api/v1/calendars/holidays-pay')).body;
    const back = json<any>(ok(await axctlIn(t, ['calendars', 'apply', '-f', file, '--json'], { token: operatorPay })));
    expect({ ...back, version: before.version, updatedAt: before.updatedAt }).toEqual(before);
    const asJson = path.join(dir, 'holidays.json');
    writeFileSync(asJson, ok(await axctlIn(t, ['calendars', 'get', 'holidays-pay', '--json'])).stdout);
    expect(json<any>(ok(await axctlIn(t, ['calendars', 'apply', '-f', asJson, '--json'], { token: operatorPay }))).dates).toEqual(before.dates);

    expect(ok(await axctlIn(t, ['calendars', 'apply', '-f', file, '--dates', '2027-05-01'], { token: operatorPay })).lines[0]).toMatch(/^calendar holidays-pay replaced: .*, 1 date \(version \d+\)$/);
    const other = path.join(dir, 'other.yaml');
    writeFileSync(other, 'team: payments\ndates: []\n');
    expect(ok(await axctlIn(t, ['calendars', 'apply', 'freeze-pay', '-f', other], { token: operatorPay })).lines).toEqual(['calendar freeze-pay created: team payments, zone UTC, 0 dates (version 1)']);
  });

  it("the API's refusals are one line, exit 1: a bad date names the field, another team's calendar is missing, delete needs admin and no task naming it", async () => {
    expect(failed(await axctlIn(t, ['calendars', 'apply', 'bad', '--team', 'payments', '--dates', '2026-02-30'], { token: operatorPay }))).toMatch(/^axctl: calendars apply: .*dates\[0\].*2026-02-30.*\(400 VALIDATION_FAILED\)$/);
    ok(await axctlIn(t, ['calendars', 'apply', 'orders-cal', '--team', 'orders', '--dates', '2026-12-25'], { token: t.tokens.admin }));
    expect(failed(await axctlIn(t, ['calendars', 'get', 'orders-cal'], { token: operatorPay }))).toBe('axctl: calendars get: calendar "orders-cal" does not exist (404 NOT_FOUND)');
    expect(failed(await axctlIn(t, ['calendars', 'apply', 'orders-cal', '--dates', '2026-12-26'], { token: operatorPay }))).toMatch(/\(404 NOT_FOUND\)$/);
    expect(failed(await axctlIn(t, ['calendars', 'delete', 'holidays-pay'], { token: operatorPay }))).toMatch(/\(403 FORBIDDEN\); the token needs a higher role$/);

    await t.call('POST', '/api/v1/tasks', { body: { name: 'pay_daily', team: 'payments', calendar: 'holidays-pay', schedule: { type: 'cron', expr: '0 2 * * *' }, exec: { type: 'shell', command: ['true'] } } });
    expect(failed(await axctlIn(t, ['calendars', 'delete', 'holidays-pay'], { token: adminPay }))).toMatch(/^axctl: calendars delete: .*pay_daily.*\(409 INVALID_STATE\)$/);
    expect(ok(await axctlIn(t, ['calendars', 'delete', 'freeze-pay'], { token: adminPay })).lines).toEqual(['calendar freeze-pay deleted']);
    expect((await t.call('GET', '/api/v1/calendars/freeze-pay')).status).toBe(404);
  });

  it('usage errors are exit 2: neither file nor dates, two names, two teams, a bad name', async () => {
    const file = path.join(dir, 'named.yaml');
    writeFileSync(file, 'name: named\nteam: orders\ndates: []\n');
    for (const args of [
      ['calendars', 'apply', 'x'],
      ['calendars', 'apply', 'other', '-f', file],
      ['calendars', 'apply', '-f', file, '--team', 'payments'],
      ['calendars', 'get', 'Bad Name'],
      ['calendars', 'apply', '--dates', '2026-12-25'],
    ]) {
      const r = await axctlIn(t, args, { token: t.tokens.admin });
      expect({ args, code: r.code, lines: r.errLines.length }).toEqual({ args, code: 2, lines: 1 });
    }
    expect(failed(await axctlIn(t, ['calendars', 'apply', '-f', path.join(dir, 'none.yaml')]))).toMatch(/^axctl: calendars apply: cannot read .*none\.yaml: no such file$/);
  });
});

describe('#47 axctl teams delete', () => {
  it('deletes a team that owns no task (its tokens go with it); refuses one with tasks, "default", and a team admin', async () => {
    ok(await axctlIn(t, ['teams', 'create', 'short-lived'], { token: t.tokens.admin }));
    const made = ok(await axctlIn(t, ['tokens', 'create', 'short-ops', '--role', 'operator', '--team', 'short-lived'], { token: t.tokens.admin }));
    const secret = /: (\S+)$/.exec(made.lines[1] ?? '')?.[1] ?? '';
    expect((await t.call('GET', '/api/v1/whoami', { token: secret })).status).toBe(200);
    expect(failed(await axctlIn(t, ['teams', 'delete', 'short-lived'], { token: adminPay }))).toMatch(/\(403 FORBIDDEN\); the token must cover every team \("\*"\)$/);
    expect(ok(await axctlIn(t, ['teams', 'delete', 'short-lived'], { token: t.tokens.admin })).lines).toEqual(['team short-lived deleted: taken off every token and worker enrollment naming it']);
    expect((await t.call('GET', '/api/v1/whoami', { token: secret })).status).toBe(401); // left with no team: revoked
    expect(failed(await axctlIn(t, ['teams', 'delete', 'short-lived'], { token: t.tokens.admin }))).toBe('axctl: teams delete: team "short-lived" does not exist (404 NOT_FOUND)');
    expect(failed(await axctlIn(t, ['teams', 'delete', 'default'], { token: t.tokens.admin }))).toMatch(/\(409 INVALID_STATE\)$/);
    await t.call('POST', '/api/v1/tasks', { body: { name: 'ord_task', team: 'orders', schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] } } });
    expect((await axctlIn(t, ['teams', 'delete', 'orders'], { token: t.tokens.admin })).errLines[0]).toMatch(/^axctl: teams delete: .*\(409 INVALID_STATE\)$/);
  });
});

describe('#47 axctl teams executor-key and rotate-key', () => {
  it("prints the team's key (what the API derives), rotates it with the grace of the previous one; another team's admin is refused", async () => {
    const cur = ok(await axctlIn(t, ['teams', 'executor-key', 'payments'], { token: adminPay }));
    expect(cur.lines[0]).toBe('team payments: current key version 1');
    const key = /^key: ([0-9a-f]{64})$/.exec(cur.lines[1] ?? '')?.[1];
    expect(key).toBe((await t.call('GET', '/api/v1/teams/payments/executor-key')).body.key);
    const rotated = ok(await axctlIn(t, ['teams', 'rotate-key', 'payments'], { token: adminPay }));
    expect(rotated.lines[0]).toMatch(/^team payments: new key version 2; version 1 verifies until \S+Z$/);
    expect(rotated.lines[1]).toMatch(/^key: [0-9a-f]{64}$/);
    expect(rotated.lines[1]).not.toBe(`key: ${key}`);
    expect(json<any>(ok(await axctlIn(t, ['teams', 'executor-key', 'payments', '--json'], { token: adminPay })))).toMatchObject({ team: 'payments', keyVersion: 2, previousValidUntil: expect.any(String) });
    expect(failed(await axctlIn(t, ['teams', 'executor-key', 'default'], { token: adminPay }))).toBe('axctl: teams executor-key: team "default" does not exist (404 NOT_FOUND)');
  });
});

describe('#47 axctl teams: alert routes', () => {
  it('--alert-route sets the routes (format, kinds), teams show lists them, --no-alert-routes drops them; a bad piece is exit 2, a bad format the API\'s 400', async () => {
    const url = 'https://hooks.slack.com/services/T0/B0/secret';
    ok(await axctlIn(t, ['teams', 'update', 'payments', '--alert-route', `${url} format=slack kinds=FINAL_FAILURE,SLA_MISS`, '--alert-route', 'https://ops.example.com/ax'], { token: t.tokens.admin }));
    expect((await t.call('GET', '/api/v1/teams?limit=500')).body.items.find((x: any) => x.name === 'payments').alertRoutes).toEqual([
      { url, format: 'slack', kinds: ['FINAL_FAILURE', 'SLA_MISS'] },
      { url: 'https://ops.example.com/ax', format: 'generic' },
    ]);
    expect(ok(await axctlIn(t, ['teams', 'show', 'payments'], { token: t.tokens.admin })).lines).toContain(`alert hooks:  slack ${url} (FINAL_FAILURE, SLA_MISS); generic https://ops.example.com/ax`);
    expect(ok(await axctlIn(t, ['teams', 'show', 'payments'], { token: operatorPay })).lines).toContain('alert hooks:  slack https://hooks.slack.com/*** (FINAL_FAILURE, SLA_MISS); generic https://ops.example.com/***');
    expect((await axctlIn(t, ['teams', 'update', 'payments', '--alert-route', `${url} colour=red`], { token: t.tokens.admin })).code).toBe(2);
    expect((await axctlIn(t, ['teams', 'update', 'payments', '--alert-route', url, '--no-alert-routes'], { token: t.tokens.admin })).code).toBe(2);
    expect(failed(await axctlIn(t, ['teams', 'update', 'payments', '--alert-route', `${url} format=teams`], { token: t.tokens.admin }))).toMatch(/^axctl: teams update: .*alertRoutes.*format.*\(400 VALIDATION_FAILED\)$/);
    ok(await axctlIn(t, ['teams', 'update', 'payments', '--no-alert-routes'], { token: t.tokens.admin }));
    expect(ok(await axctlIn(t, ['teams', 'show', 'payments'], { token: t.tokens.admin })).lines).toContain("alert hooks:  the platform's webhook only");
  });
});

describe('#47 completion', () => {
  it('lists the tokens and calendars commands and their options, each option once', async () => {
    const r = ok(await axctlIn(null, ['completion', 'bash']));
    expect(r.stdout).toMatch(/compgen -W "[^"]*\btokens calendars\b/);
    expect(r.lines).toContain('    tokens) subs="list create revoke" ;;');
    expect(r.lines).toContain('    calendars) subs="list get apply delete" ;;');
    expect(r.lines).toContain('    "tokens create") opts="--role --team --url --token --json --output --help" ;;');
    expect(r.lines).toContain('    "calendars apply") opts="--file -f --timezone --dates --url --token --team --json --output --help" ;;');
  });
});
