// Brokers take turns at the claim (real Redis).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@ax/kit';
import { createTestRedis, uniqueNamespace, type TestRedis } from '@ax/testing';
import { giveTurn, takeTurn } from './dispatch-turn.js';

const namespace = uniqueNamespace('axturn');
let redis: TestRedis;

beforeAll(async () => {
  redis = await createTestRedis(namespace);
});

afterAll(async () => {
  await redis?.cleanup();
});

describe('dispatch turn', () => {
  it('one broker at a time; only the holder gives it back; a dead holder\'s turn expires', async () => {
    const key = redisKeys(namespace).lock('dispatch');
    expect(await takeTurn(redis.redis, key, 'b1', 300)).toBe('mine');
    expect(await takeTurn(redis.redis, key, 'b2', 300)).toBe('busy');
    await giveTurn(redis.redis, key, 'b2'); // not the holder: nothing happens
    expect(await takeTurn(redis.redis, key, 'b2', 300)).toBe('busy');
    await giveTurn(redis.redis, key, 'b1');
    expect(await takeTurn(redis.redis, key, 'b2', 300)).toBe('mine');
    // b2 "dies" holding it: b1 gets it once it expired.
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(await takeTurn(redis.redis, key, 'b1', 300)).toBe('mine');
    await giveTurn(redis.redis, key, 'b1');
  });

  it('without Redis the turn is unknown (the broker claims without it) and giving it back does not throw', async () => {
    const broken = { set: () => Promise.reject(new Error('ECONNREFUSED')), eval: () => Promise.reject(new Error('ECONNREFUSED')) };
    expect(await takeTurn(broken as never, 'k', 'b1')).toBe('unknown');
    await expect(giveTurn(broken as never, 'k', 'b1')).resolves.toBeUndefined();
  });
});
