import { redisKeys } from '@ax/kit';
import { createTestRedis, uniqueNamespace } from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishRegistration, readRegistration, readRegistry, type WorkerRegistration } from './registry.js';

const ns = uniqueNamespace();
const keys = redisKeys(ns);
let fixture: Awaited<ReturnType<typeof createTestRedis>>;
beforeAll(async () => {
  fixture = await createTestRedis(ns);
});
afterAll(() => fixture.cleanup());

function registration(workerId: string, extra: Partial<WorkerRegistration> = {}): WorkerRegistration {
  const now = new Date().toISOString();
  return { workerId, host: 'h', tags: [], cores: 2, slots: 8, running: 0, runningExecutionIds: [], avgDurationMs5m: 0, draining: false, version: '1', startedAt: now, at: now, ...extra };
}

describe('worker registry: teams (AX_WORKER_TEAMS)', () => {
  it('#18 placement: a worker entry carries its teams; an entry written before teams is read as serving every team', async () => {
    await publishRegistration(fixture.redis, keys, registration('w-teams', { teams: ['a', 'b'] }), 15_000);
    // An entry as a worker from before teams wrote it: no `teams` field at all.
    const { teams: _none, ...old } = registration('w-old');
    await fixture.redis.set(keys.worker('w-old'), JSON.stringify(old), 'PX', 15_000);
    await fixture.redis.sadd(keys.workers, 'w-old');
    expect((await readRegistration(fixture.redis, keys, 'w-teams'))?.teams).toEqual(['a', 'b']);
    const all = await readRegistry(fixture.redis, keys);
    expect(all.map((w) => w.workerId)).toEqual(['w-old', 'w-teams']);
    expect(all.find((w) => w.workerId === 'w-old')?.teams).toBeUndefined();
  });

  it('#18 placement: an entry whose teams is not a list of names is skipped, never taken as "every team"', async () => {
    await fixture.redis.set(keys.worker('w-bad'), JSON.stringify({ ...registration('w-bad'), teams: 'a' }), 'PX', 15_000);
    await fixture.redis.sadd(keys.workers, 'w-bad');
    expect(await readRegistration(fixture.redis, keys, 'w-bad')).toBeNull();
    expect((await readRegistry(fixture.redis, keys)).map((w) => w.workerId)).not.toContain('w-bad');
  });
});
