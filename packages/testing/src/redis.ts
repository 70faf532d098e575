/**
 * A Redis client for one test file's namespace, and cleanup of every key under it.
 */
import { closeRedis } from '@ax/kit';
import { Redis } from 'ioredis';

/** Default Redis of the test environment: `AX_REDIS_URL` or the local server. */
export function testRedisUrl(): string {
  const fromEnv = process.env.AX_REDIS_URL?.trim();
  return fromEnv ? fromEnv : 'redis://127.0.0.1:6379';
}

/** A client and the cleanup of its namespace. */
export interface TestRedis {
  readonly redis: Redis;
  readonly url: string;
  readonly namespace: string;
  /** Deletes every key `<ns>:*` and closes the client (status `end` when it resolves). Idempotent. */
  cleanup(): Promise<void>;
}

/**
 * Deletes every key matching `<namespace>:*` (SCAN + UNLINK in batches) and returns how many.
 * Keys of other namespaces are never touched.
 */
export async function deleteNamespaceKeys(redis: Redis, namespace: string): Promise<number> {
  if (!/^[a-z0-9_.-]+$/.test(namespace)) throw new Error(`invalid namespace ${JSON.stringify(namespace)}`);
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${namespace}:*`, 'COUNT', 1000);
    cursor = next;
    // SCAN may return a key twice; UNLINK of a gone key is harmless and not counted.
    for (let i = 0; i < keys.length; i += 500) {
      deleted += await redis.unlink(...keys.slice(i, i + 500));
    }
  } while (cursor !== '0');
  return deleted;
}

/**
 * Deletes the ACL users of worker enrollments of `namespace` (`<ns>.enr-…`, DESIGN R24) that a
 * test's admin API made and did not revoke (a stack killed mid-test, say). Returns them.
 */
export async function deleteNamespaceEnrollmentRedisUsers(redis: Redis, namespace: string): Promise<string[]> {
  const users = ((await redis.call('ACL', 'USERS')) as string[]).filter((u) => u.startsWith(`${namespace}.enr-`));
  for (const user of users) await redis.call('ACL', 'DELUSER', user);
  return users;
}

/** Connects to the test Redis (default `testRedisUrl()`); call `cleanup()` in `afterAll`. */
export async function createTestRedis(namespace: string, options: { url?: string } = {}): Promise<TestRedis> {
  const url = options.url ?? testRedisUrl();
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true, connectTimeout: 5_000 });
  // Errors surface through the commands that fail; this listener only keeps ioredis quiet.
  redis.on('error', () => undefined);
  await redis.connect();
  let cleaned: Promise<void> | undefined;
  return {
    redis,
    url,
    namespace,
    cleanup: () => {
      cleaned ??= (async () => {
        try {
          await deleteNamespaceKeys(redis, namespace);
          await deleteNamespaceEnrollmentRedisUsers(redis, namespace);
        } finally {
          await closeRedis(redis);
        }
      })();
      return cleaned;
    },
  };
}
