import { redisKeys } from '@ax/kit';
import { createTestRedis, uniqueNamespace } from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isDrained,
  publishRegistration,
  readRegistration,
  readRegistry,
  removeRegistration,
  setDrained,
  type WorkerRegistration,
} from './registry.js';

const ns = uniqueNamespace();
const keys = redisKeys(ns);
let fixture: Awaited<ReturnType<typeof createTestRedis>>;
beforeAll(async () => {
  fixture = await createTestRedis(ns);
});
afterAll(() => fixture.cleanup());

function registration(workerId: string, runningExecutionIds: string[] = []): WorkerRegistration {
  const now = new Date().toISOString();
  return {
    workerId,
    host: 'host-a',
    tags: ['etl'],
    cores: 2,
    slots: 8,
    running: runningExecutionIds.length,
    runningExecutionIds,
    avgDurationMs5m: 0,
    draining: false,
    version: '0.1.0',
    startedAt: now,
    at: now,
  };
}

describe('worker registry (R14: the lease lives with the registry entry)', () => {
  it('lists live workers with the executions they run, sorted by id', async () => {
    await publishRegistration(fixture.redis, keys, registration('w-b', ['e1', 'e2']), 15_000);
    await publishRegistration(fixture.redis, keys, registration('w-a'), 15_000);
    const all = await readRegistry(fixture.redis, keys);
    expect(all.map((w) => w.workerId)).toEqual(['w-a', 'w-b']);
    expect(all[1]?.runningExecutionIds).toEqual(['e1', 'e2']);
  });

  it('forgets a worker whose entry expired (missed heartbeats) and prunes the id set', async () => {
    await publishRegistration(fixture.redis, keys, registration('w-expiring', ['e9']), 50);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(await readRegistration(fixture.redis, keys, 'w-expiring')).toBeNull();
    expect((await readRegistry(fixture.redis, keys)).map((w) => w.workerId)).not.toContain('w-expiring');
    expect(await fixture.redis.sismember(keys.workers, 'w-expiring')).toBe(0);
  });

  it('reports a drained worker as draining until it is undrained', async () => {
    const entry = await readRegistration(fixture.redis, keys, 'w-a');
    await setDrained(fixture.redis, keys, 'w-a', entry!.startedAt);
    expect((await readRegistration(fixture.redis, keys, 'w-a'))?.draining).toBe(true);
    expect((await readRegistry(fixture.redis, keys)).find((w) => w.workerId === 'w-a')?.draining).toBe(true);
    expect(await isDrained(fixture.redis, keys, 'w-a', entry!.startedAt)).toBe(true);
    await setDrained(fixture.redis, keys, 'w-a', null);
    expect((await readRegistration(fixture.redis, keys, 'w-a'))?.draining).toBe(false);
    expect(await isDrained(fixture.redis, keys, 'w-a', entry!.startedAt)).toBe(false);
  });

  it('a drain ends with the drained process: the same id started again is not draining (ADMIN-API "Workers")', async () => {
    const before = registration('w-restarted');
    await publishRegistration(fixture.redis, keys, before, 60_000);
    await setDrained(fixture.redis, keys, 'w-restarted', before.startedAt);
    expect((await readRegistration(fixture.redis, keys, 'w-restarted'))?.draining).toBe(true);
    // The process exits and a new one registers under the same id: it starts later.
    const after = { ...registration('w-restarted'), startedAt: new Date(Date.parse(before.startedAt) + 1_000).toISOString() };
    await publishRegistration(fixture.redis, keys, after, 60_000);
    expect((await readRegistration(fixture.redis, keys, 'w-restarted'))?.draining).toBe(false);
    expect((await readRegistry(fixture.redis, keys)).find((w) => w.workerId === 'w-restarted')?.draining).toBe(false);
    expect(await isDrained(fixture.redis, keys, 'w-restarted', after.startedAt)).toBe(false);
  });

  it('a mark written before drains ended with their process ("1") still drains, until undrained', async () => {
    await fixture.redis.set(keys.drain('w-b'), '1');
    expect((await readRegistration(fixture.redis, keys, 'w-b'))?.draining).toBe(true);
    await setDrained(fixture.redis, keys, 'w-b', null);
    expect((await readRegistration(fixture.redis, keys, 'w-b'))?.draining).toBe(false);
  });

  it('removes an entry at once on deregistration', async () => {
    await removeRegistration(fixture.redis, keys, 'w-b');
    expect(await readRegistration(fixture.redis, keys, 'w-b')).toBeNull();
  });
});
