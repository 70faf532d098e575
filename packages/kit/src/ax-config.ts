/**
 * The environment variables of DESIGN §8, the same names in every service. A service takes
 * the ones it needs:
 *
 * ```ts
 * const config = loadConfigOrExit({
 *   ...pickFields(axConfigFields, ['mysqlUrl', 'redisUrl', 'namespace', 'logLevel', 'ackTimeoutMs']),
 *   httpPort: httpPortField('broker'),
 * });
 * ```
 * or all of them with `axServiceFields('broker')`.
 */
import os from 'node:os';
import { z } from 'zod';
import {
  enumField,
  intField,
  listField,
  pathField,
  positiveNumberField,
  stringField,
  urlField,
  type EnvContext,
  type EnvField,
} from './env-fields.js';
import { maskUrlPassword, type ConfigOf } from './config.js';
import { PRODUCTION_SECRET_MIN_LENGTH } from './production-secrets.js';

/** The four services and their default `AX_HTTP_PORT`. */
export const SERVICE_HTTP_PORTS = {
  'admin-api': 8080,
  scheduler: 9101,
  broker: 9102,
  worker: 9103,
} as const;

/** Name of an ax service. */
export type ServiceName = keyof typeof SERVICE_HTTP_PORTS;

/** Characters allowed in `AX_NAMESPACE`: it prefixes Redis keys, exchanges and queues. */
export const NAMESPACE_PATTERN = /^[a-z0-9_.-]{1,64}$/;

/** Characters allowed in a worker id: it appears in queue names and Redis keys. */
export const WORKER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** pino levels accepted by `AX_LOG_LEVEL`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** A pino level name. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `AX_HTTP_PORT` with the default of the given service (0 = any free port). */
export function httpPortField(service: ServiceName): EnvField<number> {
  return intField({ env: 'AX_HTTP_PORT', unit: 'count', min: 0, max: 65535, default: SERVICE_HTTP_PORTS[service] });
}

function defaultWorkerId(): string {
  const host = os
    .hostname()
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '');
  return `${host || 'worker'}-${process.pid}`.slice(0, 128);
}

const ms = (env: string, defaultMs: number): EnvField<number> => intField({ env, unit: 'ms', default: defaultMs });

/**
 * Default of `AX_BACKLOG_ALERT_INSTANCES`: about what a busy team's fleet clears in a few minutes;
 * held work beyond it (a worker pool gone, a serial task stuck) is worth a person's look.
 */
export const DEFAULT_BACKLOG_ALERT_INSTANCES = 1_000;

/** Default of `AX_AMQP_URL`: the local RabbitMQ. */
export const DEFAULT_AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';

/**
 * `AX_AMQP_URL`: a comma-separated list of `amqp://` / `amqps://` URLs, each checked as a
 * `urlField` is (format; with `NODE_ENV=production` no placeholder credentials). Blanks around
 * items and empty items are dropped, duplicates kept once.
 */
function amqpUrlsField(): EnvField<readonly string[]> {
  const node = urlField({ env: 'AX_AMQP_URL', protocols: ['amqp:', 'amqps:'] });
  return {
    env: node.env,
    expected: `${node.expected.replace(/^a /, 'an ')}, or the URLs of a cluster's nodes comma-separated`,
    sensitivity: 'url',
    schema: (ctx) => {
      const nodeSchema = node.schema(ctx);
      return z
        .string()
        .optional()
        .transform((raw, zctx): readonly string[] => {
          if (raw === undefined) return Object.freeze([DEFAULT_AMQP_URL]);
          const items = raw
            .split(',')
            .map((item) => item.trim())
            .filter((item) => item !== '');
          if (items.length === 0) {
            zctx.addIssue({ code: 'custom', message: `expected ${node.expected} (no URL in the list)` });
            return z.NEVER;
          }
          const urls: string[] = [];
          for (const [index, item] of items.entries()) {
            const parsed = nodeSchema.safeParse(item);
            if (!parsed.success) {
              const problem = parsed.error.issues[0]?.message ?? `expected ${node.expected}`;
              zctx.addIssue({ code: 'custom', message: items.length === 1 ? problem : `node ${index + 1} of ${items.length} (${maskUrlPassword(item)}): ${problem}` });
              return z.NEVER;
            }
            urls.push(parsed.data);
          }
          return Object.freeze([...new Set(urls)]);
        });
    },
  };
}

/**
 * Every ax variable except `AX_HTTP_PORT` (whose default depends on the service; see
 * `httpPortField`). Keys are the property names of the resolved configuration.
 */
export const axConfigFields = {
  /**
   * `AX_MYSQL_URL` — MySQL/MariaDB connection URL with the database name. Default
   * `mysql://root@127.0.0.1:3306/ax`. Like every URL field: with `NODE_ENV=production` a password
   * (or user name) carrying the `CHANGE_ME` placeholder marker is refused.
   */
  mysqlUrl: urlField({
    env: 'AX_MYSQL_URL',
    protocols: ['mysql:', 'mariadb:'],
    requirePath: 'a database name',
    default: 'mysql://root@127.0.0.1:3306/ax',
  }),
  /** `AX_REDIS_URL` — Redis for locks, registry, pub/sub. Default `redis://127.0.0.1:6379`. */
  redisUrl: urlField({ env: 'AX_REDIS_URL', protocols: ['redis:', 'rediss:'], default: 'redis://127.0.0.1:6379' }),
  /**
   * `AX_REDIS_SENTINELS` — Redis through Sentinel: `host:port` of each sentinel, comma-separated.
   * Set, the client asks them for the primary of `AX_REDIS_SENTINEL_NAME` and follows a failover
   * by itself; `AX_REDIS_URL` then gives only the password, database number and TLS. Default:
   * none (`AX_REDIS_URL` is the server).
   */
  redisSentinels: listField({
    env: 'AX_REDIS_SENTINELS',
    expected: 'host:port of each sentinel, comma-separated (e.g. "s1:26379,s2:26379,s3:26379")',
    itemPattern: /^[A-Za-z0-9.-]{1,253}:\d{1,5}$/,
    default: [],
  }),
  /** `AX_REDIS_SENTINEL_NAME` — the monitored primary's name in the sentinels' configuration. Default `mymaster`. */
  redisSentinelName: stringField({
    env: 'AX_REDIS_SENTINEL_NAME',
    expected: 'a Sentinel master name (letters, digits, "_", "-", ".")',
    pattern: /^[A-Za-z0-9_.-]{1,128}$/,
    default: 'mymaster',
  }),
  /** `AX_REDIS_SENTINEL_PASSWORD` — password of the sentinels themselves (`requirepass` in sentinel.conf). Default: none. Secret. */
  redisSentinelPassword: stringField({ env: 'AX_REDIS_SENTINEL_PASSWORD', expected: 'a password', sensitivity: 'secret', optional: true }),
  /**
   * `AX_AMQP_URL` — RabbitMQ: one node's URL, or the URLs of the nodes of a cluster,
   * comma-separated (`amqp://ax:…@rabbit-0:5672,amqp://ax:…@rabbit-1:5672,…`). Resolved to the
   * list, in order; `@ax/bus` connects to the first and moves to the next when it loses a node.
   * A wrong one is named by its place (`node 2 of 3`), its password masked. Default
   * `amqp://guest:guest@127.0.0.1:5672`.
   */
  amqpUrl: amqpUrlsField(),
  /**
   * `AX_AMQP_MANAGEMENT_URL` — admin-api: RabbitMQ's management HTTP API
   * (`http(s)://user:password@host:15672`), where the RabbitMQ user of each worker enrollment is
   * made and deleted (DESIGN R24). Its login needs the `administrator` tag (docs/deploy.md).
   * Default: unset, and admin-api then uses `defaultManagementUrl` of `@ax/bus` on the first
   * `AX_AMQP_URL` node: the same host on port 15672 (15671 for `amqps:`) with the AMQP URL's
   * login. A credential: `AX_AMQP_MANAGEMENT_URL_FILE` works, and its password is masked.
   */
  amqpManagementUrl: urlField({ env: 'AX_AMQP_MANAGEMENT_URL', protocols: ['http:', 'https:'], optional: true }),
  /**
   * `AX_NAMESPACE` — prefix of every Redis key, exchange and queue (lower-case letters, digits,
   * `_`, `-`, `.`; at most 64). Default `ax`.
   */
  namespace: stringField({
    env: 'AX_NAMESPACE',
    expected: 'lower-case letters, digits, "_", "-" or "." (1 to 64 characters)',
    pattern: NAMESPACE_PATTERN,
    default: 'ax',
  }),
  /** `AX_LOG_LEVEL` — pino level. Default `info`. */
  logLevel: enumField({ env: 'AX_LOG_LEVEL', values: LOG_LEVELS, default: 'info' }),
  /**
   * `AX_ADMIN_TOKEN` — bootstrap admin bearer token (at least 16 characters; with
   * `NODE_ENV=production` at least 32 and no `CHANGE_ME` placeholder). Default: none. Secret.
   */
  adminToken: stringField({
    env: 'AX_ADMIN_TOKEN',
    expected: 'a token of at least 16 characters',
    minLength: 16,
    productionMinLength: PRODUCTION_SECRET_MIN_LENGTH,
    sensitivity: 'secret',
    optional: true,
  }),
  /**
   * `AX_EXECUTOR_SECRET` — HMAC key between workers, business endpoints and report/claim (at
   * least 16 characters; with `NODE_ENV=production` at least 32 and no `CHANGE_ME` placeholder).
   * Default: none. Secret.
   */
  executorSecret: stringField({
    env: 'AX_EXECUTOR_SECRET',
    expected: 'a key of at least 16 characters',
    minLength: 16,
    productionMinLength: PRODUCTION_SECRET_MIN_LENGTH,
    sensitivity: 'secret',
    optional: true,
  }),
  /** `AX_WORKER_ID` — worker identity (letters, digits, `_`, `-`, `.`; at most 128). Default `<host>-<pid>`. */
  workerId: stringField({
    env: 'AX_WORKER_ID',
    expected: 'letters, digits, "_", "-" or "." starting with a letter or digit (at most 128 characters)',
    pattern: WORKER_ID_PATTERN,
    default: defaultWorkerId,
  }),
  /** `AX_WORKER_TAGS` — comma list of the worker's tags. Default: none. */
  workerTags: listField({
    env: 'AX_WORKER_TAGS',
    expected: 'a comma-separated list of tags (letters, digits, "_", "-", ".", ":", "/", "=")',
    itemPattern: /^[A-Za-z0-9_.:/=-]{1,64}$/,
    default: [],
  }),
  /** `AX_WORKER_SLOTS` — jobs a worker runs at once. Default: CPU cores × 4. */
  workerSlots: intField({ env: 'AX_WORKER_SLOTS', unit: 'count', max: 10_000, default: () => os.availableParallelism() * 4 }),
  /**
   * `AX_WORKER_CREDENTIAL_FILE` — worker: the file holding its enrollment's credential (`axw_…`,
   * ADMIN-API.md "Workers"; keep it readable by the worker only). Set, the worker asks
   * `AX_ADMIN_URL` for its teams, RabbitMQ and Redis logins and executor keys, and is never given
   * `AX_EXECUTOR_SECRET` (R24, R25). Default: none — the worker runs unenrolled, which the
   * worker refuses with `NODE_ENV=production` (services/worker/src/env.ts).
   */
  workerCredentialFile: pathField({ env: 'AX_WORKER_CREDENTIAL_FILE', optional: true }),
  /** `AX_ADMIN_URL` — worker: admin-api's base URL (`http(s)://host:port`), required with `AX_WORKER_CREDENTIAL_FILE`. Default: none. */
  adminUrl: urlField({ env: 'AX_ADMIN_URL', protocols: ['http:', 'https:'], optional: true }),
  /**
   * `AX_WORKER_REFRESH_MS` — how often an enrolled worker asks admin-api for its enrollment again,
   * so rotated keys, changed teams and a revocation reach it without a restart. Default 30000 ms.
   */
  workerRefreshMs: intField({ env: 'AX_WORKER_REFRESH_MS', unit: 'ms', min: 100, default: 30_000 }),
  /**
   * `AX_HTTP_EXECUTOR_ALLOW` — comma list of hosts an `http` task may call and the addresses they
   * may resolve to (`host`, `*.domain`, `host:port`, `internal:host`, `10.0.0.0/8`, `[::1]`, or `*`
   * for any). Default `*`, except with `NODE_ENV=production`, where it is required. Every service
   * reads it (one shared ConfigMap); the worker checks each entry in full (executors/host-allow.ts).
   */
  httpExecutorAllow: listField({
    env: 'AX_HTTP_EXECUTOR_ALLOW',
    expected: 'a comma-separated list of hosts ("*", "host", "*.domain", "host:port", "internal:host", "10.0.0.0/8", "[::1]")',
    itemPattern:
      /^(\*|(internal:)?(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(\/\d{1,3})?(:\d{1,5})?|\[[0-9a-f:.]+(\/\d{1,3})?\](:\d{1,5})?)$/,
    lowerCase: true,
    requiredReason: (ctx: EnvContext) => (ctx.production ? 'required when NODE_ENV=production' : undefined),
    default: ['*'],
  }),
  /** `AX_ALERT_WEBHOOK_URL` — where alerts are POSTed. Default: none (alerts are only logged). Secret (such URLs embed tokens). */
  alertWebhookUrl: urlField({
    env: 'AX_ALERT_WEBHOOK_URL',
    protocols: ['http:', 'https:'],
    sensitivity: 'secret',
    optional: true,
  }),
  /** `AX_DISPATCH_RATE` — dispatches per second, all brokers together. Default: unlimited (`undefined`). */
  dispatchRatePerSecond: positiveNumberField({ env: 'AX_DISPATCH_RATE', unit: 'perSecond', optional: true }),
  /** `AX_RETENTION_DAYS` — days of history kept before the purge. Default 30. */
  retentionDays: intField({ env: 'AX_RETENTION_DAYS', unit: 'days', default: 30 }),
  /** `AX_PLUGIN_DIR` — directory of worker plugin modules, resolved to an absolute path. Default `./plugins`. */
  pluginDir: pathField({ env: 'AX_PLUGIN_DIR', default: './plugins' }),
  /** `AX_SHUTDOWN_GRACE_S` — how long SIGTERM waits for running work, in seconds (decimals allowed). Default 30. */
  shutdownGraceSeconds: positiveNumberField({ env: 'AX_SHUTDOWN_GRACE_S', unit: 's', default: 30 }),

  /** `AX_ACK_TIMEOUT_MS` — how long a dispatch waits for the worker's ACK. Default 5000 ms. */
  ackTimeoutMs: ms('AX_ACK_TIMEOUT_MS', 5_000),
  /** `AX_MAX_REROUTES` — re-routes per attempt after ACK timeouts before `ACK_TIMEOUT`. Default 3. */
  maxReroutes: intField({ env: 'AX_MAX_REROUTES', unit: 'count', min: 0, default: 3 }),
  /** `AX_HEARTBEAT_INTERVAL_MS` — worker heartbeat / registry refresh period. Default 5000 ms. */
  heartbeatIntervalMs: ms('AX_HEARTBEAT_INTERVAL_MS', 5_000),
  /** `AX_LEASE_TTL_MS` — TTL of a worker's registry entry and leases. Default 15000 ms. */
  leaseTtlMs: ms('AX_LEASE_TTL_MS', 15_000),
  /** `AX_LOST_WORKER_GRACE_MS` — grace after a lease expires before `LOST_WORKER`. Default 10000 ms. */
  lostWorkerGraceMs: ms('AX_LOST_WORKER_GRACE_MS', 10_000),
  /** `AX_MAX_LOST_REDISPATCHES` — automatic re-dispatches after lost workers. Default 3. */
  maxLostRedispatches: intField({ env: 'AX_MAX_LOST_REDISPATCHES', unit: 'count', min: 0, default: 3 }),
  /** `AX_FIRE_LOCK_TTL_MS` — TTL of the Redis fire lock. Default 30000 ms. */
  fireLockTtlMs: ms('AX_FIRE_LOCK_TTL_MS', 30_000),
  /** `AX_MISFIRE_THRESHOLD_MS` — lateness after which a slot counts as missed. Default 5000 ms. */
  misfireThresholdMs: ms('AX_MISFIRE_THRESHOLD_MS', 5_000),
  /** `AX_WORKER_SKEW_LIMIT_MS` — worker clock offset vs Redis `TIME` over which it refuses work. Default 2000 ms. */
  workerSkewLimitMs: ms('AX_WORKER_SKEW_LIMIT_MS', 2_000),
  /** `AX_SCHEDULER_SKEW_LIMIT_MS` — scheduler clock offset vs MySQL `NOW(3)` over which it stops firing. Default 2000 ms. */
  schedulerSkewLimitMs: ms('AX_SCHEDULER_SKEW_LIMIT_MS', 2_000),
  /** `AX_NO_WORKER_ALERT_MS` — how long an instance waits without an eligible worker before an alert. Default 60000 ms. */
  noWorkerAlertMs: ms('AX_NO_WORKER_ALERT_MS', 60_000),
  /**
   * `AX_BACKLOG_ALERT_INSTANCES` — a team's `BACKLOG` alert fires when more than this many of its
   * instances are due and held for a reason other than `UPSTREAM` (brokers' backlog scan; one alert
   * per team and hour). Default 1000.
   */
  backlogAlertInstances: intField({ env: 'AX_BACKLOG_ALERT_INSTANCES', unit: 'count', min: 1, default: DEFAULT_BACKLOG_ALERT_INSTANCES }),
  /** `AX_BACKOFF_CAP_MS` — upper bound of a retry backoff. Default 3600000 ms (1 h). */
  backoffCapMs: ms('AX_BACKOFF_CAP_MS', 3_600_000),
  /** `AX_DEPENDENCY_TIMEOUT_S` — default time a `WAITING` instance waits for its parents. Default 86400 s (24 h). */
  dependencyTimeoutSeconds: intField({ env: 'AX_DEPENDENCY_TIMEOUT_S', unit: 's', default: 86_400 }),
  /** `AX_HMAC_WINDOW_MS` — accepted age of an HMAC-signed request (replay window). Default 300000 ms (5 min). */
  hmacWindowMs: ms('AX_HMAC_WINDOW_MS', 300_000),
  /**
   * `AX_EXECUTOR_KEY_GRACE_S` — after a team's executor key is rotated, how long the previous
   * version still verifies (and workers also sign with it). Default 86400 s (24 h).
   */
  executorKeyGraceSeconds: intField({ env: 'AX_EXECUTOR_KEY_GRACE_S', unit: 's', min: 0, default: 86_400 }),
  /** `AX_OUTPUT_TAIL_BYTES` — bytes of job output kept per execution. Default 65536 (64 KiB). */
  outputTailBytes: intField({ env: 'AX_OUTPUT_TAIL_BYTES', unit: 'bytes', default: 65_536 }),
  /** `AX_REQUEST_BODY_LIMIT_BYTES` — largest accepted HTTP request body. Default 1048576 (1 MiB). */
  requestBodyLimitBytes: intField({ env: 'AX_REQUEST_BODY_LIMIT_BYTES', unit: 'bytes', default: 1_048_576 }),
} as const;

/** Every ax variable, with `AX_HTTP_PORT` defaulting to the service's port. */
export function axServiceFields(service: ServiceName): typeof axConfigFields & { readonly httpPort: EnvField<number> } {
  return { ...axConfigFields, httpPort: httpPortField(service) };
}

/** The resolved configuration of every ax variable. */
export type AxConfig = ConfigOf<ReturnType<typeof axServiceFields>>;
