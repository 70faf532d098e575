/**
 * The enrollment logins reconciler on the real shared Redis and RabbitMQ (issue #44): a live
 * enrollment's Redis ACL user deleted behind admin-api's back (what a Redis restarted empty or a
 * Sentinel failover does) is made again — periodically, and at once when admin-api's Redis
 * connection comes back — and the enrollment's login works again; a RabbitMQ user lost the same
 * way comes back; a revoked enrollment's users are not made again.
 */
import { connect } from 'amqplib';
import { Redis as IORedis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { busUserOf, enrollmentLoginPassword, redisUserOf } from '@ax/core';
import { closeRedis, createRedis, silentLogger } from '@ax/kit';
import { testAmqpUrl, testRedisUrl, waitFor } from '@ax/testing';
import { startEnrollmentLoginsReconciler, type EnrollmentLoginsReconciler } from './enrollment-logins-reconciler.js';
import { EXECUTOR_SECRET, enrollmentUsersOf, startTestApp, testBusAdmin, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let reconciler: EnrollmentLoginsReconciler | undefined;
const WAIT = { timeoutMs: 20_000, intervalMs: 50 };

beforeAll(async () => {
  t = await startTestApp();
});
afterEach(async () => {
  await reconciler?.stop();
  reconciler = undefined;
});
afterAll(async () => {
  await t?.close();
});

async function enroll(name: string): Promise<string> {
  const res = await t.call('POST', '/api/v1/workers/enrollments', { body: { name, teams: ['*'] } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return (res.body as { id: string }).id;
}

const aclUserExists = async (user: string): Promise<boolean> => (await t.redis.redis.call('ACL', 'GETUSER', user)) !== null;

/** AUTH as the enrollment's Redis user on a fresh connection: 'OK', or the server's refusal. */
async function redisLogin(id: string): Promise<string> {
  const client = new IORedis(testRedisUrl(), { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return String(await client.call('AUTH', redisUserOf(t.namespace, id), enrollmentLoginPassword(EXECUTOR_SECRET, 'redis', t.namespace, id)));
  } catch (err) {
    return (err as Error).message;
  } finally {
    client.disconnect();
  }
}

async function managementFetch(method: string, path: string): Promise<number> {
  const url = new URL(testBusAdmin().managementUrl);
  const authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  return (await fetch(`${url.origin}/api${path}`, { method, headers: { authorization } })).status;
}

describe('enrollment logins reconciler', () => {
  it('makes a lost Redis ACL user and RabbitMQ user of a live enrollment again; its logins work again', async () => {
    const id = await enroll('reconcile-periodic');
    const redisUser = redisUserOf(t.namespace, id);
    const busUser = busUserOf(t.namespace, id);
    await t.redis.redis.call('ACL', 'DELUSER', redisUser);
    expect(await managementFetch('DELETE', `/users/${encodeURIComponent(busUser)}`)).toBe(204);
    expect(await redisLogin(id)).toMatch(/WRONGPASS/);

    reconciler = startEnrollmentLoginsReconciler(t.deps, EXECUTOR_SECRET, 100);
    await waitFor(async () => (await aclUserExists(redisUser)) || undefined, { ...WAIT, description: 'the Redis ACL user made again' });
    await waitFor(async () => (await managementFetch('GET', `/users/${encodeURIComponent(busUser)}`)) === 200 || undefined, { ...WAIT, description: 'the RabbitMQ user made again' });
    expect(await redisLogin(id)).toBe('OK');
    const amqpUrl = new URL(testAmqpUrl());
    amqpUrl.username = busUser;
    amqpUrl.password = enrollmentLoginPassword(EXECUTOR_SECRET, 'amqp', t.namespace, id);
    const conn = await connect(amqpUrl.toString());
    await conn.close();
    // A pass with nothing lost makes nothing.
    expect(await reconciler.runOnce()).toMatchObject({ redisRestored: [], busRestored: [] });
  });

  it('with no interval, makes the ACL user again as soon as its Redis connection is back (a restart or failover)', async () => {
    const id = await enroll('reconcile-on-ready');
    const redisUser = redisUserOf(t.namespace, id);
    const own = createRedis(testRedisUrl(), { logger: silentLogger(), name: `ax-reconciler-test-${t.namespace}` });
    try {
      reconciler = startEnrollmentLoginsReconciler({ ...t.deps, redis: own }, EXECUTOR_SECRET, 0);
      await waitFor(async () => (own.status === 'ready' ? true : undefined), { ...WAIT, description: 'the reconciler client ready' });
      await reconciler.runOnce();
      await t.redis.redis.call('ACL', 'DELUSER', redisUser);
      // The server drops the reconciler's connection, as a Redis restart does; the client reconnects.
      const clientId = await own.client('ID');
      await t.redis.redis.client('KILL', 'ID', String(clientId));
      await waitFor(async () => (await aclUserExists(redisUser)) || undefined, { ...WAIT, description: 'the Redis ACL user made again on reconnect' });
      expect(await redisLogin(id)).toBe('OK');
    } finally {
      await reconciler?.stop();
      reconciler = undefined;
      await closeRedis(own);
    }
  });

  it("does not make a revoked enrollment's users again", async () => {
    const id = await enroll('reconcile-revoked');
    expect((await t.call('DELETE', `/api/v1/workers/enrollments/${id}`)).status).toBe(204);
    reconciler = startEnrollmentLoginsReconciler(t.deps, EXECUTOR_SECRET, 0);
    const pass = await reconciler.runOnce();
    expect(pass.redisRestored).not.toContain(id);
    expect(pass.busRestored).not.toContain(id);
    const users = await enrollmentUsersOf(t.namespace, t.redis.redis, testBusAdmin());
    expect(users.redis).not.toContain(redisUserOf(t.namespace, id));
    expect(users.rabbitmq).not.toContain(busUserOf(t.namespace, id));
  });
});
