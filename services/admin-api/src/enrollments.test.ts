/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * Worker enrollments through the API on the real servers (ADMIN-API.md "Workers", R24/R25):
 * a create makes a RabbitMQ user that can connect and a Redis user that can AUTH, shows the
 * credential once and audits without it; visibility follows the team boundary; a revoke closes
 * the enrollment's connections, refuses its logins and clears its workers from the registry; bad
 * input and a failing login server leave nothing behind (no row, no RabbitMQ user, no Redis user).
 */
import { connect, type ChannelModel } from 'amqplib';
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKER_CREDENTIAL_PATTERN, busUserOf, credentialHash, enrollmentLoginPassword, newEnrollmentId, newWorkerCredential, redisUserOf } from '@ax/core';
import { redisKeys } from '@ax/kit';
import { publishRegistration, putEnrollmentRedisUser, readRegistration, type WorkerRegistration } from '@ax/redis';
import { insertEnrollment } from '@ax/store';
import { testAmqpUrl, testRedisUrl, waitFor } from '@ax/testing';
import { servedTeams } from './worker-visibility.js';
import { EXECUTOR_SECRET, addToken, enrollmentUsersOf, startTestApp, testBusAdmin, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let adminAlpha: string;
let adminBeta: string;
let adminAlphaBeta: string;
let operatorAll: string;
const opened: Array<ChannelModel | IORedis> = [];

function amqpUrlAs(user: string, password: string): string {
  const url = new URL(testAmqpUrl());
  url.username = user;
  url.password = password;
  return url.toString();
}

async function amqpAs(user: string, password: string): Promise<ChannelModel> {
  const c = await connect(amqpUrlAs(user, password));
  c.on('error', () => undefined);
  opened.push(c);
  return c;
}

function redisAs(user: string, password: string): IORedis {
  const url = new URL(testRedisUrl());
  const client = new IORedis({ host: url.hostname, port: Number(url.port || 6379), username: user, password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  opened.push(client);
  return client;
}

/** The management API's answer about one RabbitMQ user (200 exists, 404 not). */
async function busUserStatus(user: string): Promise<number> {
  const url = new URL(testBusAdmin().managementUrl);
  const authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  return (await fetch(`${url.origin}/api/users/${encodeURIComponent(user)}`, { headers: { authorization } })).status;
}

async function rowCount(): Promise<number> {
  const [rows] = await t.pool.query<any[]>('SELECT COUNT(*) AS n FROM worker_enrollment');
  return Number(rows[0].n);
}

/** The 201 answer of a create. */
interface Created {
  id: string;
  name: string;
  teams: string[];
  tags: string[];
  createdAt: string;
  credential: string;
}

async function enroll(body: Record<string, unknown>, token?: string): Promise<Created> {
  const res = await t.call('POST', '/api/v1/workers/enrollments', { body, ...(token === undefined ? {} : { token }) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Created;
}

function registration(workerId: string): WorkerRegistration {
  const now = new Date().toISOString();
  return { workerId, host: 'h', tags: [], cores: 1, slots: 2, running: 0, runningExecutionIds: [], avgDurationMs5m: 0, draining: false, version: '0', startedAt: now, at: now };
}

beforeAll(async () => {
  t = await startTestApp();
  for (const name of ['alpha', 'beta']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  adminAlpha = await addToken(t.pool, 'admin-alpha', 'admin', ['alpha']);
  adminBeta = await addToken(t.pool, 'admin-beta', 'admin', ['beta']);
  adminAlphaBeta = await addToken(t.pool, 'admin-alpha-beta', 'admin', ['alpha', 'beta']);
  operatorAll = await addToken(t.pool, 'operator-all', 'operator', ['*']);
});

afterAll(async () => {
  for (const c of opened) {
    if (c instanceof IORedis) c.disconnect();
    else await c.close().catch(() => undefined);
  }
  const left = await enrollmentUsersOf(t.namespace, t.redis.redis, testBusAdmin());
  await t.close(); // deletes every enrollment user of the namespace (harness): the revoked ones are gone already
  expect(left.rabbitmq.length).toBe(left.redis.length); // each live enrollment has both users, no more
});

describe('creating an enrollment', () => {
  it('makes a RabbitMQ user that connects and a Redis user that AUTHs with the derived logins, and the bootstrap hands out the same', async () => {
    const created = await enroll({ name: 'alpha-pool', teams: ['alpha'], tags: ['gpu', 'gpu'] }, adminAlpha);
    expect(created).toEqual({ id: expect.stringMatching(/^enr-[a-z0-9]{12}$/), name: 'alpha-pool', teams: ['alpha'], tags: ['gpu'], createdAt: expect.any(String), credential: expect.any(String) });
    expect(WORKER_CREDENTIAL_PATTERN.exec(created.credential)?.[1]).toBe(created.id);
    const amqpLogin = { user: busUserOf(t.namespace, created.id), password: enrollmentLoginPassword(EXECUTOR_SECRET, 'amqp', t.namespace, created.id) };
    expect(await busUserStatus(amqpLogin.user)).toBe(200);
    const conn = await amqpAs(amqpLogin.user, amqpLogin.password);
    await (await conn.createChannel()).close();
    const r = redisAs(redisUserOf(t.namespace, created.id), enrollmentLoginPassword(EXECUTOR_SECRET, 'redis', t.namespace, created.id));
    await r.connect();
    expect(await r.ping()).toBe('PONG');
    const self = await t.call('GET', '/api/v1/workers/self', { token: created.credential });
    expect(self.status).toBe(200);
    expect(self.body.amqp).toEqual({ username: amqpLogin.user, password: amqpLogin.password });
    expect(self.body.enrollment).toEqual({ id: created.id, name: 'alpha-pool', teams: ['alpha'], tags: ['gpu'] });
  });

  it('shows the credential once: only its hash is stored, and no list, row or audit entry holds it', async () => {
    const created = await enroll({ name: 'once', teams: ['beta'] }, adminBeta);
    const secretPart = created.credential.slice(`axw_${created.id}_`.length); // the secret may hold '_' itself
    const list = await t.call('GET', '/api/v1/workers/enrollments', { token: adminBeta });
    const item = list.body.items.find((e: any) => e.id === created.id);
    expect(item).toEqual({ id: created.id, name: 'once', teams: ['beta'], tags: [], createdAt: created.createdAt, createdBy: 'admin-beta', revokedAt: null, workers: [] });
    expect(JSON.stringify(list.body)).not.toContain(secretPart);
    const [rows] = await t.pool.query<any[]>('SELECT * FROM worker_enrollment WHERE id = ?', [created.id]);
    expect(rows[0].credential_hash).toBe(credentialHash(created.credential));
    expect(JSON.stringify(rows[0])).not.toContain(secretPart);
    const audit = await t.call('GET', '/api/v1/audit');
    const entry = audit.body.items.find((e: any) => e.action === 'worker.enrollment.create' && e.target === `enrollment:${created.id}`);
    expect(entry).toMatchObject({ actor: { name: 'admin-beta' }, team: 'beta', after: { id: created.id, name: 'once', teams: ['beta'], tags: [] } });
    expect(JSON.stringify(audit.body)).not.toContain(secretPart);
    expect(JSON.stringify(audit.body)).not.toContain(credentialHash(created.credential));
  });
});

describe('who sees an enrollment', () => {
  it('lists an enrollment to tokens covering all of its teams only; others get 404 for it', async () => {
    const a = await enroll({ name: 'vis-a', teams: ['alpha'] }, adminAlpha);
    const ab = await enroll({ name: 'vis-ab', teams: ['alpha', 'beta'] }, adminAlphaBeta);
    const all = await enroll({ name: 'vis-all', teams: ['*'] });
    const ids = async (token: string): Promise<string[]> => (await t.call('GET', '/api/v1/workers/enrollments', { token })).body.items.map((e: any) => e.id);
    expect(await ids(adminAlpha)).toEqual(expect.arrayContaining([a.id]));
    expect(await ids(adminAlpha)).not.toContain(ab.id);
    expect(await ids(adminAlpha)).not.toContain(all.id);
    expect(await ids(adminBeta)).not.toContain(a.id);
    expect(await ids(adminAlphaBeta)).toEqual(expect.arrayContaining([a.id, ab.id]));
    expect(await ids(adminAlphaBeta)).not.toContain(all.id);
    expect(await ids(t.tokens.admin)).toEqual(expect.arrayContaining([a.id, ab.id, all.id]));
    // a viewer or operator of every team does not list credentials' holders
    expect((await t.call('GET', '/api/v1/workers/enrollments', { token: operatorAll })).status).toBe(403);
    // revoking one you cannot see is the same 404 as one that does not exist
    expect((await t.call('DELETE', `/api/v1/workers/enrollments/${a.id}`, { token: adminBeta })).status).toBe(404);
    expect((await t.call('DELETE', `/api/v1/workers/enrollments/${ab.id}`, { token: adminAlpha })).status).toBe(404);
    expect((await t.call('DELETE', '/api/v1/workers/enrollments/enr-000000000000', { token: adminAlpha })).status).toBe(404);
    expect((await t.call('DELETE', '/api/v1/workers/enrollments/nonsense', { token: adminAlpha })).status).toBe(404);
    expect((await t.call('GET', '/api/v1/workers/self', { token: a.credential })).status).toBe(200); // untouched
  });

  it('GET /workers shows each live worker\'s enrollment (null for an unenrolled worker)', async () => {
    const e = await enroll({ name: 'reg', teams: ['*'] });
    const worker = redisAs(redisUserOf(t.namespace, e.id), enrollmentLoginPassword(EXECUTOR_SECRET, 'redis', t.namespace, e.id));
    await worker.connect();
    await publishRegistration(worker, redisKeys(t.namespace), registration(`${e.id}.host-1`), 15_000);
    await publishRegistration(t.redis.redis, redisKeys(t.namespace), registration('plain-host-1'), 15_000);
    const res = await t.call('GET', '/api/v1/workers');
    const byId = new Map(res.body.items.map((w: any) => [w.id, w.enrollment]));
    expect(byId.get(`${e.id}.host-1`)).toBe(e.id);
    expect(byId.get('plain-host-1')).toBeNull();
    const listed = (await t.call('GET', '/api/v1/workers/enrollments')).body.items.find((x: any) => x.id === e.id);
    expect(listed.workers).toEqual([`${e.id}.host-1`]);
  });

  it('attack: a worker serves the teams of its enrollment, whatever its registry entry claims; other teams\' tokens do not see it', async () => {
    const e = await enroll({ name: 'alpha-machines', teams: ['alpha'] }, adminAlpha);
    const worker = redisAs(redisUserOf(t.namespace, e.id), enrollmentLoginPassword(EXECUTOR_SECRET, 'redis', t.namespace, e.id));
    await worker.connect();
    await publishRegistration(worker, redisKeys(t.namespace), registration(`${e.id}.quiet`), 15_000); // claims nothing: every team of its enrollment
    await publishRegistration(worker, redisKeys(t.namespace), { ...registration(`${e.id}.greedy`), teams: ['alpha', 'beta'] }, 15_000); // claims beta too
    const seen = async (token: string): Promise<Map<string, string[]>> =>
      new Map((await t.call('GET', '/api/v1/workers', { token })).body.items.filter((w: any) => w.enrollment === e.id).map((w: any) => [w.id, w.teams]));
    expect(await seen(adminAlpha)).toEqual(new Map([[`${e.id}.quiet`, ['alpha']], [`${e.id}.greedy`, ['alpha']]]));
    expect((await seen(adminBeta)).size).toBe(0);
    expect((await seen(t.tokens.admin)).size).toBe(2);
  });
});

describe('servedTeams (the teams GET /workers shows)', () => {
  const live = new Map<string, readonly string[]>([['enr-aaaaaaaaaaaa', ['alpha']], ['enr-ssssssssssss', ['*']]]);
  it('is the enrollment\'s record narrowed by what the worker advertises; none for an enrollment not live; the advertised list for an unenrolled worker', () => {
    expect(servedTeams(undefined, 'enr-aaaaaaaaaaaa', live)).toEqual(['alpha']);
    expect(servedTeams(['alpha', 'beta'], 'enr-aaaaaaaaaaaa', live)).toEqual(['alpha']);
    expect(servedTeams(['beta'], 'enr-aaaaaaaaaaaa', live)).toEqual([]);
    expect(servedTeams([], 'enr-ssssssssssss', live)).toEqual(['*']);
    expect(servedTeams(['beta'], 'enr-ssssssssssss', live)).toEqual(['beta']);
    expect(servedTeams(['alpha'], 'enr-revoked00000', live)).toEqual([]);
    expect(servedTeams(undefined, null, live)).toEqual(['*']);
    expect(servedTeams(['beta'], null, live)).toEqual(['beta']);
  });
});

describe('a team deleted and created again', () => {
  it('attack: is not served by the old team\'s enrollments, which lose it and never get the new team\'s key', async () => {
    expect((await t.call('POST', '/api/v1/teams', { body: { name: 'phoenix' } })).status).toBe(201);
    const both = await enroll({ name: 'phoenix-and-alpha', teams: ['alpha', 'phoenix'] });
    const only = await enroll({ name: 'phoenix-only', teams: ['phoenix'] });
    expect((await t.call('DELETE', '/api/v1/teams/phoenix')).status).toBe(204);
    expect((await t.call('POST', '/api/v1/teams', { body: { name: 'phoenix' } })).status).toBe(201);
    const selfBoth = await t.call('GET', '/api/v1/workers/self', { token: both.credential });
    expect(selfBoth.body.enrollment.teams).toEqual(['alpha']);
    expect(selfBoth.body.keys.map((k: any) => k.team)).toEqual(['alpha']);
    const selfOnly = await t.call('GET', '/api/v1/workers/self', { token: only.credential });
    expect(selfOnly.status).toBe(200);
    expect(selfOnly.body.enrollment.teams).toEqual([]);
    expect(selfOnly.body.keys).toEqual([]);
    const listed = (await t.call('GET', '/api/v1/workers/enrollments', { token: adminAlpha })).body.items.map((x: any) => x.id);
    expect(listed).toContain(both.id);
    expect(listed).not.toContain(only.id); // no team left: a "*" admin's only
    const audit = await t.call('GET', '/api/v1/audit');
    const entry = audit.body.items.find((x: any) => x.action === 'team.delete' && x.target === 'team:phoenix');
    expect([...entry.after.enrollmentsNarrowed].sort()).toEqual([both.id, only.id].sort());
  });
});

describe('a Redis that lost its ACL users', () => {
  it('gets the enrollment\'s Redis user back from the next bootstrap (a restart or failover loses it: ACL users are per server, in memory)', async () => {
    const e = await enroll({ name: 'lost-acl', teams: ['alpha'] });
    const user = redisUserOf(t.namespace, e.id);
    const password = enrollmentLoginPassword(EXECUTOR_SECRET, 'redis', t.namespace, e.id);
    await t.redis.redis.call('ACL', 'DELUSER', user); // what a restart without an aclfile does
    const probe = new IORedis(testRedisUrl(), { lazyConnect: true, maxRetriesPerRequest: 0 });
    opened.push(probe);
    await probe.connect();
    await expect(probe.call('AUTH', user, password)).rejects.toThrow(/WRONGPASS/);
    expect((await t.call('GET', '/api/v1/workers/self', { token: e.credential })).status).toBe(200);
    expect(await probe.call('AUTH', user, password)).toBe('OK');
    // an existing user is left alone: a connected worker stays connected through the polls
    const worker = redisAs(user, password);
    await worker.connect();
    expect((await t.call('GET', '/api/v1/workers/self', { token: e.credential })).status).toBe(200);
    expect(await worker.ping()).toBe('PONG');
  });
});

describe('revoking an enrollment', () => {
  it('closes its RabbitMQ connection and refuses it again, refuses its Redis login, removes its workers\' registry entries, and its credential', async () => {
    const e = await enroll({ name: 'to-revoke', teams: ['alpha'] }, adminAlpha);
    const amqpUser = busUserOf(t.namespace, e.id);
    const amqpPassword = enrollmentLoginPassword(EXECUTOR_SECRET, 'amqp', t.namespace, e.id);
    const redisPassword = enrollmentLoginPassword(EXECUTOR_SECRET, 'redis', t.namespace, e.id);
    const conn = await amqpAs(amqpUser, amqpPassword);
    let closed = false;
    conn.on('close', () => void (closed = true));
    const worker = redisAs(redisUserOf(t.namespace, e.id), redisPassword);
    await worker.connect();
    const workerId = `${e.id}.host-1`;
    await publishRegistration(worker, redisKeys(t.namespace), registration(workerId), 60_000);
    expect(await readRegistration(t.redis.redis, redisKeys(t.namespace), workerId)).not.toBeNull();

    const res = await t.call('DELETE', `/api/v1/workers/enrollments/${e.id}`, { token: adminAlpha });
    expect(res.status, JSON.stringify(res.body)).toBe(204);

    await waitFor(() => closed, { description: 'the revoked enrollment\'s RabbitMQ connection closed by the server', timeoutMs: 10_000 });
    await expect(connect(amqpUrlAs(amqpUser, amqpPassword))).rejects.toThrow(/ACCESS_REFUSED|403|auth/i);
    expect(await busUserStatus(amqpUser)).toBe(404);
    await waitFor(() => worker.status === 'end' || worker.status === 'close', { description: 'the revoked enrollment\'s Redis client disconnected by the server', timeoutMs: 5_000 });
    // AUTH as the enrollment's user on a fresh connection: the user is gone
    const probe = new IORedis(testRedisUrl(), { lazyConnect: true, maxRetriesPerRequest: 0 });
    opened.push(probe);
    await probe.connect();
    await expect(probe.call('AUTH', redisUserOf(t.namespace, e.id), redisPassword)).rejects.toThrow(/WRONGPASS/);
    expect(await readRegistration(t.redis.redis, redisKeys(t.namespace), workerId)).toBeNull();
    expect((await t.call('GET', '/api/v1/workers/self', { token: e.credential })).status).toBe(401);
    const listed = (await t.call('GET', '/api/v1/workers/enrollments?state=revoked', { token: adminAlpha })).body.items.find((x: any) => x.id === e.id);
    expect(listed.revokedAt).not.toBeNull();
    expect((await t.call('GET', '/api/v1/workers/enrollments', { token: adminAlpha })).body.items.map((x: any) => x.id)).not.toContain(e.id);
  });

  it('a second revoke answers 204 again (it re-does the deletions) and is audited once; the name is free again', async () => {
    const e = await enroll({ name: 'twice', teams: ['beta'] }, adminBeta);
    expect((await t.call('DELETE', `/api/v1/workers/enrollments/${e.id}`, { token: adminBeta })).status).toBe(204);
    expect((await t.call('DELETE', `/api/v1/workers/enrollments/${e.id}`, { token: adminBeta })).status).toBe(204);
    const audit = await t.call('GET', '/api/v1/audit');
    expect(audit.body.items.filter((x: any) => x.action === 'worker.enrollment.revoke' && x.target === `enrollment:${e.id}`)).toHaveLength(1);
    const reused = await enroll({ name: 'twice', teams: ['beta'] }, adminBeta);
    expect(reused.id).not.toBe(e.id);
  });
});

describe('refused creates leave nothing behind', () => {
  const cases: Array<[string, () => string, Record<string, unknown>, number, (body: any) => void]> = [
    ['no teams', () => t.tokens.admin, { name: 'x1', teams: [] }, 400, (b) => expect(b.error.details.issues.map((i: any) => i.path)).toContain('teams')],
    ['teams missing', () => t.tokens.admin, { name: 'x2' }, 400, (b) => expect(b.error.details.issues.map((i: any) => i.path)).toContain('teams')],
    ['an unknown team', () => t.tokens.admin, { name: 'x3', teams: ['alpha', 'nope'] }, 404, (b) => expect(b.error.message).toContain('"nope"')],
    ['a team the token is not admin of', () => adminAlpha, { name: 'x4', teams: ['alpha', 'beta'] }, 404, (b) => expect(b.error.message).toContain('"beta"')],
    ['"*" by a token of some teams', () => adminAlphaBeta, { name: 'x5', teams: ['*'] }, 403, (b) => expect(b.error.code).toBe('FORBIDDEN')],
    ['"*" with a team', () => t.tokens.admin, { name: 'x6', teams: ['*', 'alpha'] }, 400, (b) => expect(b.error.details.issues.map((i: any) => i.path)).toContain('teams')],
    ['an operator', () => operatorAll, { name: 'x7', teams: ['alpha'] }, 403, (b) => expect(b.error.code).toBe('FORBIDDEN')],
    ['a bad name', () => t.tokens.admin, { name: 'Bad Name!', teams: ['alpha'] }, 400, (b) => expect(b.error.details.issues.map((i: any) => i.path)).toEqual(['name'])],
    ['a bad tag', () => t.tokens.admin, { name: 'x8', teams: ['alpha'], tags: ['ok', 'no spaces'] }, 400, (b) => expect(b.error.details.issues.map((i: any) => i.path)).toEqual(['tags[1]'])],
    ['an unknown field', () => t.tokens.admin, { name: 'x9', teams: ['alpha'], credential: 'mine' }, 400, (b) => expect(b.error.code).toBe('VALIDATION_FAILED')],
  ];
  for (const [what, token, body, status, check] of cases) {
    it(`${what} → ${status}, no row, no RabbitMQ user, no Redis user`, async () => {
      const rows = await rowCount();
      const users = await enrollmentUsersOf(t.namespace, t.redis.redis, testBusAdmin());
      const res = await t.call('POST', '/api/v1/workers/enrollments', { token: token(), body });
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      check(res.body);
      expect(await rowCount()).toBe(rows);
      expect(await enrollmentUsersOf(t.namespace, t.redis.redis, testBusAdmin())).toEqual(users);
    });
  }

  it('a live name taken → 409 naming it, and nothing more is made', async () => {
    await enroll({ name: 'taken', teams: ['alpha'] });
    const rows = await rowCount();
    const users = await enrollmentUsersOf(t.namespace, t.redis.redis, testBusAdmin());
    const res = await t.call('POST', '/api/v1/workers/enrollments', { body: { name: 'taken', teams: ['beta'] } });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'ALREADY_EXISTS', details: { name: 'taken' } });
    expect(await rowCount()).toBe(rows);
    expect(await enrollmentUsersOf(t.namespace, t.redis.redis, testBusAdmin())).toEqual(users);
  });
});

describe('a login server that fails', () => {
  it('RabbitMQ management API unreachable → 503 naming RabbitMQ; no row, no Redis user, no RabbitMQ user', async () => {
    const broken = await startTestApp({ busAdmin: { managementUrl: 'http://guest:guest@127.0.0.1:1', vhost: '/', timeoutMs: 2_000 } });
    try {
      const res = await broken.call('POST', '/api/v1/workers/enrollments', { body: { name: 'no-rabbit', teams: ['default'] } });
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body.error).toMatchObject({ code: 'UNAVAILABLE', details: { server: 'rabbitmq' } });
      expect(res.body.error.message).toMatch(/^RabbitMQ could not create/);
      expect(res.headers.get('retry-after')).toBe('5');
      const [rows] = await broken.pool.query<any[]>('SELECT COUNT(*) AS n FROM worker_enrollment');
      expect(Number(rows[0].n)).toBe(0);
      expect(await enrollmentUsersOf(broken.namespace, broken.redis.redis, testBusAdmin())).toEqual({ rabbitmq: [], redis: [] });
      expect((await broken.call('GET', '/api/v1/audit')).body.items.filter((x: any) => x.action === 'worker.enrollment.create')).toEqual([]);
    } finally {
      await broken.close();
    }
  });

  it('RabbitMQ unreachable during a revoke → 503 naming RabbitMQ; the enrollment is revoked (its credential refused) and its Redis user gone all the same', async () => {
    const broken = await startTestApp({ busAdmin: { managementUrl: 'http://guest:guest@127.0.0.1:1', vhost: '/', timeoutMs: 2_000 } });
    try {
      const id = newEnrollmentId();
      const credential = newWorkerCredential(id);
      await insertEnrollment(broken.pool, { id, name: 'half', teams: ['default'], tags: [], credentialHash: credentialHash(credential), createdBy: 'test' });
      await putEnrollmentRedisUser(broken.redis.redis, redisKeys(broken.namespace), id, enrollmentLoginPassword(EXECUTOR_SECRET, 'redis', broken.namespace, id));
      const res = await broken.call('DELETE', `/api/v1/workers/enrollments/${id}`);
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body.error).toMatchObject({ code: 'UNAVAILABLE', details: { server: 'rabbitmq' } });
      expect(res.body.error.message).toMatch(/send the DELETE again/);
      expect((await broken.call('GET', '/api/v1/workers/self', { token: credential })).status).toBe(401);
      expect((await enrollmentUsersOf(broken.namespace, broken.redis.redis, testBusAdmin())).redis).toEqual([]);
    } finally {
      await broken.close();
    }
  });

  it('Redis refusing ACL SETUSER → 503 naming Redis, and the RabbitMQ user already made is deleted again', async () => {
    // admin-api connected as a Redis user without +acl (docs/deploy.md says it needs it)
    const weakUser = `${t.namespace}.weak`;
    await t.redis.redis.call('ACL', 'SETUSER', weakUser, 'reset', 'on', '>weak-password', '~*', '&*', '+@all', '-acl');
    const weak = redisAs(weakUser, 'weak-password');
    await weak.connect();
    const broken = await startTestApp({ redis: weak });
    try {
      const res = await broken.call('POST', '/api/v1/workers/enrollments', { body: { name: 'no-redis', teams: ['default'] } });
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body.error).toMatchObject({ code: 'UNAVAILABLE', details: { server: 'redis' } });
      expect(res.body.error.message).toMatch(/^Redis could not create/);
      const [rows] = await broken.pool.query<any[]>('SELECT COUNT(*) AS n FROM worker_enrollment');
      expect(Number(rows[0].n)).toBe(0);
      expect(await enrollmentUsersOf(broken.namespace, broken.redis.redis, testBusAdmin())).toEqual({ rabbitmq: [], redis: [] });
    } finally {
      await broken.close();
      await t.redis.redis.call('ACL', 'DELUSER', weakUser);
    }
  });
});
