/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/**
 * Teams as the tenant boundary (ADMIN-API.md "Teams"): two teams `a` and `b`, each with an
 * operator token; everything of the other team answers 404 and is left out of lists and stats.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@ax/kit';
import { publishRegistration } from '@ax/redis';
import { waitFor } from '@ax/testing';
import { addToken, insertInstance, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';
import { createStatsCache } from './stats-cache.js';

let t: TestApp;
let opA: string;
let opB: string;
let adminA: string;
let viewerA: string;
const today = new Date().toISOString().slice(0, 10);
const ids: Record<string, string> = {};

beforeAll(async () => {
  // With the dashboard cache main.ts wires: each team set must be its own entry.
  t = await startTestApp({ statsCache: createStatsCache({ maxAgeMs: 60_000, now: Date.now }) });
  for (const name of ['a', 'b']) {
    const res = await t.call('POST', '/api/v1/teams', { body: { name, description: `team ${name}` } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  opA = await addToken(t.pool, 'op-a', 'operator', ['a']);
  opB = await addToken(t.pool, 'op-b', 'operator', ['b']);
  adminA = await addToken(t.pool, 'admin-a', 'admin', ['a']);
  viewerA = await addToken(t.pool, 'viewer-a', 'viewer', ['a']);
  expect((await t.call('POST', '/api/v1/tasks', { token: opA, body: taskDef('a_job', { team: 'a' }) })).status).toBe(201);
  expect((await t.call('POST', '/api/v1/tasks', { token: opB, body: taskDef('b_job', { team: 'b' }) })).status).toBe(201);
  expect((await t.call('POST', '/api/v1/tasks', { token: opB, body: taskDef('b_down', { team: 'b' }) })).status).toBe(201);
  ids['a_failed'] = await insertInstance(t.pool, { task: 'a_job', expected: `${today}T00:00:01.000Z`, bizDate: today, state: 'FAILED' });
  ids['b_failed'] = await insertInstance(t.pool, { task: 'b_job', expected: `${today}T00:00:01.000Z`, bizDate: today, state: 'FAILED' });
  ids['b_pending'] = await insertInstance(t.pool, { task: 'b_job', expected: `${today}T00:00:02.000Z`, bizDate: today, state: 'PENDING' });
  ids['b_down_failed'] = await insertInstance(t.pool, { task: 'b_down', expected: `${today}T00:00:01.000Z`, bizDate: today, state: 'FAILED' });
});

afterAll(async () => {
  await t.close();
});

async function bTaskUnchanged(): Promise<void> {
  const res = await t.call('GET', '/api/v1/tasks/b_job', { token: opB });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ team: 'b', version: 1, enabled: true });
  const inst = await t.call('GET', `/api/v1/instances/${ids['b_pending']}`, { token: opB });
  expect(inst.body).toMatchObject({ state: 'PENDING', runNo: 1, team: 'b' });
}

describe('a team token works on its own team', () => {
  it("sees, triggers and edits only its own tasks and instances", async () => {
    const list = await t.call('GET', '/api/v1/tasks', { token: opA });
    expect(list.body.items.map((x: any) => x.name)).toEqual(['a_job']);
    const one = await t.call('GET', '/api/v1/tasks/a_job', { token: opA });
    expect(one.body).toMatchObject({ name: 'a_job', team: 'a' });
    const trig = await t.call('POST', '/api/v1/tasks/a_job/trigger', { token: opA });
    expect(trig.status).toBe(202);
    expect(trig.body.team).toBe('a');
    const put = await t.call('PUT', '/api/v1/tasks/a_job', { token: opA, body: { ...one.body, description: 'edited' } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect((await t.call('POST', '/api/v1/tasks/a_job/disable', { token: opA })).status).toBe(200);
    expect((await t.call('POST', '/api/v1/tasks/a_job/enable', { token: opA })).status).toBe(200);
    const instances = await t.call('GET', '/api/v1/instances', { token: opA });
    expect(instances.body.items.length).toBeGreaterThan(0);
    const teamsSeen: string[] = instances.body.items.map((i: any) => String(i.team));
    expect([...new Set(teamsSeen)]).toEqual(['a']);
    const detail = await t.call('GET', `/api/v1/instances/${ids['a_failed']}`, { token: opA });
    expect(detail.body).toMatchObject({ id: ids['a_failed'], team: 'a' });
  });
});

describe("another team's objects answer 404 NOT_FOUND on every route", () => {
  it("team b's task and instances are 404 for team a's tokens, and nothing of b changes", async () => {
    const b = await t.call('GET', '/api/v1/tasks/b_job', { token: opB });
    const attempts: Array<[string, string, Record<string, unknown>]> = [
      ['GET', '/api/v1/tasks/b_job', {}],
      ['PUT', '/api/v1/tasks/b_job', { body: { ...b.body, team: 'a', description: 'hijacked' } }],
      ['POST', '/api/v1/tasks/b_job/trigger', {}],
      ['POST', '/api/v1/tasks/b_job/disable', {}],
      ['POST', '/api/v1/tasks/b_job/enable', {}],
      ['GET', '/api/v1/tasks/b_job/preview', {}],
      ['DELETE', '/api/v1/tasks/b_job', { token: adminA }],
      ['GET', `/api/v1/instances/${ids['b_pending']}`, {}],
      ['POST', `/api/v1/instances/${ids['b_pending']}/cancel`, {}],
      ['POST', '/api/v1/reruns', { body: { mode: 'instance', instanceId: ids['b_failed'], reason: 'x' } }],
      ['POST', '/api/v1/reruns', { body: { mode: 'dag', root: 'b_job', bizDate: today, reason: 'x' } }],
      ['POST', '/api/v1/reruns', { body: { mode: 'failed', root: 'b_job', bizDate: today, reason: 'x' } }],
      ['POST', '/api/v1/reruns', { body: { mode: 'backfill', task: 'b_job', from: today, to: today, reason: 'x' } }],
      ['POST', '/api/v1/reruns', { body: { mode: 'instance', instanceId: ids['b_failed'], reason: 'x', dryRun: true } }],
      ['GET', '/api/v1/dag?root=b_job', {}],
      ['POST', '/api/v1/edges', { body: { parent: 'a_job', child: 'b_job' } }],
      ['POST', '/api/v1/edges', { body: { parent: 'b_job', child: 'a_job' } }],
      ['DELETE', '/api/v1/edges?parent=a_job&child=b_job', {}],
    ];
    for (const [method, path, opts] of attempts) {
      const res = await t.call(method, path, { token: opA, ...opts });
      expect({ method, path, status: res.status, code: res.body?.error?.code }).toEqual({ method, path, status: 404, code: 'NOT_FOUND' });
      expect(JSON.stringify(res.body), `${method} ${path}`).not.toMatch(/"b"|team b/);
    }
    // The same answers as for names that do not exist at all.
    const missing = await t.call('GET', '/api/v1/tasks/no_such_job', { token: opA });
    const hidden = await t.call('GET', '/api/v1/tasks/b_job', { token: opA });
    expect(hidden.body.error.message.replace('b_job', 'X')).toBe(missing.body.error.message.replace('no_such_job', 'X'));
    await bTaskUnchanged();
  });

  it("lists, counts and stats leave team b out; a '*' token sees both", async () => {
    const instances = await t.call('GET', '/api/v1/instances?limit=500', { token: viewerA });
    expect(instances.body.items.some((i: any) => i.taskName.startsWith('b_'))).toBe(false);
    const filtered = await t.call('GET', '/api/v1/instances?task=b_job', { token: viewerA });
    expect(filtered.body.items).toEqual([]);
    const statsA = await t.call('GET', '/api/v1/stats/today', { token: viewerA });
    const statsAll = await t.call('GET', '/api/v1/stats/today', { token: t.tokens.viewer });
    const countA = instances.body.items.filter((i: any) => i.expectedTime.slice(0, 10) === today).length;
    expect(statsA.body.total).toBe(countA);
    expect(statsA.body.topFailing.map((x: any) => x.task)).toEqual(['a_job']);
    expect(statsAll.body.total).toBe(countA + 3);
    expect(statsAll.body.topFailing.map((x: any) => x.task).sort()).toEqual(['a_job', 'b_down', 'b_job']);
    const hourly = await t.call('GET', '/api/v1/stats/hourly', { token: viewerA });
    expect(hourly.body.hours.reduce((n: number, h: any) => n + h.runs, 0)).toBe(countA);
    const dag = await t.call('GET', '/api/v1/dag', { token: viewerA });
    expect(dag.body.nodes).toEqual(['a_job']);
    const teams = await t.call('GET', '/api/v1/teams', { token: viewerA });
    expect(teams.body.items.map((x: any) => x.name)).toEqual(['a']);
    const star = await t.call('GET', '/api/v1/tasks', { token: t.tokens.viewer });
    expect(star.body.items.map((x: any) => x.name)).toEqual(['a_job', 'b_down', 'b_job']);
    const starTeams = await t.call('GET', '/api/v1/teams', { token: t.tokens.viewer });
    expect(starTeams.body.items.map((x: any) => x.name)).toEqual(['a', 'b', 'default']);
  });

  it("a rerun of failed instances without a root re-runs only the token's own teams", async () => {
    const dry = await t.call('POST', '/api/v1/reruns', { token: opA, body: { mode: 'failed', bizDate: today, reason: 'r', dryRun: true } });
    expect(dry.status).toBe(200);
    expect(dry.body.instances.map((i: any) => i.taskName)).toEqual(['a_job']);
    expect(dry.body.forbiddenTeams).toEqual([]);
  });

  it('creating or importing a task in a team the token does not cover answers 404 like a missing team', async () => {
    const other = await t.call('POST', '/api/v1/tasks', { token: opA, body: taskDef('a_sneaky', { team: 'b' }) });
    const none = await t.call('POST', '/api/v1/tasks', { token: opA, body: taskDef('a_sneaky', { team: 'nope' }) });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('NOT_FOUND');
    expect(none.status).toBe(404);
    expect(other.body.error.message.replace('"b"', 'X')).toBe(none.body.error.message.replace('"nope"', 'X'));
    // A team token that leaves `team` out gets the default team, which it does not cover: the
    // answer names the field and the token's own team (#47).
    const defaulted = await t.call('POST', '/api/v1/tasks', { token: opA, body: taskDef('a_teamless') });
    expect(defaulted.status).toBe(404);
    expect(defaulted.body.error).toMatchObject({ message: 'team "default" does not exist; this token\'s teams: a (set "team: a")', details: { path: 'team' } });
    const yaml = 'name: a_import\nteam: b\nschedule: {type: none}\nexec: {type: shell, command: [echo]}\n';
    const imported = await t.call('POST', '/api/v1/tasks/import', { token: opA, raw: yaml, contentType: 'application/yaml' });
    expect(imported.status).toBe(404);
    const overwrite = 'name: b_job\nteam: a\nschedule: {type: none}\nexec: {type: shell, command: [echo]}\n';
    const taken = await t.call('POST', '/api/v1/tasks/import', { token: opA, raw: overwrite, contentType: 'application/yaml' });
    expect(taken.status).toBe(409);
    const [rows] = await t.pool.query<any[]>("SELECT name FROM task WHERE name IN ('a_sneaky', 'a_import')");
    expect(rows).toEqual([]);
    await bTaskUnchanged();
  });
});

describe('edges across teams and reruns that would touch another team', () => {
  it('a dag rerun touching team a instances is refused whole for team b (403, details.teams); the dry run names team a', async () => {
    // Only a token that sees both ends may join them.
    const edge = await t.call('POST', '/api/v1/edges', { token: t.tokens.operator, body: { parent: 'b_down', child: 'a_job' } });
    expect(edge.status).toBe(201);
    const before = await t.pool.query<any[]>('SELECT COUNT(*) AS n FROM rerun_batch');
    const refused = await t.call('POST', '/api/v1/reruns', { token: opB, body: { mode: 'dag', root: 'b_down', bizDate: today, reason: 'r' } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'FORBIDDEN', details: { teams: ['a'] } });
    const failed = await t.call('POST', '/api/v1/reruns', { token: opB, body: { mode: 'failed', root: 'b_down', bizDate: today, reason: 'r' } });
    expect(failed.status).toBe(403);
    const dry = await t.call('POST', '/api/v1/reruns', { token: opB, body: { mode: 'dag', root: 'b_down', bizDate: today, reason: 'r', dryRun: true } });
    expect(dry.status).toBe(200);
    expect(dry.body.forbiddenTeams).toEqual(['a']);
    expect(dry.body.instances.every((i: any) => i.taskName.startsWith('b_'))).toBe(true);
    const after = await t.pool.query<any[]>('SELECT COUNT(*) AS n FROM rerun_batch');
    expect(after[0][0].n).toBe(before[0][0].n);
    const inst = await t.call('GET', `/api/v1/instances/${ids['a_failed']}`, { token: opA });
    expect(inst.body).toMatchObject({ state: 'FAILED', runNo: 1 });
    // The child's team may remove it when it sees the parent; team a does not see b_down.
    expect((await t.call('DELETE', '/api/v1/edges?parent=b_down&child=a_job', { token: opA })).status).toBe(404);
    expect((await t.call('DELETE', '/api/v1/edges?parent=b_down&child=a_job', { token: t.tokens.operator })).status).toBe(204);
  });
});

describe('tokens and teams', () => {
  it('token names are unique among live tokens (409 ALREADY_EXISTS); a revoked name can be reused', async () => {
    const first = await t.call('POST', '/api/v1/tokens', { body: { name: 'ci-bot', role: 'viewer' } });
    expect(first.status).toBe(201);
    expect(first.body.teams).toEqual(['*']);
    const dup = await t.call('POST', '/api/v1/tokens', { body: { name: 'ci-bot', role: 'operator', teams: ['a'] } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('ALREADY_EXISTS');
    expect((await t.call('DELETE', `/api/v1/tokens/${first.body.id}`)).status).toBe(204);
    const again = await t.call('POST', '/api/v1/tokens', { body: { name: 'ci-bot', role: 'viewer', teams: ['a'] } });
    expect(again.status).toBe(201);
    expect(again.body.teams).toEqual(['a']);
  });

  it("a team admin cannot mint a '*' token nor one of another team, and lists only tokens within its teams", async () => {
    for (const teams of [['*'], ['b'], ['a', 'b']]) {
      const res = await t.call('POST', '/api/v1/tokens', { token: adminA, body: { name: `x-${teams.join('-')}`, role: 'viewer', teams } });
      expect({ teams, status: res.status, code: res.body.error?.code }).toEqual({ teams, status: 403, code: 'FORBIDDEN' });
    }
    const omitted = await t.call('POST', '/api/v1/tokens', { token: adminA, body: { name: 'x-default', role: 'viewer' } });
    expect(omitted.status).toBe(403); // the default is ["*"]
    const own = await t.call('POST', '/api/v1/tokens', { token: adminA, body: { name: 'a-ci', role: 'operator', teams: ['a'] } });
    expect(own.status).toBe(201);
    const list = await t.call('GET', '/api/v1/tokens?limit=500', { token: adminA });
    expect(list.body.items.length).toBeGreaterThan(0);
    expect(list.body.items.every((x: any) => x.teams.length === 1 && x.teams[0] === 'a')).toBe(true);
    const opBRow = (await t.call('GET', '/api/v1/tokens?limit=500')).body.items.find((x: any) => x.name === 'op-b');
    expect(opBRow.teams).toEqual(['b']);
    expect((await t.call('DELETE', `/api/v1/tokens/${opBRow.id}`, { token: adminA })).status).toBe(404);
    expect((await t.call('GET', '/api/v1/tasks/b_job', { token: opB })).status).toBe(200);
    const who = await t.call('GET', '/api/v1/whoami', { token: opA });
    expect(who.body).toMatchObject({ name: 'op-a', teams: ['a'] });
  });

  it("teams are created, changed and deleted by a '*' admin only; default and a team owning tasks stay", async () => {
    expect((await t.call('POST', '/api/v1/teams', { token: adminA, body: { name: 'c' } })).status).toBe(403);
    const created = await t.call('POST', '/api/v1/teams', { body: { name: 'c', maxRunning: 3 } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'c', description: '', maxRunning: 3, weight: 1, keyVersion: 1 });
    expect((await t.call('POST', '/api/v1/teams', { body: { name: 'c' } })).status).toBe(409);
    expect((await t.call('POST', '/api/v1/teams', { body: { name: 'Bad.Name' } })).status).toBe(400);
    expect((await t.call('PATCH', '/api/v1/teams/c', { token: adminA, body: { description: 'x' } })).status).toBe(403);
    const patched = await t.call('PATCH', '/api/v1/teams/c', { body: { description: 'team c', maxRunning: null } });
    expect(patched.body).toMatchObject({ name: 'c', description: 'team c', maxRunning: null });
    // R23: a team's weight (share of contended slots) is at least 1 and a whole number.
    expect((await t.call('PATCH', '/api/v1/teams/c', { body: { weight: 3 } })).body).toMatchObject({ weight: 3 });
    for (const weight of [0, 1.5, -1, 'heavy']) expect((await t.call('PATCH', '/api/v1/teams/c', { body: { weight } })).status).toBe(400);
    expect((await t.call('PATCH', '/api/v1/teams/zz', { body: { description: 'x' } })).status).toBe(404);
    const owns = await t.call('DELETE', '/api/v1/teams/b');
    expect(owns.status).toBe(409);
    expect(owns.body.error.code).toBe('INVALID_STATE');
    const dflt = await t.call('DELETE', '/api/v1/teams/default');
    expect(dflt.status).toBe(409);
    expect((await t.call('DELETE', '/api/v1/teams/c', { token: adminA })).status).toBe(403);
    expect((await t.call('DELETE', '/api/v1/teams/c')).status).toBe(204);
    expect((await t.call('DELETE', '/api/v1/teams/c')).status).toBe(404);
    // The global pause, dead letters and draining a worker need a token of every team.
    expect((await t.call('POST', '/api/v1/dispatch/pause', { token: adminA })).status).toBe(403);
    expect((await t.call('GET', '/api/v1/dead-letters', { token: opA })).status).toBe(403);
    // A worker serving every team: a team's operator sees it but cannot drain it.
    const now = new Date().toISOString();
    await publishRegistration(t.redis.redis, redisKeys(t.namespace), {
      workerId: 'shared-1', host: 'h', tags: [], cores: 2, slots: 8, running: 0, runningExecutionIds: [], avgDurationMs5m: 0, draining: false, version: '1', startedAt: now, at: now,
    }, 15_000);
    expect((await t.call('POST', '/api/v1/workers/shared-1/drain', { token: opA })).status).toBe(403);
    expect((await t.call('GET', '/api/v1/workers', { token: opA })).status).toBe(200);
  });

  it('#18 placement: GET /workers shows the teams a worker serves; a worker of team b only is not listed for team a', async () => {
    const now = new Date().toISOString();
    const entry = (workerId: string, teams?: string[]) => ({
      workerId, host: 'h', tags: [], cores: 2, slots: 8, running: 0, runningExecutionIds: [], avgDurationMs5m: 0, draining: false, version: '1', startedAt: now, at: now,
      ...(teams === undefined ? {} : { teams }),
    });
    await publishRegistration(t.redis.redis, redisKeys(t.namespace), entry('w-shared'), 15_000);
    await publishRegistration(t.redis.redis, redisKeys(t.namespace), entry('w-of-b', ['b']), 15_000);
    const ids = async (token?: string): Promise<string[]> => {
      const res = await t.call('GET', '/api/v1/workers', token === undefined ? {} : { token });
      expect(res.status).toBe(200);
      return res.body.items.map((w: { id: string }) => w.id).filter((id: string) => id.startsWith('w-')).sort();
    };
    expect(await ids(opA)).toEqual(['w-shared']);
    expect(await ids()).toEqual(['w-of-b', 'w-shared']);
    const all = await t.call('GET', '/api/v1/workers');
    expect(all.body.items.find((w: { id: string }) => w.id === 'w-of-b')?.teams).toEqual(['b']);
    expect(all.body.items.find((w: { id: string }) => w.id === 'w-shared')?.teams).toEqual(['*']);
  });

  it("audit entries carry the actor's token id and name and are filtered to the token's teams", async () => {
    const who = await t.call('GET', '/api/v1/whoami', { token: opA });
    const mine = await t.call('GET', '/api/v1/audit?limit=500', { token: adminA });
    expect(mine.status).toBe(200);
    expect(mine.body.items.length).toBeGreaterThan(0);
    expect(mine.body.items.every((e: any) => e.team === 'a')).toBe(true);
    const trigger = mine.body.items.find((e: any) => e.action === 'task.trigger');
    expect(trigger).toMatchObject({ actor: { tokenId: who.body.tokenId, name: 'op-a' }, target: 'task:a_job', team: 'a' });
    const all = await t.call('GET', '/api/v1/audit?limit=500');
    expect(all.body.items.some((e: any) => e.team === 'b')).toBe(true);
    expect(all.body.items.some((e: any) => e.action === 'team.create' && e.target === 'team:b')).toBe(true);
  });
});

describe('team changes reach the brokers', () => {
  it('#18 quotas: PATCH /teams/{name} publishes task-changed (team:<name>), so brokers reload a new maxRunning at once', async () => {
    const sub = t.redis.redis.duplicate();
    const seen: string[] = [];
    try {
      await sub.subscribe(redisKeys(t.namespace).channels.taskChanged);
      sub.on('message', (_channel: string, message: string) => seen.push(message));
      expect((await t.call('PATCH', '/api/v1/teams/a', { body: { maxRunning: 3 } })).status).toBe(200);
      await waitFor(() => seen.includes('team:a'), { description: 'task-changed team:a' });
    } finally {
      await sub.quit();
    }
  });
});
