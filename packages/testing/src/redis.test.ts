import { afterAll, describe, expect, it } from 'vitest';
import { uniqueNamespace } from './namespace.js';
import { createTestRedis, type TestRedis } from './redis.js';

describe('createTestRedis', () => {
  const opened: TestRedis[] = [];
  /** Keys outside any `<ns>:*` pattern, deleted even if the test fails. */
  const strayKeys: string[] = [];
  afterAll(async () => {
    const last = opened[0];
    if (last && strayKeys.length > 0) await last.redis.del(...strayKeys);
    await Promise.all(opened.map((r) => r.cleanup()));
  });

  it('cleanup deletes every key of its namespace, in batches, and no other key', async () => {
    const ns = uniqueNamespace();
    const other = await createTestRedis(`${ns}x`); // shares the prefix string, not the namespace
    opened.push(other);
    const t = await createTestRedis(ns);
    opened.push(t);
    const pipeline = t.redis.pipeline();
    for (let i = 0; i < 2_500; i++) pipeline.set(`${ns}:k:${i}`, '1');
    pipeline.hset(`${ns}:worker:w1`, { slots: 4 });
    pipeline.sadd(`${ns}:workers`, 'w1');
    await pipeline.exec();
    strayKeys.push(`${ns}-no-colon`);
    await other.redis.set(`${ns}x:keep`, '1');
    await other.redis.set(`${ns}-no-colon`, '1');

    expect(await t.redis.dbsize()).toBeGreaterThanOrEqual(2_502);
    await t.cleanup();
    expect(t.redis.status).toBe('end');

    const [, left] = await other.redis.scan('0', 'MATCH', `${ns}:*`, 'COUNT', 10_000);
    expect(left).toEqual([]);
    expect(await other.redis.exists(`${ns}:k:0`, `${ns}:workers`, `${ns}:worker:w1`)).toBe(0);
    expect(await other.redis.get(`${ns}x:keep`)).toBe('1');
    expect(await other.redis.get(`${ns}-no-colon`)).toBe('1');
    await t.cleanup(); // idempotent
  });
});
