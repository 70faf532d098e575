/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * `GET /api/v1/workers/self` (the enrollment contract's decision 1, R24/R25): a worker's
 * credential, and only that, gets its enrollment's logins and its own teams' executor keys.
 * Enrollments are stored directly here (the create route and its provisioning are tested in
 * enrollments.test.ts); what is proved is what the bootstrap answers and to whom.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busUserOf, credentialHash, deriveExecutorKey, enrollmentLoginPassword, newEnrollmentId, newWorkerCredential, redisUserOf } from '@ax/core';
import { insertEnrollment, revokeEnrollment } from '@ax/store';
import { EXECUTOR_SECRET, startTestApp, type CallResult, type TestApp } from './harness.test-helper.js';

let t: TestApp;

/** Stores a live enrollment of `teams`; returns its id and credential. */
async function enroll(name: string, teams: string[], tags: string[] = []): Promise<{ id: string; credential: string }> {
  const id = newEnrollmentId();
  const credential = newWorkerCredential(id);
  await insertEnrollment(t.pool, { id, name, teams, tags, credentialHash: credentialHash(credential), createdBy: 'test' });
  return { id, credential };
}

function self(credential: string | null, extra: Record<string, string> = {}): Promise<CallResult> {
  return t.call('GET', '/api/v1/workers/self', { token: credential, headers: extra });
}

beforeAll(async () => {
  t = await startTestApp();
  for (const name of ['alpha', 'beta', 'gamma']) {
    const res = await t.call('POST', '/api/v1/teams', { body: { name } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
});

afterAll(async () => {
  await t.close();
});

describe('the bootstrap of an enrolled worker', () => {
  it('answers the enrollment, its derived RabbitMQ and Redis logins, and the current key of each of its teams', async () => {
    const e = await enroll('beta-gpu', ['beta', 'gamma'], ['gpu']);
    const res = await self(e.credential);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      enrollment: { id: e.id, name: 'beta-gpu', teams: ['beta', 'gamma'], tags: ['gpu'] },
      workerIdPrefix: `${e.id}.`,
      amqp: { username: busUserOf(t.namespace, e.id), password: enrollmentLoginPassword(EXECUTOR_SECRET, 'amqp', t.namespace, e.id) },
      redis: { username: redisUserOf(t.namespace, e.id), password: enrollmentLoginPassword(EXECUTOR_SECRET, 'redis', t.namespace, e.id) },
      keys: [
        { team: 'beta', version: 1, key: deriveExecutorKey(EXECUTOR_SECRET, 'beta', 1) },
        { team: 'gamma', version: 1, key: deriveExecutorKey(EXECUTOR_SECRET, 'gamma', 1) },
      ],
    });
  });

  it('attack: an enrollment for beta never receives the key of alpha (nor of any team it is not enrolled for)', async () => {
    const e = await enroll('beta-only', ['beta']);
    const res = await self(e.credential);
    expect(res.status).toBe(200);
    expect(res.body.keys.map((k: any) => k.team)).toEqual(['beta']);
    const alphaKey = deriveExecutorKey(EXECUTOR_SECRET, 'alpha', 1);
    expect(JSON.stringify(res.body)).not.toContain(alphaKey);
    expect(JSON.stringify(res.body)).not.toContain(EXECUTOR_SECRET);
  });

  it('an enrollment of every team ("*") gets every existing team\'s key; a team deleted since is left out', async () => {
    const e = await enroll('shared', ['*']);
    expect((await t.call('POST', '/api/v1/teams', { body: { name: 'doomed' } })).status).toBe(201);
    const before = await self(e.credential);
    expect(before.body.keys.map((k: any) => k.team)).toEqual(['alpha', 'beta', 'default', 'doomed', 'gamma']);
    const listed = await enroll('doomed-only', ['doomed', 'alpha']);
    expect((await t.call('DELETE', '/api/v1/teams/doomed')).status).toBe(204);
    expect((await self(e.credential)).body.keys.map((k: any) => k.team)).toEqual(['alpha', 'beta', 'default', 'gamma']);
    expect((await self(listed.credential)).body.keys.map((k: any) => k.team)).toEqual(['alpha']);
  });

  it('after a rotation the next bootstrap shows the new version and, during the grace, the previous one', async () => {
    const e = await enroll('gamma-rot', ['gamma']);
    const rotated = await t.call('POST', '/api/v1/teams/gamma/executor-keys');
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    expect(rotated.body.keyVersion).toBe(2);
    const res = await self(e.credential);
    expect(res.body.keys).toEqual([
      { team: 'gamma', version: 2, key: deriveExecutorKey(EXECUTOR_SECRET, 'gamma', 2) },
      { team: 'gamma', version: 1, key: deriveExecutorKey(EXECUTOR_SECRET, 'gamma', 1) },
    ]);
  });

  it('once the grace is over only the current version is given', async () => {
    const short = await startTestApp({ executorKeyGraceSeconds: 0 });
    try {
      expect((await short.call('POST', '/api/v1/teams', { body: { name: 'delta' } })).status).toBe(201);
      const id = newEnrollmentId();
      const credential = newWorkerCredential(id);
      await insertEnrollment(short.pool, { id, name: 'delta', teams: ['delta'], tags: [], credentialHash: credentialHash(credential), createdBy: 'test' });
      expect((await short.call('POST', '/api/v1/teams/delta/executor-keys')).status).toBe(201);
      const res = await short.call('GET', '/api/v1/workers/self', { token: credential });
      expect(res.body.keys).toEqual([{ team: 'delta', version: 2, key: deriveExecutorKey(EXECUTOR_SECRET, 'delta', 2) }]);
    } finally {
      await short.close();
    }
  });
});

describe('who is refused', () => {
  it('revoked, unknown, malformed and missing credentials all get the same 401', async () => {
    const revoked = await enroll('revoked', ['alpha']);
    expect((await self(revoked.credential)).status).toBe(200);
    expect(await revokeEnrollment(t.pool, revoked.id)).toBe(true);
    const unknown = newWorkerCredential(newEnrollmentId());
    // right shape, a live enrollment's id, but not its secret
    const live = await enroll('live', ['alpha']);
    const forged = newWorkerCredential(live.id);
    const answers = [
      await self(revoked.credential),
      await self(unknown),
      await self(forged),
      await self('axw_not-a-credential'),
      await self(`${live.credential}x`),
      await self(null),
      await self(null, { authorization: `Basic ${Buffer.from(`x:${live.credential}`).toString('base64')}` }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: { code: 'UNAUTHENTICATED', message: 'a valid worker enrollment credential is required', details: {} } });
    }
    // the live one still works: nothing above touched it
    expect((await self(live.credential)).status).toBe(200);
  });

  it('attack: an API token, even an admin of every team, is not a worker credential', async () => {
    const res = await self(t.tokens.admin);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHENTICATED');
  });

  it('attack: a worker credential is not an API token (the API answers it 401)', async () => {
    const e = await enroll('not-a-token', ['*']);
    for (const path of ['/api/v1/teams', '/api/v1/workers', '/api/v1/workers/enrollments', '/api/v1/tasks']) {
      expect((await t.call('GET', path, { token: e.credential })).status).toBe(401);
    }
  });

  it('attack: guessing credentials from one address is backed off with 429 like unknown tokens; a valid credential still answers', async () => {
    const limited = await startTestApp({ authFailureLimit: { max: 3, windowMs: 60_000 } });
    try {
      const id = newEnrollmentId();
      const credential = newWorkerCredential(id);
      await insertEnrollment(limited.pool, { id, name: 'limited', teams: ['default'], tags: [], credentialHash: credentialHash(credential), createdBy: 'test' });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await limited.call('GET', '/api/v1/workers/self', { token: newWorkerCredential(id) })).status);
      expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
      const last = await limited.call('GET', '/api/v1/workers/self', { token: 'axw_garbage' });
      expect(last.status).toBe(429);
      expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await limited.call('GET', '/api/v1/workers/self', { token: credential })).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
