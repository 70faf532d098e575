/**
 * admin-api: the REST API of ax (DESIGN §6, ADMIN-API.md). Configuration from the environment
 * → MySQL pool → schema check (R22) → bootstrap admin token → Redis → RabbitMQ publisher →
 * express app → listen on AX_HTTP_PORT (default 8080); SIGTERM/SIGINT stop it cleanly.
 */
import type { Server } from 'node:http';
import { busAdminReachable, createBus, defaultManagementUrl, vhostOfAmqpUrl, type BusAdminOptions } from '@ax/bus';
import { axServiceFields, CONFIG_ERROR_EXIT_CODE, DEFAULT_AMQP_URL, closeRedis, createLogger, createMetrics, createRedis, createShutdown, intField, listField, loadConfigOrExit, pathField, redisKeys, redisTargetOf, stringField, toError } from '@ax/kit';
import { assertSchemaSupported, createPool } from '@ax/store';
import { createApp } from './app.js';
import { bootstrapAdminToken } from './auth.js';
import { trustedProxiesField } from './client-address.js';
import { consoleBuilt, locateConsoleDist } from './console.js';
import { DEFAULT_ENROLLMENT_RECONCILE_INTERVAL_MS, startEnrollmentLoginsReconciler } from './enrollment-logins-reconciler.js';
import { DEFAULT_LOG_STREAMS_PER_TOKEN } from './log-stream-registry.js';
import { createApiMetrics } from './metrics.js';
import { createStatsCache } from './stats-cache.js';
import { startStatsRollupLoop } from './stats-rollup-loop.js';
import { startTaskTextSweep } from './task-text-sweep.js';
import { ADMIN_LOCK_WAIT_TIMEOUT_SECONDS } from './write-transaction.js';
import { oidcSettingsOf, sessionLifetimesOf, signInFields } from './oidc-config.js';
import { createOidcSignIn } from './oidc.js';

const config = loadConfigOrExit({
  ...axServiceFields('admin-api'),
  /** `AX_ADMIN_CORS_ORIGINS` — comma list of origins allowed by CORS (`*` = any). Default: none (CORS off). */
  corsOrigins: listField({
    env: 'AX_ADMIN_CORS_ORIGINS',
    expected: 'a comma-separated list of origins such as https://console.example.com, or *',
    itemPattern: /^(\*|https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?)$/,
    default: [],
  }),
  /** `AX_TRUSTED_PROXIES` — comma list of proxy IPs/CIDRs whose `X-Forwarded-For` names the client. Default: none. */
  trustedProxies: trustedProxiesField(),
  /** `AX_CONSOLE_DIR` — a console build to serve at / instead of the installed `@ax/console` dist (a custom or side-by-side build). */
  consoleDir: pathField({ env: 'AX_CONSOLE_DIR', optional: true }),
  /** `AX_TRACE_URL_TEMPLATE` — a trace's URL in the tracing UI with `{traceId}` (#48): the console links instances' trace ids there. Default: none. */
  traceUrlTemplate: stringField({
    env: 'AX_TRACE_URL_TEMPLATE',
    expected: 'an http(s) URL holding {traceId}, such as https://jaeger.example.com/trace/{traceId}',
    pattern: /^https?:\/\/[^\s]*\{traceId\}[^\s]*$/,
    maxLength: 2_000,
    optional: true,
  }),
  /** `AX_STATS_MAX_AGE_MS` — how long the dashboard's figures are answered from memory (stats-cache.ts); 0 = computed per request. Default 5000. */
  statsMaxAgeMs: intField({ env: 'AX_STATS_MAX_AGE_MS', unit: 'ms', min: 0, max: 3_600_000, default: 5_000 }),
  /** `AX_STATS_ROLLUP_INTERVAL_MS` — how often past days' hourly figures are rolled up (stats-rollup-loop.ts); 0 = never (past days are computed live). Default 60000. */
  statsRollupIntervalMs: intField({ env: 'AX_STATS_ROLLUP_INTERVAL_MS', unit: 'ms', min: 0, max: 86_400_000, default: 60_000 }),
  /** `AX_ENROLLMENT_RECONCILE_INTERVAL_MS` — how often live worker enrollments' RabbitMQ and Redis users are checked and made again if lost (enrollment-logins-reconciler.ts); also on every Redis reconnect; 0 = only then. Default 10000. */
  enrollmentReconcileIntervalMs: intField({ env: 'AX_ENROLLMENT_RECONCILE_INTERVAL_MS', unit: 'ms', min: 0, max: 3_600_000, default: DEFAULT_ENROLLMENT_RECONCILE_INTERVAL_MS }),
  /** `AX_LOG_STREAMS_PER_TOKEN` — log streams (SSE) one token may hold open at once in this process; one more is answered 429 (log-stream-registry.ts). Default 10. */
  logStreamsPerToken: intField({ env: 'AX_LOG_STREAMS_PER_TOKEN', unit: 'count', min: 1, max: 10_000, default: DEFAULT_LOG_STREAMS_PER_TOKEN }),
  /** Console sign-in: `AX_SESSION_*` and `AX_OIDC_*` (oidc-config.ts). */
  ...signInFields,
});
const oidcSettings = oidcSettingsOf(config);
if (!oidcSettings.ok) {
  process.stderr.write(oidcSettings.problems.map((p) => `ax: ${p}\n`).join(''));
  process.exit(CONFIG_ERROR_EXIT_CODE);
}
if (config.consoleDir !== undefined && !consoleBuilt(config.consoleDir)) {
  // Set on purpose, so a wrong folder is a configuration error, not a console answering 503.
  process.stderr.write(`ax: AX_CONSOLE_DIR=${config.consoleDir} is invalid: it holds no console build (no index.html); build one there with \`vite build --outDir\` or unset it to serve the installed console\n`);
  process.exit(CONFIG_ERROR_EXIT_CODE);
}
const oidc = oidcSettings.ok && oidcSettings.value !== null ? createOidcSignIn(oidcSettings.value) : null;
const logger = createLogger({ service: 'admin-api', level: config.logLevel });
/** Set when start-up fails: the process then exits 1 after closing what was opened. */
let startFailed = false;
const shutdown = createShutdown({
  logger,
  graceMs: config.shutdownGraceSeconds * 1000,
  exit: (code) => process.exit(startFailed ? 1 : code),
});
const metrics = createMetrics({ service: 'admin-api' });

async function main(): Promise<void> {
  // A request waits at most 5 s for a row lock (not the server's 50): write-transaction.ts then
  // runs the transaction again, and the caller hears 503 with Retry-After, not a stalled request.
  const pool = createPool(config.mysqlUrl, { sessionVariables: { innodb_lock_wait_timeout: ADMIN_LOCK_WAIT_TIMEOUT_SECONDS } });
  shutdown.register('mysql', () => pool.end());
  const schemaVersion = await assertSchemaSupported(pool);
  logger.info({ schemaVersion, database: pool.redactedUrl }, 'schema supported');
  if (config.adminToken !== undefined) {
    // Never un-revokes it; a start with a new value revokes the previous one (upsertApiToken).
    const bootstrap = await bootstrapAdminToken(pool, config.adminToken);
    if (bootstrap.state === 'revoked') {
      logger.warn('AX_ADMIN_TOKEN is a revoked token and stays revoked: it authenticates nothing (other tokens work); set a new value to rotate it');
    } else {
      logger.info({ tokenId: bootstrap.id, revokedTokenIds: bootstrap.revokedIds }, 'bootstrap admin token from AX_ADMIN_TOKEN is active');
    }
  }
  const redis = createRedis(redisTargetOf(config), { logger, name: 'ax-admin-api' });
  shutdown.register('redis', () => closeRedis(redis));
  const bus = createBus({ url: config.amqpUrl, namespace: config.namespace, logger, name: `ax-admin-api-${process.pid}` });
  shutdown.register('rabbitmq', () => bus.close());
  // The API serves reads without RabbitMQ; /readyz reports it until the first connection.
  bus.start().catch((err: unknown) => logger.error({ err: toError(err) }, 'RabbitMQ did not start'));

  // Worker enrollments' RabbitMQ users are made here (AX_AMQP_MANAGEMENT_URL, default from the
  // first AX_AMQP_URL node). Not reachable at start: the API serves, and enrollments answer 503
  // naming RabbitMQ until it is.
  const firstAmqpUrl = config.amqpUrl[0] ?? DEFAULT_AMQP_URL;
  const busAdmin: BusAdminOptions = { managementUrl: config.amqpManagementUrl ?? defaultManagementUrl(firstAmqpUrl), vhost: vhostOfAmqpUrl(firstAmqpUrl) };
  busAdminReachable(busAdmin)
    .then((ok) => {
      if (!ok) logger.warn({ managementHost: new URL(busAdmin.managementUrl).host }, 'the RabbitMQ management API does not answer with this login (AX_AMQP_MANAGEMENT_URL): worker enrollments cannot be made or revoked until it does');
    })
    .catch((err: unknown) => logger.warn({ err: toError(err) }, 'could not check the RabbitMQ management API'));

  if (oidc !== null) logger.info({ issuer: oidc.settings.issuer.href, claim: oidc.settings.claim, mapped: [...oidc.roleMap.keys()] }, 'console sign-in through OIDC is on');
  const consoleDir = config.consoleDir ?? locateConsoleDist();
  if (consoleBuilt(consoleDir)) logger.info({ consoleDir }, 'serving the console at /');
  else logger.warn({ consoleDir }, 'the console is not built (pnpm build): / answers 503, the API works');

  const admin = createApp({
    pool,
    redis,
    keys: redisKeys(config.namespace),
    bus,
    busAdmin,
    logger,
    metrics,
    apiMetrics: createApiMetrics(metrics),
    executorSecret: config.executorSecret,
    hmacWindowMs: config.hmacWindowMs,
    executorKeyGraceSeconds: config.executorKeyGraceSeconds,
    bodyLimitBytes: config.requestBodyLimitBytes,
    corsOrigins: config.corsOrigins,
    authFailureLimit: { max: 20, windowMs: 60_000 },
    trustedProxies: config.trustedProxies,
    consoleDir,
    traceUrlTemplate: config.traceUrlTemplate ?? null,
    logStreamsPerToken: config.logStreamsPerToken,
    sessions: sessionLifetimesOf(config),
    oidc,
    now: Date.now,
    statsCache: createStatsCache({
      maxAgeMs: config.statsMaxAgeMs,
      now: Date.now,
      onRefreshError: (err) => logger.warn({ err }, 'refreshing the dashboard figures failed; the previous ones are answered meanwhile'),
    }),
  });
  const server: Server = await new Promise((resolve, reject) => {
    const s = admin.app.listen(config.httpPort, (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  server.headersTimeout = 30_000;
  server.requestTimeout = 60_000;
  shutdown.register('http server', () => new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  }));
  shutdown.register('drain', () => admin.setDraining());
  if (config.statsRollupIntervalMs > 0) {
    // Stopped before the pool ends (closers run in reverse order).
    const rollup = startStatsRollupLoop({ pool, logger, now: Date.now, intervalMs: config.statsRollupIntervalMs });
    shutdown.register('stats rollup', () => rollup.stop());
  }
  const sweep = startTaskTextSweep({ pool, logger });
  shutdown.register('task text sweep', () => sweep.stop());
  if (config.executorSecret !== undefined) {
    // Enrollment passwords derive from the master secret: without it there are no enrollments to keep.
    const reconciler = startEnrollmentLoginsReconciler({ pool, redis, keys: redisKeys(config.namespace), logger, busAdmin }, config.executorSecret, config.enrollmentReconcileIntervalMs);
    shutdown.register('enrollment logins reconciler', () => reconciler.stop());
  }
  const address = server.address();
  logger.info({ port: typeof address === 'object' && address !== null ? address.port : config.httpPort }, 'admin-api listening');
}

main().catch((err: unknown) => {
  startFailed = true;
  logger.fatal({ err: toError(err) }, 'admin-api failed to start');
  void shutdown.shutdown('start-up failure');
});
