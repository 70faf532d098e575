/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   --json output is untyped JSON here; the assertions check its shape. */
/**
 * axctl and teams, against the real admin API (in-process, test database): `teams
 * list|show|create`, `tasks apply --team`, the `--team` filters and TEAM columns of the lists.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskYaml } from '@ax/core';
/* eslint-disable-next-line import-x/no-relative-packages -- test harness: tokens of one team, stored as the admin API's tests store them */
import { addToken } from '../../../services/admin-api/src/harness.test-helper.js';
import { axctl, axctlIn, json, killLeftovers, startApp, type AxctlResult, type TestApp } from './axctl.test-helper.js';
import { withTeam } from './commands/team-yaml.js';

let t: TestApp;
let dir: string;
let opPay: string;
let adminPay: string;

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

function ok(r: AxctlResult): AxctlResult {
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r;
}

const job = (name: string, extra = ''): string => `name: ${name}\nschedule: {type: none}\nexec: {type: shell, command: [echo, ${name}]}\n${extra}`;

beforeAll(async () => {
  t = await startApp();
  dir = mkdtempSync(path.join(tmpdir(), 'axctl-teams-'));
  opPay = await addToken(t.pool, 'op-pay', 'operator', ['payments']);
  adminPay = await addToken(t.pool, 'admin-pay', 'admin', ['payments']);
});
afterAll(async () => {
  expect(killLeftovers()).toBe(0);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  await t?.close();
});

describe('#18 axctl: teams', () => {
  it('#18 axctl: teams create NAME --description --max-running, then list and show', async () => {
    const created = ok(await axctlIn(t, ['teams', 'create', 'payments', '--description', 'the payments team', '--max-running', '3'], { token: t.tokens.admin }));
    expect(created.lines).toEqual(['team payments created (max running 3, weight 1, key version 1)']);
    expect(json<any>(ok(await axctlIn(t, ['teams', 'create', 'orders', '--json'], { token: t.tokens.admin })))).toMatchObject({ name: 'orders', description: '', maxRunning: null, keyVersion: 1 });
    const list = ok(await axctlIn(t, ['teams', 'list']));
    expect(list.lines[0]).toMatch(/^NAME\s+MAX RUNNING\s+WEIGHT\s+KEY VERSION\s+DESCRIPTION$/);
    expect(list.lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(['default', 'orders', 'payments']);
    expect(list.lines.find((l) => l.startsWith('payments'))).toMatch(/^payments\s+3\s+1\s+1\s+the payments team$/);
    expect(list.lines.find((l) => l.startsWith('orders'))).toMatch(/^orders\s+no limit\s+1\s+1\s+-$/);
    // A token of one team lists only that team.
    expect(json<any>(ok(await axctlIn(t, ['teams', 'list', '--json'], { token: opPay }))).items.map((x: any) => x.name)).toEqual(['payments']);
    const show = ok(await axctlIn(t, ['teams', 'show', 'payments'], { token: opPay }));
    expect(show.lines).toContain('name:         payments');
    expect(show.lines).toContain('max running:  3');
    expect(show.lines).toContain('tasks:        0');
    expect(show.lines).toContain('weight:       1');
    expect(show.lines).toContain('http allow:   the global list');
    expect(json<any>(ok(await axctlIn(t, ['teams', 'show', 'orders', '--json'])))).toMatchObject({ name: 'orders', keyVersion: 1 });
  });

  it('#18 axctl: another team is not found, creating needs an admin of every team, names are checked', async () => {
    const hidden = await axctlIn(t, ['teams', 'show', 'orders'], { token: opPay });
    expect([hidden.code, hidden.errLines]).toEqual([1, ['axctl: teams show: team "orders" does not exist (404 NOT_FOUND)']]);
    const teamAdmin = await axctlIn(t, ['teams', 'create', 'search'], { token: adminPay });
    expect(teamAdmin.code).toBe(1);
    expect(teamAdmin.errLines[0]).toMatch(/^axctl: teams create: .*every team.*\(403 FORBIDDEN\); the token must cover every team \("\*"\)$/);
    const exists = await axctlIn(t, ['teams', 'create', 'payments'], { token: t.tokens.admin });
    expect([exists.code, exists.errLines[0]]).toEqual([1, expect.stringMatching(/\(409 ALREADY_EXISTS\)$/)]);
    expect(await axctlIn(t, ['teams', 'create', 'Bad Team'], { token: t.tokens.admin })).toMatchObject({ code: 2, errLines: [expect.stringMatching(/^axctl: <name>: expected a team name .*"Bad Team"$/)] });
    expect(await axctlIn(t, ['teams', 'create', 'x', '--max-running', '0'], { token: t.tokens.admin })).toMatchObject({ code: 2, errLines: ['axctl: --max-running: expected an integer from 1 to 1000000, got "0"'] });
    expect(await axctlIn(t, ['tasks', 'list', '--team', 'NOPE'])).toMatchObject({ code: 2 });
  });
});

describe('#45 axctl: a team\'s weight and #44 its HTTP allowlist', () => {
  it('#45 axctl: teams create --weight --http-allow, teams update changes and resets them', async () => {
    const created = ok(await axctlIn(t, ['teams', 'create', 'ledger', '--weight', '3', '--http-allow', 'ledger.internal:8443', '--http-allow', 'ledger-b.internal'], { token: t.tokens.admin }));
    expect(created.lines).toEqual(['team ledger created (max running no limit, weight 3, key version 1)']);
    expect((await t.call('GET', '/api/v1/teams')).body.items.find((x: any) => x.name === 'ledger')).toMatchObject({ weight: 3, httpAllow: ['ledger.internal:8443', 'ledger-b.internal'] });
    const show = ok(await axctlIn(t, ['teams', 'show', 'ledger']));
    expect(show.lines).toContain('weight:       3');
    expect(show.lines).toContain('http allow:   ledger.internal:8443, ledger-b.internal');

    const updated = ok(await axctlIn(t, ['teams', 'update', 'ledger', '--weight', '5', '--max-running', '4'], { token: t.tokens.admin }));
    expect(updated.lines).toEqual(['team ledger updated (max running 4, weight 5, http allow ledger.internal:8443, ledger-b.internal)']);
    const reset = ok(await axctlIn(t, ['teams', 'update', 'ledger', '--global-http-allow', '--no-max-running', '--json'], { token: t.tokens.admin }));
    expect(json<any>(reset)).toMatchObject({ name: 'ledger', weight: 5, maxRunning: null, httpAllow: null });
  });

  it('#45 axctl: teams update refuses what the API would, with a line naming the option', async () => {
    expect(await axctlIn(t, ['teams', 'update', 'ledger', '--weight', '0'], { token: t.tokens.admin })).toMatchObject({ code: 2, errLines: ['axctl: --weight: expected an integer from 1 to 1000, got "0"'] });
    expect(await axctlIn(t, ['teams', 'update', 'ledger'], { token: t.tokens.admin })).toMatchObject({ code: 2, errLines: [expect.stringMatching(/nothing to change/)] });
    expect(await axctlIn(t, ['teams', 'update', 'ledger', '--max-running', '2', '--no-max-running'], { token: t.tokens.admin })).toMatchObject({ code: 2 });
    const notAdmin = await axctlIn(t, ['teams', 'update', 'payments', '--weight', '2'], { token: adminPay });
    expect([notAdmin.code, notAdmin.errLines[0]]).toEqual([1, expect.stringMatching(/\(403 FORBIDDEN\)/)]);
    const badHost = await axctlIn(t, ['teams', 'update', 'ledger', '--http-allow', 'http://x/y'], { token: t.tokens.admin });
    expect([badHost.code, badHost.errLines[0]]).toEqual([1, expect.stringMatching(/httpAllow.*\(400 /)]);
  });
});

describe('#18 axctl: tasks apply --team and the --team filters', () => {
  it('#18 axctl: apply --team puts the team into documents that name none', async () => {
    const yaml = file('pay.yaml', `# payments jobs\n${job('pay_settle')}---\n${job('pay_refunds', 'team: payments\n')}`);
    const r = ok(await axctlIn(t, ['tasks', 'apply', '-f', yaml, '--team', 'payments'], { token: opPay }));
    expect(r.lines.at(-1)).toBe('2 created, 0 updated, 0 unchanged');
    for (const name of ['pay_settle', 'pay_refunds']) expect((await t.call('GET', `/api/v1/tasks/${name}`)).body.team).toBe('payments');
    // The same file again, through the binary and stdin: unchanged.
    const again = await axctl(t, ['tasks', 'apply', '-f', '-', '--team', 'payments', '--json'], { token: opPay, stdin: `${job('pay_settle')}---\n${job('pay_refunds')}` });
    expect(json(ok(again))).toEqual({ created: [], updated: [], unchanged: ['pay_settle', 'pay_refunds'] });
  });

  it('#18 axctl: a document naming another team than --team is an error naming both; nothing is applied', async () => {
    const yaml = file('mixed.yaml', `${job('pay_new')}---\n${job('ord_sneaky', 'team: orders\n')}`);
    const r = await axctlIn(t, ['tasks', 'apply', '-f', yaml, '--team', 'payments'], { token: opPay });
    expect(r.code).toBe(1);
    expect(r.errLines).toEqual([`axctl: tasks apply: ${yaml}: document 2 (task "ord_sneaky") names team "orders", not --team "payments"; nothing was applied`]);
    const explicitDefault = file('default.yaml', job('def_named', 'team: default\n'));
    expect((await axctlIn(t, ['tasks', 'apply', '-f', explicitDefault, '--team', 'payments'], { token: opPay })).errLines[0]).toMatch(/names team "default", not --team "payments"/);
    expect((await t.call('GET', '/api/v1/tasks/pay_new')).status).toBe(404);
    // Without --team a file names its team itself (the API decides what the token may do).
    const own = await axctlIn(t, ['tasks', 'apply', '-f', file('ord.yaml', job('ord_export', 'team: orders\n'))], { token: opPay });
    expect([own.code, own.errLines[0]]).toEqual([1, 'axctl: tasks apply: team "orders" does not exist; this token\'s teams: payments (set "team: payments") (404 NOT_FOUND)']);
    ok(await axctlIn(t, ['tasks', 'apply', '-f', file('ord2.yaml', job('ord_export')), '--team', 'orders'], { token: t.tokens.admin }));
  });

  it('#47 axctl: a token of one team applies files without `team:` and without --team into its team', async () => {
    ok(await axctlIn(t, ['tasks', 'apply', '-f', file('own1.yaml', job('pay_own_one'))], { token: opPay }));
    const folder = path.join(dir, 'jobs-own');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'a.yaml'), job('pay_own_dir'));
    ok(await axctlIn(t, ['apply', '-f', folder], { token: opPay }));
    for (const name of ['pay_own_one', 'pay_own_dir']) expect((await t.call('GET', `/api/v1/tasks/${name}`)).body.team).toBe('payments');
    // A token of every team keeps the API's default.
    ok(await axctlIn(t, ['tasks', 'apply', '-f', file('any.yaml', job('any_default'))], { token: t.tokens.admin }));
    expect((await t.call('GET', '/api/v1/tasks/any_default')).body.team).toBe('default');
    for (const name of ['pay_own_one', 'pay_own_dir', 'any_default']) expect((await t.call('DELETE', `/api/v1/tasks/${name}`)).status).toBe(204);
  });

  it('#18 axctl: tasks list and instances list: a TEAM column and --team', async () => {
    ok(await axctlIn(t, ['tasks', 'trigger', 'pay_settle']));
    ok(await axctlIn(t, ['tasks', 'trigger', 'ord_export']));
    const all = ok(await axctlIn(t, ['tasks', 'list']));
    expect(all.lines[0]).toMatch(/^NAME\s+TEAM\s+ENABLED/);
    expect(all.lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2).join(' '))).toEqual(['ord_export orders', 'pay_refunds payments', 'pay_settle payments']);
    const pay = ok(await axctlIn(t, ['tasks', 'list', '--team', 'payments']));
    expect(pay.lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(['pay_refunds', 'pay_settle']);
    // A team token sees nothing of another team, filter or not.
    expect(ok(await axctlIn(t, ['tasks', 'list', '--team', 'orders'], { token: opPay })).lines).toHaveLength(1);
    expect(ok(await axctlIn(t, ['tasks', 'list'], { token: opPay })).lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(['pay_refunds', 'pay_settle']);
    const inst = ok(await axctlIn(t, ['instances', 'list', '--team', 'orders']));
    expect(inst.lines[0]).toMatch(/^\s*ID\s+TASK\s+TEAM\s+BIZ DATE/);
    expect(inst.lines.slice(1).map((l) => l.trim().split(/\s+/).slice(1, 3).join(' '))).toEqual(['ord_export orders']);
    expect(json<any>(ok(await axctlIn(t, ['instances', 'list', '--team', 'orders', '--json'], { token: opPay }))).items).toEqual([]);
    expect(ok(await axctlIn(t, ['tasks', 'get', 'pay_settle'])).lines).toContain('team:             payments');
    expect(ok(await axctlIn(t, ['teams', 'show', 'payments'])).lines).toContain('tasks:        2');
  });
});

describe('#18 axctl: withTeam (the YAML text)', () => {
  const teams = (yaml: string): string[] => {
    const parsed = parseTaskYaml(yaml);
    if (!parsed.ok) throw new Error(parsed.issues.map((i) => i.message).join('; '));
    return parsed.value.map((d) => d.team);
  };

  it('#18 axctl: adds the line at the end of each document, keeping the lines before it, with comments, `...` and block scalars', () => {
    const yaml = `%YAML 1.2\n---\n${job('a')}# trailing comment\n...\n---\n# only a comment\n---\nname: b\nschedule: {type: none}\nexec: {type: shell, command: [sh, -c, "x"]}\ndescription: |+\n  kept\n\n`;
    const out = withTeam(yaml, 'payments');
    if (!out.ok) throw new Error(out.message);
    expect(teams(out.yaml)).toEqual(['payments', 'payments']);
    expect(out.yaml.split('\n').slice(0, 6)).toEqual(yaml.split('\n').slice(0, 6));
    const parsed = parseTaskYaml(out.yaml);
    expect(parsed.ok && parsed.value[1]?.description).toBe('kept\n\n');
  });

  it('#18 axctl: a flow-mapping document cannot take the line: an error, not a guess; an invalid file goes to the API unchanged', () => {
    const flow = '{name: f, schedule: {type: none}, exec: {type: shell, command: [x]}}\n';
    expect(withTeam(flow, 'payments')).toEqual({ ok: false, message: 'cannot add team "payments" to the file; write "team: payments" in each document instead of --team' });
    expect(withTeam(`${flow.slice(0, -2)}, team: payments}\n`, 'payments')).toMatchObject({ ok: true });
    expect(withTeam('name: broken\n', 'payments')).toEqual({ ok: true, yaml: 'name: broken\n' });
  });
});
