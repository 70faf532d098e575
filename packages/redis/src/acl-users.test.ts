/**
 * R24 on a real Redis: an enrollment's ACL user writes its own workers' registry entries and
 * nothing else. Each refusal below is an attack from issue #44; revocation removes the user
 * (disconnecting it) and its workers' entries, so brokers see them gone.
 */
import { Redis as IORedis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollmentLoginPassword, redisUserOf } from '@ax/core';
import { redisKeys } from '@ax/kit';
import { createTestRedis, testRedisUrl, uniqueNamespace } from '@ax/testing';
import { deleteEnrollmentRedisUser, putEnrollmentRedisUser } from './acl-users.js';
import { publishRegistration, readRegistry, removeRegistration, type WorkerRegistration } from './registry.js';

const ns = uniqueNamespace('axacl');
const keys = redisKeys(ns);
const X = 'enr-xxxxxxxxxxx2';
const Y = 'enr-yyyyyyyyyyy2';
let fixture: Awaited<ReturnType<typeof createTestRedis>>;
const clients: IORedis[] = [];

function as(enrollmentId: string): IORedis {
  const url = new URL(testRedisUrl());
  const client = new IORedis({
    host: url.hostname,
    port: Number(url.port || 6379),
    username: redisUserOf(ns, enrollmentId),
    password: enrollmentLoginPassword('test-secret', 'redis', ns, enrollmentId),
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectionName: `ax-worker-test`,
  });
  client.on('error', () => undefined);
  clients.push(client);
  return client;
}

function registration(workerId: string): WorkerRegistration {
  const now = new Date().toISOString();
  return { workerId, host: 'h', tags: [], cores: 1, slots: 2, running: 0, runningExecutionIds: [], avgDurationMs5m: 0, draining: false, version: '0', startedAt: now, at: now };
}

beforeAll(async () => {
  fixture = await createTestRedis(ns);
  for (const id of [X, Y]) await putEnrollmentRedisUser(fixture.redis, keys, id, enrollmentLoginPassword('test-secret', 'redis', ns, id));
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  for (const id of [X, Y, 'enr-zzzzzzzzzzz2']) await fixture.redis.call('ACL', 'DELUSER', redisUserOf(ns, id)).catch(() => undefined);
  await fixture.cleanup();
});

describe('an enrollment Redis user (R24)', () => {
  it('writes and removes its own workers registry entries, which brokers then read', async () => {
    const x = as(X);
    await x.connect();
    await publishRegistration(x, keys, registration(`${X}.host-1`), 15_000);
    expect((await readRegistry(fixture.redis, keys)).map((r) => r.workerId)).toContain(`${X}.host-1`);
    await removeRegistration(x, keys, `${X}.host-1`);
    expect((await readRegistry(fixture.redis, keys)).map((r) => r.workerId)).not.toContain(`${X}.host-1`);
  });

  it("refuses writing another enrollment's or an unenrolled worker's entry, and any other key", async () => {
    await publishRegistration(fixture.redis, keys, registration(`${Y}.host-1`), 15_000);
    const x = as(X);
    await x.connect();
    await expect(publishRegistration(x, keys, registration(`${Y}.host-1`), 15_000)).rejects.toThrow(/NOPERM|EXECABORT/);
    await expect(x.set(keys.worker(`${Y}.host-1`), '{}')).rejects.toThrow(/NOPERM/);
    await expect(x.del(keys.worker(`${Y}.host-1`))).rejects.toThrow(/NOPERM/);
    await expect(x.srem(keys.enrollmentWorkers(Y), `${Y}.host-1`)).rejects.toThrow(/NOPERM/);
    await expect(x.set(keys.worker('legacy-1'), '{}')).rejects.toThrow(/NOPERM/);
    await expect(x.sadd(keys.workers, 'legacy-1')).rejects.toThrow(/NOPERM/);
    await expect(x.set(keys.drain(`${X}.host-1`), '1')).rejects.toThrow(/NOPERM/);
    await expect(x.set(keys.fireLock('t', 1), '1')).rejects.toThrow(/NOPERM/);
    await expect(x.get(keys.worker(`${Y}.host-1`))).rejects.toThrow(/NOPERM/);
    await expect(x.call('ACL', 'SETUSER', redisUserOf(ns, X), '~*')).rejects.toThrow(/NOPERM/);
    await expect(x.flushall()).rejects.toThrow(/NOPERM/);
    expect((await readRegistry(fixture.redis, keys)).find((r) => r.workerId === `${Y}.host-1`)).toBeDefined();
  });

  it('is believed only for ids of its own enrollment', async () => {
    const x = as(X);
    await x.connect();
    // an entry under its own key that claims another worker id, and another enrollment's id in its own set
    await x.set(keys.worker(`${X}.liar`), JSON.stringify(registration(`${Y}.host-9`)));
    await x.sadd(keys.enrollmentWorkers(X), `${X}.liar`, `${Y}.host-9`);
    const ids = (await readRegistry(fixture.redis, keys)).map((r) => r.workerId);
    expect(ids).not.toContain(`${Y}.host-9`);
    expect(ids).not.toContain(`${X}.liar`);
  });

  it('stops working when revoked: the user is gone, its client disconnected and its workers unlisted', async () => {
    const Z = 'enr-zzzzzzzzzzz2';
    await putEnrollmentRedisUser(fixture.redis, keys, Z, enrollmentLoginPassword('test-secret', 'redis', ns, Z));
    const z = as(Z);
    await z.connect();
    await publishRegistration(z, keys, registration(`${Z}.host-1`), 15_000);
    const closed = new Promise<void>((resolve) => z.once('end', () => resolve()));
    expect(await deleteEnrollmentRedisUser(fixture.redis, keys, Z)).toEqual([`${Z}.host-1`]);
    await closed;
    expect((await readRegistry(fixture.redis, keys)).map((r) => r.workerId)).not.toContain(`${Z}.host-1`);
    const again = as(Z);
    const refused = new Promise<string>((resolve) => again.on('error', (err: Error) => resolve(err.message)));
    await again.connect().catch(() => undefined);
    expect(await refused).toMatch(/WRONGPASS|invalid username-password/);
  });
});
