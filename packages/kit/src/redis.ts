/**
 * The Redis client every service uses, and the one place where Redis keys are composed.
 *
 * Client choices (ioredis):
 * - **Reconnect forever** with a capped, jittered delay (100 ms doubling to 5 s): Redis being
 *   away is an outage to ride out, not a reason to give up the client.
 * - **`maxRetriesPerRequest: 1`** (ioredis' default is 20): a command issued while Redis is
 *   unreachable fails after one reconnect attempt instead of hanging for ~20 of them. Every ax
 *   use of Redis has a fallback for an error (the fire lock counts as won, R2; heartbeats and
 *   registry reads are retried by their loop), so failing fast is what the callers want.
 * - **`commandTimeout` 5 s**: a connection that hangs without closing still fails the command.
 * - The offline queue stays on, so commands issued during a short reconnect wait for it.
 * - Errors are logged (at most one line per distinct message every 10 s) instead of ioredis'
 *   "Unhandled error event" on stderr.
 *
 * Pub/sub needs its own connection: `redis.duplicate()`.
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { NAMESPACE_PATTERN } from './ax-config.js';
import { maskUrlPassword } from './config.js';

export { Redis } from 'ioredis';

/** Options of `createRedis`. */
export interface CreateRedisOptions {
  readonly logger: Logger;
  /** Client name shown by `CLIENT LIST` (e.g. `ax-scheduler`). */
  readonly name?: string;
  /** Fail a command still unanswered after this many ms; default 5000. */
  readonly commandTimeoutMs?: number;
  /** Reconnect attempts a queued command waits for before failing; default 1. */
  readonly maxRetriesPerRequest?: number;
  /** Connect on first command instead of at once; default false. */
  readonly lazyConnect?: boolean;
  /** Further ioredis options (override the above). */
  readonly ioredis?: RedisOptions;
}

/** Delay before reconnect attempt `times` (1-based): 100 ms doubling, capped at 5 s, ±20 %. */
export function redisReconnectDelayMs(times: number, random: () => number = Math.random): number {
  const base = Math.min(5_000, 100 * 2 ** Math.min(times - 1, 16));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/**
 * Where Redis is: a URL (`redis://[user:password@]host:port[/db]`, `rediss://` for TLS), and
 * optionally the sentinels that know the current primary (then the URL's host is not used).
 */
export interface RedisTarget {
  readonly url: string;
  /** `host:port` of each sentinel (`AX_REDIS_SENTINELS`); empty = no Sentinel. */
  readonly sentinels?: readonly string[];
  /** The monitored primary's name (`AX_REDIS_SENTINEL_NAME`). Default `mymaster`. */
  readonly sentinelName?: string;
  /** Password of the sentinels (`AX_REDIS_SENTINEL_PASSWORD`). */
  readonly sentinelPassword?: string | undefined;
}

/** The target of a service's resolved configuration. */
export function redisTargetOf(config: {
  readonly redisUrl: string;
  readonly redisSentinels?: readonly string[];
  readonly redisSentinelName?: string;
  readonly redisSentinelPassword?: string | undefined;
}): RedisTarget {
  return {
    url: config.redisUrl,
    sentinels: config.redisSentinels ?? [],
    ...(config.redisSentinelName !== undefined ? { sentinelName: config.redisSentinelName } : {}),
    ...(config.redisSentinelPassword !== undefined ? { sentinelPassword: config.redisSentinelPassword } : {}),
  };
}

/**
 * ioredis options for a Sentinel target: the sentinels and the primary's name; password, user,
 * database and TLS from the URL. After a failover the old primary answers writes with
 * `READONLY` until it is reconfigured as a replica: such an error reconnects (ioredis asks the
 * sentinels again) and resends the command.
 */
export function sentinelOptions(target: RedisTarget): RedisOptions {
  const u = new URL(target.url);
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
  const tls = u.protocol === 'rediss:';
  return {
    sentinels: (target.sentinels ?? []).map((hostPort) => {
      const at = hostPort.lastIndexOf(':');
      return { host: hostPort.slice(0, at), port: Number(hostPort.slice(at + 1)) };
    }),
    name: target.sentinelName ?? 'mymaster',
    ...(target.sentinelPassword !== undefined ? { sentinelPassword: target.sentinelPassword } : {}),
    ...(u.password !== '' ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.username !== '' ? { username: decodeURIComponent(u.username) } : {}),
    ...(Number.isInteger(db) && db > 0 ? { db } : {}),
    ...(tls ? { tls: {}, enableTLSForSentinelMode: true } : {}),
    sentinelRetryStrategy: (times: number) => redisReconnectDelayMs(times),
    reconnectOnError: (error: Error) => (error.message.startsWith('READONLY') ? 2 : false),
  };
}

/** Creates a client for a URL (`redis://[:password@]host:port[/db]`) or a target with sentinels. */
export function createRedis(target: string | RedisTarget, options: CreateRedisOptions): Redis {
  const { logger } = options;
  const log = logger.child({ component: 'redis', ...(options.name ? { client: options.name } : {}) });
  const resolved: RedisTarget = typeof target === 'string' ? { url: target } : target;
  const common: RedisOptions = {
    maxRetriesPerRequest: options.maxRetriesPerRequest ?? 1,
    commandTimeout: options.commandTimeoutMs ?? 5_000,
    connectTimeout: 5_000,
    enableOfflineQueue: true,
    enableReadyCheck: true,
    lazyConnect: options.lazyConnect ?? false,
    retryStrategy: (times) => redisReconnectDelayMs(times),
    ...(options.name ? { connectionName: options.name } : {}),
  };
  const redis =
    (resolved.sentinels ?? []).length > 0
      ? new Redis({ ...common, ...sentinelOptions(resolved), ...options.ioredis })
      : new Redis(resolved.url, { ...common, ...options.ioredis });

  const lastLogged = new Map<string, number>();
  let wasReady = false;
  redis.on('error', (error: Error) => {
    const now = Date.now();
    const key = error.message;
    if ((lastLogged.get(key) ?? 0) + 10_000 > now) return;
    lastLogged.set(key, now);
    if (lastLogged.size > 50) lastLogged.clear();
    log.warn({ err: { message: maskUrlPassword(error.message), code: (error as { code?: unknown }).code } }, 'redis error');
  });
  redis.on('ready', () => {
    if (wasReady) log.info('redis reconnected');
    wasReady = true;
  });
  redis.on('reconnecting', (delayMs: number) => {
    log.debug({ delayMs }, 'redis reconnecting');
  });
  return redis;
}

/**
 * Closes a client: `QUIT` (waits for replies in flight), falling back to a hard disconnect if
 * that takes longer than `timeoutMs` (default 2000) or Redis is unreachable. Resolves once the
 * client has ended (status `end`).
 */
export async function closeRedis(redis: Redis, timeoutMs = 2_000): Promise<void> {
  if (redis.status === 'end') return;
  const ended = new Promise<void>((resolve) => redis.once('end', () => resolve()));
  const within = async (ms: number): Promise<boolean> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        ended.then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), ms);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  };
  if (redis.status === 'ready') {
    // A failed QUIT means the connection broke meanwhile: the disconnect below covers it.
    redis.quit().catch(() => redis.disconnect());
    if (await within(timeoutMs)) return;
  }
  const wasReconnecting = redis.status === 'reconnecting';
  redis.disconnect();
  // Between reconnect attempts there is no socket: disconnect() only cancels the next attempt
  // and ioredis emits no further event, so there is nothing left to wait for.
  if (!wasReconnecting) await within(1_000);
}

/**
 * Every Redis key and channel of a namespace (`AX_NAMESPACE`). Nothing else in ax writes a key
 * name; a new key gets a builder here.
 */
export function redisKeys(namespace: string) {
  if (!NAMESPACE_PATTERN.test(namespace)) {
    throw new Error(`invalid namespace ${JSON.stringify(namespace)}: lower-case letters, digits, "_", "-", "."`);
  }
  const ns = namespace;
  return Object.freeze({
    namespace: ns,
    /** `SCAN MATCH` pattern of every key of the namespace. */
    pattern: `${ns}:*`,
    /** Fire lock of one slot (`SET NX PX`, R2): `<ns>:fire:<task>:<expectedMs>`. */
    fireLock: (taskName: string, expectedMs: number): string => `${ns}:fire:${taskName}:${expectedMs}`,
    /** A worker's registry entry (hash with capacity and the execution ids it runs; TTL = lease TTL): `<ns>:worker:<id>`. */
    worker: (workerId: string): string => `${ns}:worker:${workerId}`,
    /** An operator's drain mark on a worker (no new work routed to it): `<ns>:drain:<id>`. */
    drain: (workerId: string): string => `${ns}:drain:${workerId}`,
    /** Set of registered ids of workers of no enrollment: `<ns>:workers`. */
    workers: `${ns}:workers`,
    /**
     * Set of registered ids of one enrollment's workers: `<ns>:workers:<enrollment id>`. Apart
     * from `workers` because an enrollment's Redis user may write only its own keys (R24).
     */
    enrollmentWorkers: (enrollmentId: string): string => `${ns}:workers:${enrollmentId}`,
    /** Set of live enrollment ids (written by admin-api): `<ns>:enrollments`. */
    enrollments: `${ns}:enrollments`,
    /** A worker's slot reservation counter (R9): `<ns>:slots:<id>`. */
    slots: (workerId: string): string => `${ns}:slots:${workerId}`,
    /** A scheduler's liveness entry: `<ns>:scheduler:<id>`. */
    scheduler: (schedulerId: string): string => `${ns}:scheduler:${schedulerId}`,
    /** A named singleton lock (retention purge, aggregates…): `<ns>:lock:<name>`. */
    lock: (name: string): string => `${ns}:lock:${name}`,
    /** A rate limiter's state, e.g. the global dispatch rate: `<ns>:rate:<name>`. */
    rate: (name: string): string => `${ns}:rate:${name}`,
    /** Alert de-duplication per subject and kind: `<ns>:alert:<kind>:<subject>`. */
    alert: (kind: string, subject: string): string => `${ns}:alert:${kind}:${subject}`,
    /** Worker pools whose backlog holds (backlog deferral, #22): hash pool → since (ISO, database clock): `<ns>:backlog-holds`. */
    backlogHolds: `${ns}:backlog-holds`,
    /** Round-robin cursor of a task's routing: `<ns>:rr:<task>`. */
    roundRobin: (taskName: string): string => `${ns}:rr:${taskName}`,
    /** Pub/sub channels. */
    channels: Object.freeze({
      /** A task definition was created, edited, paused or deleted: `<ns>:task-changed`. */
      taskChanged: `${ns}:task-changed`,
      /** Instances became PENDING (wake the dispatch loop): `<ns>:instances-ready`. */
      instancesReady: `${ns}:instances-ready`,
      /** A result was applied (wake DAG evaluation): `<ns>:instances-finished`. */
      instancesFinished: `${ns}:instances-finished`,
      /** A worker registered, deregistered or changed capacity: `<ns>:workers-changed`. */
      workersChanged: `${ns}:workers-changed`,
    }),
  });
}

/** The key builders of one namespace. */
export type RedisKeys = ReturnType<typeof redisKeys>;
