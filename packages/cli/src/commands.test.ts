/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   --json output is untyped JSON here; the assertions check its shape. */
/**
 * Every command against the real admin API (in-process, test database): its table, its
 * `--json` (the API's JSON) and a failure. Commands run through `run` in this process; the
 * failure path of every command is also run through the built binary for its exit code and
 * its one stderr line.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@ax/kit';
import { publishRegistration } from '@ax/redis';
import { axctl, axctlIn, insertInstance, json, killLeftovers, startApp, type AxctlResult, type TestApp } from './axctl.test-helper.js';
import { COMMANDS } from './main.js';

let t: TestApp;
let dir: string;
const D1 = '2026-11-01';
const D2 = '2026-11-02';
const ids: Record<string, string> = {};

const TASKS_YAML = `name: cli_http
description: daily order statistics
schedule: {type: cron, expr: "0 2 * * *", timezone: Asia/Shanghai}
exec: {type: http, url: "http://orders.internal:8080/ax/order_stat"}
tags: [etl]
---
name: cli_shell
schedule: {type: none}
exec: {type: shell, command: [echo, "{{bizDate}}"]}
`;

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** Exit 1, nothing on stdout, one stderr line; answers it. */
function failed(r: AxctlResult): string {
  expect(r.code, r.stderr).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.errLines).toHaveLength(1);
  return r.errLines[0] ?? '';
}

/** Exit 0 and nothing on stderr. */
function ok(r: AxctlResult): AxctlResult {
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r;
}

beforeAll(async () => {
  t = await startApp();
  dir = mkdtempSync(path.join(tmpdir(), 'axctl-'));
  // a DAG for reruns: r_a → r_b, instances on two business dates
  for (const name of ['r_a', 'r_b']) {
    await t.call('POST', '/api/v1/tasks', { body: { name, schedule: { type: 'cron', expr: '0 2 * * *' }, exec: { type: 'shell', command: ['true'] } } });
  }
  await t.call('POST', '/api/v1/edges', { body: { parent: 'r_a', child: 'r_b' } });
  ids['a1'] = await insertInstance(t.pool, { task: 'r_a', expected: `${D1}T02:00:00.000Z`, bizDate: D1, state: 'SUCCESS' });
  ids['b1'] = await insertInstance(t.pool, { task: 'r_b', expected: `${D1}T02:00:00.000Z`, bizDate: D1, state: 'SUCCESS' });
  ids['a2'] = await insertInstance(t.pool, { task: 'r_a', expected: `${D2}T02:00:00.000Z`, bizDate: D2, state: 'SUCCESS' });
  ids['b2'] = await insertInstance(t.pool, { task: 'r_b', expected: `${D2}T02:00:00.000Z`, bizDate: D2, state: 'FAILED' });
});
afterAll(async () => {
  expect(killLeftovers()).toBe(0);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  await t?.close();
});

describe('tasks', () => {
  it('apply -f creates, then reports unchanged and updated; --json is the API answer', async () => {
    const yaml = file('jobs.yaml', TASKS_YAML);
    const first = ok(await axctlIn(t, ['tasks', 'apply', '-f', yaml]));
    expect(first.lines).toEqual(['TASK       RESULT', 'cli_http   created', 'cli_shell  created', '2 created, 0 updated, 0 unchanged']);
    expect(json(ok(await axctlIn(t, ['tasks', 'apply', '-f', yaml, '--json'])))).toEqual({ created: [], updated: [], unchanged: ['cli_http', 'cli_shell'] });
    const changed = file('jobs2.yaml', TASKS_YAML.replace('daily order statistics', 'order statistics, daily'));
    expect(ok(await axctlIn(t, ['tasks', 'apply', '--file', changed])).lines.at(-1)).toBe('0 created, 1 updated, 1 unchanged');
  });

  it('apply -f of an invalid file prints every issue and changes nothing (exit 1)', async () => {
    const bad = file('bad.yaml', 'name: cli_bad\nschedule: {type: none}\n---\nname: cli_bad2\nschedule: {type: none}\nexec: {type: shell, command: [x]}\npriority: 42\n');
    const r = await axctlIn(t, ['tasks', 'apply', '-f', bad]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.errLines[0]).toBe(`axctl: tasks apply: ${bad} is not valid, nothing was applied (400 VALIDATION_FAILED):`);
    expect(r.errLines.slice(1).join('\n')).toMatch(/^ {2}document 1.*exec/m);
    expect(r.errLines.slice(1).join('\n')).toMatch(/^ {2}document 2.*priority/m);
    expect((await t.call('GET', '/api/v1/tasks/cli_bad2')).status).toBe(404);
  });

  it('list: a table, filters, --json', async () => {
    const r = ok(await axctlIn(t, ['tasks', 'list']));
    expect(r.lines[0]).toMatch(/^NAME\s+TEAM\s+ENABLED\s+SCHEDULE\s+EXEC\s+NEXT FIRE\s+LAST FIRE\s+VERSION$/);
    const http = r.lines.find((l) => l.startsWith('cli_http '));
    expect(http).toMatch(/cli_http\s+default\s+yes\s+cron 0 2 \* \* \* \(Asia\/Shanghai\)\s+http http:\/\/orders\.internal:8080\/ax\/order_stat\s+-\s+-\s+2$/);
    expect(r.lines.map((l) => l.split(' ')[0])).toEqual(['NAME', 'cli_http', 'cli_shell', 'r_a', 'r_b']);
    const tagged = json<any>(ok(await axctlIn(t, ['tasks', 'list', '--tag', 'etl', '--json'])));
    expect(tagged.items.map((i: any) => i.name)).toEqual(['cli_http']);
    expect(tagged.nextCursor).toBeNull();
    const page = await axctlIn(t, ['tasks', 'list', '--limit', '1']);
    expect(page.lines).toHaveLength(2);
    expect(page.errLines[0]).toMatch(/^\(more results: add --cursor \S+\)$/);
    const cursor = /--cursor (\S+)\)/.exec(page.errLines[0] ?? '')?.[1] ?? '';
    const second = await axctlIn(t, ['tasks', 'list', '--limit', '1', '--cursor', cursor, '--token', t.tokens.viewer]);
    expect(second.code).toBe(0);
    expect(second.lines[1]).toMatch(/^cli_shell /);
    expect(await axctlIn(t, ['tasks', 'list', '--enabled', 'maybe'])).toMatchObject({ code: 2, errLines: ['axctl: --enabled: expected true or false, got "maybe"'] });
  });

  it('get: the task, --json, 404', async () => {
    const r = ok(await axctlIn(t, ['tasks', 'get', 'cli_http']));
    expect(r.lines).toContain('name:             cli_http');
    expect(r.lines).toContain('schedule:         cron 0 2 * * * (Asia/Shanghai)');
    expect(r.lines).toContain('retry:            max 0, backoff 30s ×2 ±10s');
    const j = json<any>(ok(await axctlIn(t, ['tasks', 'get', 'cli_http', '--json'])));
    expect(j).toEqual((await t.call('GET', '/api/v1/tasks/cli_http')).body);
    expect(failed(await axctlIn(t, ['tasks', 'get', 'nope']))).toBe('axctl: tasks get: task "nope" does not exist (404 NOT_FOUND)');
  });

  it('disable and enable: a line, --json, 404 and 403', async () => {
    expect(ok(await axctlIn(t, ['tasks', 'disable', 'cli_http'])).lines[0]).toMatch(/^task cli_http disabled \(version 3, next fire -\)$/);
    expect((await t.call('GET', '/api/v1/tasks/cli_http')).body.enabled).toBe(false);
    expect(json<any>(ok(await axctlIn(t, ['tasks', 'enable', 'cli_http', '--json']))).enabled).toBe(true);
    expect(ok(await axctlIn(t, ['tasks', 'disable', 'cli_http', '--json'])).stdout).toContain('"enabled": false');
    expect(ok(await axctlIn(t, ['tasks', 'enable', 'cli_http'])).lines[0]).toMatch(/^task cli_http enabled \(version 6, next fire (-|20\d\d-\S+Z)\)$/);
    expect(failed(await axctlIn(t, ['tasks', 'enable', 'nope']))).toBe('axctl: tasks enable: task "nope" does not exist (404 NOT_FOUND)');
    expect(failed(await axctlIn(t, ['tasks', 'disable', 'cli_http'], { token: t.tokens.viewer }))).toMatch(/^axctl: tasks disable: .+ \(403 FORBIDDEN\); the token needs a higher role$/);
    // #47: a reason goes to the audit.
    ok(await axctlIn(t, ['tasks', 'disable', 'cli_http', '--reason', 'upstream outage INC-9']));
    const audit = await t.call('GET', '/api/v1/audit?limit=5', { token: t.tokens.admin });
    expect(audit.body.items.find((e: any) => e.action === 'task.disable')?.reason).toBe('upstream outage INC-9');
    ok(await axctlIn(t, ['tasks', 'enable', 'cli_http']));
  });

  it('trigger: params, business date, idempotency key; --json; 404', async () => {
    const r = ok(await axctlIn(t, ['tasks', 'trigger', 'cli_shell', '--param', 'k=v', '--param', 'n=1', '--biz-date', '2026-11-05']));
    const id = /instance (\d+)$/.exec(r.lines[0] ?? '')?.[1] ?? '';
    expect(r.lines[0]).toBe(`task cli_shell triggered: instance ${id}`);
    expect(r.lines).toContain('biz date:  2026-11-05');
    expect(r.lines).toContain('params:    {"k":"v","n":"1"}');
    ids['trig'] = id;
    const j = json<any>(ok(await axctlIn(t, ['tasks', 'trigger', 'cli_shell', '--json', '--idempotency-key', 'deploy-42'])));
    expect(j).toMatchObject({ taskName: 'cli_shell', trigger: 'manual', state: 'PENDING' });
    const again = ok(await axctlIn(t, ['tasks', 'trigger', 'cli_shell', '--idempotency-key', 'deploy-42']));
    expect(again.lines[0]).toBe(`task cli_shell: instance ${j.id} already triggered with this idempotency key`);
    ids['trig2'] = j.id;
    expect(failed(await axctlIn(t, ['tasks', 'trigger', 'nope']))).toBe('axctl: tasks trigger: task "nope" does not exist (404 NOT_FOUND)');
  });
});

describe('instances', () => {
  it('list: a table, filters, --json, a refused filter', async () => {
    const r = ok(await axctlIn(t, ['instances', 'list', '--task', 'cli_shell']));
    expect(r.lines[0]).toMatch(/^\s*ID\s+TASK\s+TEAM\s+BIZ DATE\s+EXPECTED\s+STATE\s+WAITING\s+ATTEMPT\s+RUN\s+TRIGGER\s+WORKER\s+DURATION\s+REASON$/);
    expect(r.lines.slice(1).map((l) => l.trim().split(/\s+/)[0])).toEqual([ids['trig2'], ids['trig']]);
    expect(r.lines[2]).toMatch(/cli_shell\s+default\s+2026-11-05\s+\S+Z\s+PENDING\s+-\s+\d\/1\s+1\s+manual\s+-\s+-\s+-$/);
    const j = json<any>(ok(await axctlIn(t, ['instances', 'list', '--state', 'failed', '--biz-date', D2, '--json'])));
    expect(j.items.map((i: any) => i.id)).toEqual([ids['b2']]);
    const ranged = json<any>(ok(await axctlIn(t, ['instances', 'list', '--task', 'r_a', '--from', D1, '--to', `${D2}T00:00:00Z`, '--json'])));
    expect(ranged.items.map((i: any) => i.id)).toEqual([ids['a1']]);
    expect(failed(await axctlIn(t, ['instances', 'list', '--state', 'BOGUS']))).toMatch(/^axctl: instances list: invalid request: state: .*\(400 VALIDATION_FAILED\)$/);
    expect(await axctlIn(t, ['instances', 'list', '--from', 'yesterday'])).toMatchObject({ code: 2 });
  });

  it('get: fields, executions, events; --json; 404', async () => {
    const r = ok(await axctlIn(t, ['instances', 'get', ids['trig'] ?? '']));
    expect(r.lines[0]).toBe(`id:        ${ids['trig']}`);
    expect(r.lines).toContain('Events:');
    expect(r.lines).toContain('Executions:');
    const j = json<any>(ok(await axctlIn(t, ['instances', 'get', ids['trig'] ?? '', '--json'])));
    expect(j.id).toBe(ids['trig']);
    expect(Array.isArray(j.events)).toBe(true);
    expect(j.events.length).toBeGreaterThan(0);
    expect(r.stdout).toContain(j.events[0].type);
    expect(failed(await axctlIn(t, ['instances', 'get', '999999']))).toBe('axctl: instances get: instance "999999" does not exist (404 NOT_FOUND)');
  });

  it('cancel: a line, --json, 409 when final', async () => {
    expect(ok(await axctlIn(t, ['instances', 'cancel', ids['trig'] ?? ''])).lines).toEqual([`instance ${ids['trig']} (cli_shell) canceled: CANCELED (CANCELED_BY_USER)`]);
    expect(json<any>(ok(await axctlIn(t, ['instances', 'cancel', ids['trig2'] ?? '', '--json'])))).toMatchObject({ id: ids['trig2'], state: 'CANCELED' });
    expect(failed(await axctlIn(t, ['instances', 'cancel', ids['trig'] ?? '']))).toMatch(/^axctl: instances cancel: instance \d+ is CANCELED, a final state \(409 INVALID_STATE\)$/);
  });
});

describe('rerun', () => {
  it('instance: --dry-run table, run, --json, 409 when not final', async () => {
    const dry = ok(await axctlIn(t, ['rerun', 'instance', ids['b2'] ?? '', '--reason', 'fixed the input', '--dry-run']));
    expect(dry.lines[0]).toBe('dry run: 1 instance would run; nothing was changed');
    expect(dry.lines[2]).toMatch(new RegExp(`^rerun\\s+${ids['b2']}\\s+r_b\\s+${D2}\\s+\\S+Z\\s+FAILED → PENDING\\s+2$`));
    const r = ok(await axctlIn(t, ['rerun', 'instance', ids['b2'] ?? '', '--reason', 'fixed the input']));
    expect(r.lines[0]).toMatch(new RegExp(`^rerun batch \\d+: 1 instance will run: ${ids['b2']}$`));
    expect((await t.call('GET', `/api/v1/instances/${ids['b2']}`)).body.state).toBe('PENDING');
    expect(failed(await axctlIn(t, ['rerun', 'instance', ids['b2'] ?? '', '--reason', 'again']))).toMatch(/\(409 INVALID_STATE\)$/);
    const j = json<any>(ok(await axctlIn(t, ['rerun', 'instance', ids['trig'] ?? '', '--reason', 'r', '--json'])));
    expect(j).toEqual({ instances: [ids['trig']], batchId: expect.any(String) });
  });

  it('dag: --force-downstream needs admin; dry run; run; --json', async () => {
    expect(failed(await axctlIn(t, ['rerun', 'dag', '--root', 'r_a', '--biz-date', D1, '--reason', 'r', '--force-downstream']))).toMatch(/forceDownstream needs the admin role \(403 FORBIDDEN\)/);
    const dry = json<any>(ok(await axctlIn(t, ['rerun', 'dag', '--root', 'r_a', '--biz-date', D1, '--reason', 'r', '--force-downstream', '--dry-run', '--json'], { token: t.tokens.admin })));
    expect(dry.instances.map((i: any) => [i.id, i.state])).toEqual([[ids['a1'], 'PENDING'], [ids['b1'], 'WAITING']]);
    const plain = ok(await axctlIn(t, ['rerun', 'dag', '--root', 'r_a', '--biz-date', D1, '--reason', 'r', '--dry-run']));
    expect(plain.lines[0]).toBe('dry run: 1 instance would run; nothing was changed');
    expect(ok(await axctlIn(t, ['rerun', 'dag', '--root', 'r_a', '--biz-date', D1, '--reason', 'r', '--force-downstream'], { token: t.tokens.admin })).lines[0]).toMatch(
      new RegExp(`^rerun batch \\d+: 2 instances will run: ${ids['a1']}, ${ids['b1']}$`),
    );
    expect(failed(await axctlIn(t, ['rerun', 'dag', '--root', 'nope', '--biz-date', D1, '--reason', 'r']))).toBe('axctl: rerun dag: task "nope" does not exist (404 NOT_FOUND)');
  });

  it('failed: dry run, --json run of the failed and canceled of a date', async () => {
    await t.pool.query("UPDATE task_instance SET state = 'FAILED', ended_at = NOW() WHERE id = ?", [ids['b2']]);
    const dry = ok(await axctlIn(t, ['rerun', 'failed', '--biz-date', D2, '--root', 'r_a', '--reason', 'r', '--dry-run']));
    expect(dry.lines).toHaveLength(3);
    const j = json<any>(ok(await axctlIn(t, ['rerun', 'failed', '--biz-date', D2, '--reason', 'r', '--json'])));
    expect(j.instances).toEqual([ids['b2']]);
    expect(ok(await axctlIn(t, ['rerun', 'failed', '--biz-date', '2026-01-01', '--reason', 'r'])).lines).toEqual([expect.stringMatching(/^rerun batch \d+: 0 instances will run$/)]);
    expect(failed(await axctlIn(t, ['rerun', 'failed', '--biz-date', D2, '--root', 'nope', '--reason', 'r']))).toMatch(/\(404 NOT_FOUND\)$/);
  });

  it('backfill: dry run lists the slots to create; run with --concurrency; --json; 404', async () => {
    const dry = ok(await axctlIn(t, ['rerun', 'backfill', '--task', 'r_a', '--from', '2026-10-01', '--to', '2026-10-03', '--reason', 'r', '--dry-run']));
    expect(dry.lines[0]).toBe('dry run: 3 instances would run; nothing was changed');
    expect(dry.lines[2]).toMatch(/^create\s+-\s+r_a\s+2026-10-01\s+2026-10-01T02:00:00.000Z\s+PENDING\s+-$/);
    const j = json<any>(ok(await axctlIn(t, ['rerun', 'backfill', '--task', 'r_a', '--from', '2026-10-01', '--to', '2026-10-03', '--concurrency', '2', '--reason', 'r', '--json'])));
    expect(j.instances).toHaveLength(3);
    expect(ok(await axctlIn(t, ['rerun', 'backfill', '--task', 'r_a', '--from', '2026-10-04', '--to', '2026-10-04', '--reason', 'r'])).lines[0]).toMatch(/^rerun batch \d+: 1 instance will run: \d+$/);
    expect(failed(await axctlIn(t, ['rerun', 'backfill', '--task', 'nope', '--from', D1, '--to', D1, '--reason', 'r']))).toMatch(/\(404 NOT_FOUND\)$/);
  });
});

describe('workers', () => {
  it('list and drain: tables, --json, 404', async () => {
    const now = new Date().toISOString();
    await publishRegistration(t.redis.redis, redisKeys(t.namespace), { workerId: 'w9', host: 'h9', tags: ['etl'], cores: 2, slots: 8, running: 1, runningExecutionIds: [], avgDurationMs5m: 1500, draining: false, version: '1.2.3', startedAt: now, at: now }, 60_000);
    const r = ok(await axctlIn(t, ['workers']));
    expect(r.lines[0]).toMatch(/^ID\s+HOST\s+STATE\s+RUNNING\s+CORES\s+AVG\s+TAGS\s+VERSION\s+LAST HEARTBEAT$/);
    expect(r.lines[1]).toMatch(/^w9\s+h9\s+active\s+1\/8\s+2\s+1\.5s\s+etl\s+1\.2\.3\s+\S+Z$/);
    expect(ok(await axctlIn(t, ['workers', 'drain', 'w9'])).lines).toEqual(['worker w9 draining: no new work is routed to it']);
    expect(json<any>(ok(await axctlIn(t, ['workers', 'list', '--json']))).items[0]).toMatchObject({ id: 'w9', state: 'draining' });
    expect(json(ok(await axctlIn(t, ['workers', 'drain', 'w9', '--json'])))).toEqual({ id: 'w9', state: 'draining' });
    expect(failed(await axctlIn(t, ['workers', 'drain', 'ghost']))).toBe('axctl: workers drain: worker "ghost" does not exist (404 NOT_FOUND)');
    expect(ok(await axctlIn(t, ['workers', 'undrain', 'w9'])).lines).toEqual(['worker w9 active: new work is routed to it again']);
    expect(json<any>(ok(await axctlIn(t, ['workers', 'list', '--json']))).items[0]).toMatchObject({ id: 'w9', state: 'active' });
  });
});

describe('status and the dispatch switch (#47)', () => {
  it('status shows the pause with its reason, workers, backlog and late; dispatch pause/show/resume', async () => {
    const admin = { token: t.tokens.admin };
    const paused = ok(await axctlIn(t, ['dispatch', 'pause', '--reason', 'broker upgrade'], admin));
    expect(paused.lines).toHaveLength(1);
    expect(paused.lines[0]).toMatch(/^dispatch PAUSED since \S+Z by \S+: broker upgrade$/);
    expect(ok(await axctlIn(t, ['dispatch', 'show'])).lines[0]).toMatch(/: broker upgrade$/);
    const status = ok(await axctlIn(t, ['status']));
    expect(status.lines[0]).toMatch(/^dispatch:\s+PAUSED since \S+Z by \S+: broker upgrade$/);
    expect(status.lines[1]).toMatch(/^workers:\s+\d+ live, \d+ draining$/);
    expect(status.lines[2]).toMatch(/^backlog:\s+\d+ waiting/);
    expect(status.lines[3]).toMatch(/^late:\s+\d+$/);
    expect(json<any>(ok(await axctlIn(t, ['status', '--json'])))).toMatchObject({ dispatch: { paused: true, reason: 'broker upgrade' }, workers: { live: expect.any(Number) } });
    expect(ok(await axctlIn(t, ['dispatch', 'resume'], admin)).lines).toEqual(['dispatch running']);
  });
});

describe('task versions', () => {
  it('versions lists the saves newest first, diff shows the YAML lines that changed, rollback saves an old one as new', async () => {
    await t.call('POST', '/api/v1/tasks', { body: { name: 'cli_ver', description: 'first', schedule: { type: 'none' }, exec: { type: 'shell', command: ['echo', 'one'] } } });
    const current = (await t.call('GET', '/api/v1/tasks/cli_ver')).body;
    await t.call('PUT', '/api/v1/tasks/cli_ver', { body: { ...current, description: 'second', exec: { type: 'shell', command: ['echo', 'two'] } } });

    const listed = ok(await axctlIn(t, ['tasks', 'versions', 'cli_ver']));
    expect(listed.lines[0]).toMatch(/^VERSION\s+AT\s+BY\s+ENABLED\s+DESCRIPTION$/);
    expect(listed.lines.slice(1).map((l) => l.trim().split(/\s+/).filter((_c, i) => i !== 1))).toEqual([
      ['2', 'admin-user', 'yes', 'second'],
      ['1', 'admin-user', 'yes', 'first'],
    ]);
    expect(json<any>(ok(await axctlIn(t, ['tasks', 'versions', 'cli_ver', '--json']))).items.map((v: any) => v.version)).toEqual([2, 1]);

    const diff = ok(await axctlIn(t, ['tasks', 'diff', 'cli_ver', '--from', '1', '--to', '2']));
    expect(diff.lines.slice(0, 2)).toEqual(['--- cli_ver version 1', '+++ cli_ver version 2']);
    expect(diff.lines.slice(2).filter((l) => /^[-+]/.test(l))).toEqual(['-description: first', '+description: second', '-    - one', '+    - two']);
    expect(diff.lines.at(-1)).toBe('2 added, 2 removed');
    expect(ok(await axctlIn(t, ['tasks', 'diff', 'cli_ver', '--from', '2', '--to', '2'])).lines.at(-1)).toBe('no differences');

    const back = ok(await axctlIn(t, ['tasks', 'rollback', 'cli_ver', '--version', '1', '--reason', 'two was wrong']));
    expect(back.lines).toEqual(['task cli_ver is at the definition of version 1 (now version 3)']);
    expect((await t.call('GET', '/api/v1/tasks/cli_ver')).body).toMatchObject({ version: 3, description: 'first' });
    const usage = await axctlIn(t, ['tasks', 'rollback', 'cli_ver']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--version is required');
  });
});

describe('the built binary', () => {
  it('exits 1 with one stderr line on the failure path of every command', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['tasks', 'list', '--tag', 'x'.repeat(100)], /^axctl: tasks list: invalid request: tag: .*\(400 VALIDATION_FAILED\)$/],
      [['tasks', 'get', 'nope'], /^axctl: tasks get: task "nope" does not exist \(404 NOT_FOUND\)$/],
      [['tasks', 'apply', '-f', path.join(dir, 'none.yaml')], /^axctl: tasks apply: cannot read .*none\.yaml: no such file$/],
      [['tasks', 'enable', 'nope'], /\(404 NOT_FOUND\)$/],
      [['tasks', 'disable', 'nope'], /\(404 NOT_FOUND\)$/],
      [['tasks', 'trigger', 'nope'], /^axctl: tasks trigger: task "nope" does not exist \(404 NOT_FOUND\)$/],
      [['instances', 'list', '--state', 'BOGUS'], /\(400 VALIDATION_FAILED\)$/],
      [['instances', 'get', '999999'], /^axctl: instances get: instance "999999" does not exist \(404 NOT_FOUND\)$/],
      [['instances', 'cancel', ids['trig2'] ?? ''], /\(409 INVALID_STATE\)$/],
      [['rerun', 'instance', '999999', '--reason', 'r'], /^axctl: rerun instance: instance "999999" does not exist \(404 NOT_FOUND\)$/],
      [['rerun', 'dag', '--root', 'nope', '--biz-date', D1, '--reason', 'r'], /\(404 NOT_FOUND\)$/],
      [['rerun', 'failed', '--root', 'nope', '--biz-date', D1, '--reason', 'r'], /\(404 NOT_FOUND\)$/],
      [['rerun', 'backfill', '--task', 'nope', '--from', D1, '--to', D1, '--reason', 'r'], /\(404 NOT_FOUND\)$/],
      [['workers'], /^axctl: workers: .*\(401 UNAUTHENTICATED\); check AX_TOKEN or --token$/],
      [['workers', 'drain', 'ghost'], /^axctl: workers drain: worker "ghost" does not exist \(404 NOT_FOUND\)$/],
      [['workers', 'undrain', 'ghost'], /^axctl: workers undrain: worker "ghost" does not exist \(404 NOT_FOUND\)$/],
      [['status'], /^axctl: status: .*\(401 UNAUTHENTICATED\); check AX_TOKEN or --token$/],
      [['dispatch', 'show'], /^axctl: dispatch show: .*\(401 UNAUTHENTICATED\); check AX_TOKEN or --token$/],
      [['dispatch', 'pause', '--reason', 'r'], /^axctl: dispatch pause: .*\(403 FORBIDDEN\); the token needs a higher role$/],
      [['dispatch', 'resume'], /^axctl: dispatch resume: .*\(403 FORBIDDEN\); the token needs a higher role$/],
      [['workers', 'enroll', '--name', 'x', '--team', 'default'], /^axctl: workers enroll: .*\(403 FORBIDDEN\); the token needs a higher role$/],
      [['workers', 'enrollments'], /^axctl: workers enrollments: .*\(403 FORBIDDEN\); the token needs a higher role$/],
      [['workers', 'revoke', 'enr-000000000000'], /^axctl: workers revoke: .*\(403 FORBIDDEN\); the token needs a higher role$/],
      [['teams', 'list', '--cursor', 'not-a-cursor'], /^axctl: teams list: .*\(400 VALIDATION_FAILED\)$/],
      [['teams', 'show', 'nosuch'], /^axctl: teams show: team "nosuch" does not exist \(404 NOT_FOUND\)$/],
      [['teams', 'create', 'default'], /^axctl: teams create: .*\(403 FORBIDDEN\); the token needs a higher role$/],
      [['teams', 'update', 'default', '--weight', '2'], /^axctl: teams update: .*\(403 FORBIDDEN\); the token needs a higher role$/],
      [['teams', 'delete', 'nosuch'], /^axctl: teams delete: .*\(403 FORBIDDEN\); the token needs a higher role$/],
      [['teams', 'executor-key', 'default'], /^axctl: teams executor-key: .*\(403 FORBIDDEN\); the token needs a higher role$/],
      [['teams', 'rotate-key', 'default'], /^axctl: teams rotate-key: .*\(403 FORBIDDEN\); the token needs a higher role$/],
      [['tail', '--instance', '999999'], /^axctl: tail: instance "999999" does not exist \(404 NOT_FOUND\)$/],
      [['logs', '999999'], /^axctl: logs: instance 999999 not found \(404 NOT_FOUND\)$/],
      [['apply', '-f', path.join(dir, 'none')], /^axctl: apply: cannot read .*none: no such file or folder$/],
      [['tasks', 'delete', 'cli_http'], /^axctl: tasks delete: .*\(403 FORBIDDEN\); the token needs a higher role$/],
      [['tasks', 'versions', 'nope'], /^axctl: tasks versions: task "nope" does not exist \(404 NOT_FOUND\)$/],
      [['tasks', 'diff', 'cli_http', '--from', '1', '--to', '99'], /^axctl: tasks diff: version 99 of task "cli_http" does not exist \(404 NOT_FOUND\)$/],
      [['tasks', 'rollback', 'cli_http', '--version', '99'], /^axctl: tasks rollback: version 99 of task "cli_http" does not exist \(404 NOT_FOUND\)$/],
      [['edges', 'add', 'nope', 'cli_http'], /^axctl: edges add: task "nope" does not exist \(404 NOT_FOUND\)$/],
      [['edges', 'rm', 'nope', 'cli_http'], /\(404 NOT_FOUND\)$/],
      [['edges', 'list'], /^axctl: edges list: .*\(401 UNAUTHENTICATED\); check AX_TOKEN or --token$/],
      [['dag', 'show', 'nope'], /^axctl: dag show: task "nope" does not exist \(404 NOT_FOUND\)$/],
      [['tokens', 'list'], /^axctl: tokens list: .*\(401 UNAUTHENTICATED\); check AX_TOKEN or --token$/],
      [['tokens', 'create', 'x', '--role', 'viewer', '--team', 'default'], /^axctl: tokens create: .*\(403 FORBIDDEN\); the token needs a higher role$/],
      [['tokens', 'revoke', '999999'], /^axctl: tokens revoke: .*\(403 FORBIDDEN\); the token needs a higher role$/],
      [['calendars', 'list'], /^axctl: calendars list: .*\(401 UNAUTHENTICATED\); check AX_TOKEN or --token$/],
      [['calendars', 'get', 'nope'], /^axctl: calendars get: calendar "nope" does not exist \(404 NOT_FOUND\)$/],
      [['calendars', 'apply', 'nope', '--dates', '2026-02-30'], /^axctl: calendars apply: .*dates\[0\].*\(400 VALIDATION_FAILED\)$/],
      [['calendars', 'delete', 'nope'], /^axctl: calendars delete: .*\(403 FORBIDDEN\); the token needs a higher role$/],
      // #47's read and batch commands: their failure path is the API's answer, here to a bad token
      ...(['alerts list', 'audit list', 'dead-letters list', 'reruns list', 'reruns get 1', 'reruns watch 1', 'reruns cancel 1'] as const).map(
        (c): [string[], RegExp] => [c.split(' '), new RegExp(`^axctl: ${c.split(' ').slice(0, 2).join(' ')}: .*\\(401 UNAUTHENTICATED\\); check AX_TOKEN or --token$`)],
      ),
    ];
    const badToken = (args: readonly string[]): boolean =>
      (args[0] === 'workers' && args[1] === undefined) ||
      (args[0] === 'edges' && args[1] === 'list') ||
      args[0] === 'status' ||
      (args[0] === 'dispatch' && args[1] === 'show') ||
      (['tokens', 'calendars'].includes(args[0] ?? '') && args[1] === 'list') ||
      ['alerts', 'audit', 'dead-letters', 'reruns'].includes(args[0] ?? '');
    const covered = new Set(cases.map(([args]) => (args[0] === 'workers' && args[1] === undefined) || args[0] === 'tail' || args[0] === 'logs' || args[0] === 'apply' ? (args[0] ?? '') : args.slice(0, 2).join(' ')));
    // `completion` calls no API: its only failure is a usage error (exit 2).
    expect([...covered].sort()).toEqual(COMMANDS.map((c) => c.name).filter((n) => n !== 'completion').sort());
    const results: AxctlResult[] = [];
    for (let i = 0; i < cases.length; i += 4) {
      const batch = cases.slice(i, i + 4).map(([args]) => axctl(t, args, badToken(args) ? { token: 'bad-token-xyz' } : {}));
      results.push(...(await Promise.all(batch)));
    }
    cases.forEach(([args, pattern], i) => {
      const r = results[i] as AxctlResult;
      expect({ args, code: r.code, stdout: r.stdout, lines: r.errLines.length }).toEqual({ args, code: 1, stdout: '', lines: 1 });
      expect(r.errLines[0], args.join(' ')).toMatch(pattern);
    });
  }, 150_000); // a node process per case, four at a time

  it('prints a table and --json on success; apply -f - reads stdin', async () => {
    const [table, asJson, stdin] = await Promise.all([
      axctl(t, ['tasks', 'get', 'cli_http']),
      axctl(t, ['--json', 'instances', 'list', '--task', 'r_a', '--limit', '2']),
      axctl(t, ['tasks', 'apply', '-f', '-', '--json'], { stdin: 'name: cli_stdin\nschedule: {type: none}\nexec: {type: shell, command: [echo, hi]}\n' }),
    ]);
    expect(ok(table).lines[0]).toBe('name:             cli_http');
    expect(json<any>(ok(asJson)).items).toHaveLength(2);
    expect(json(ok(stdin))).toEqual({ created: ['cli_stdin'], updated: [], unchanged: [] });
  });
});
