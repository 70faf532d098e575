/**
 * The worker process: parse env → (enrolled: its enrollment from admin-api, enrollment/) →
 * outbox, Redis, RabbitMQ, executors (plugins loaded from AX_PLUGIN_DIR) → health server
 * (`/healthz`, `/readyz` with Redis and RabbitMQ, `/metrics`) → recover from a previous run
 * (R13), register, consume → on SIGTERM stop taking work, let jobs finish within
 * AX_SHUTDOWN_GRACE_S, kill and report the rest, flush, deregister, exit 0. An enrolled worker
 * whose enrollment is revoked stops at once and exits 3.
 */
import { createRequire } from 'node:module';
import { amqpUserOf, createBus } from '@ax/bus';
import { parseReservedSlots } from '@ax/core';
import { closeRedis, createLogger, createMetrics, createRedis, createShutdown, loadConfigOrExit, redisKeys, redisTargetOf, startHealthServer, startTracing, toError } from '@ax/kit';
import { createAlertWebhook } from './alert-webhook.js';
import { describeScope } from './enrollment/bootstrap-answer.js';
import { enroll, type Enrolled } from './enrollment/enroll.js';
import { fetchEnrollment } from './enrollment/enrollment-client.js';
import { EnrollmentRefresh } from './enrollment/enrollment-refresh.js';
import { jobDirOf, outboxFile, workerEnvFields } from './env.js';
import { EnrollmentKeys } from './executors/executor-keys.js';
import { hostAllowList } from './executors/host-allow.js';
import { createHttpExecutor } from './executors/http.js';
import { createJobSandbox, identitySwitchProblem, lockSecretsDir } from './executors/job-sandbox.js';
import { createPythonExecutor } from './executors/python.js';
import { createShellExecutor } from './executors/shell.js';
import { createSqlExecutor } from './executors/sql.js';
import { installFatalHandlers } from './fatal.js';
import { Outbox } from './outbox.js';
import { createPluginExecutor } from './plugins/plugin-executor.js';
import { loadPlugins } from './plugins/plugin-registry.js';
import { Worker } from './worker.js';
import { createWorkerMetrics } from './worker-metrics.js';

/** How long results may take to go out after an unexpected error, before the exit. */
const FATAL_FLUSH_MS = 5_000;
/** Exit code of a worker whose enrollment was revoked while it ran. */
const REVOKED_EXIT_CODE = 3;

/** A start-up that must not go on: one line on stderr, exit code 2, nothing connected yet. */
function refuseStart(line: string): never {
  process.stderr.write(`ax: ${line}\n`);
  process.exit(2);
}

const version = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

async function main(): Promise<void> {
  const parsedEnv = loadConfigOrExit(workerEnvFields);
  // R25: jobs run under their team's uid; a worker that could not switch to it does not start.
  if (parsedEnv.jobIsolation === 'uid') {
    const problem = identitySwitchProblem();
    const ownUid = process.geteuid?.();
    const shared = [...parsedEnv.jobUids].find(([, id]) => id.uid === ownUid)?.[0];
    if (problem !== undefined || shared !== undefined) {
      const why = shared !== undefined ? `team ${shared} is given the worker's own uid ${ownUid}` : `${problem}: run it as root or grant those capabilities`;
      process.stderr.write(`ax: AX_JOB_UIDS cannot be applied: ${why} (docs/teams.md "The worker machine"; AX_JOB_ISOLATION=off for development only)\n`);
      process.exit(2);
    }
  }
  // An enrolled worker: its id, teams, logins and keys come from its enrollment (R24, R25).
  let enrolled: Enrolled | undefined;
  if (parsedEnv.credential !== undefined) {
    if (parsedEnv.adminUrl === undefined) refuseStart('AX_ADMIN_URL is not set: required with AX_WORKER_CREDENTIAL_FILE');
    const result = await enroll({
      credential: parsedEnv.credential,
      adminUrl: parsedEnv.adminUrl,
      localId: parsedEnv.workerId,
      requestedTeams: parsedEnv.teams,
      tags: parsedEnv.workerTags,
      amqpUrls: parsedEnv.amqpUrl,
      redisUrl: parsedEnv.redisUrl,
      logger: createLogger({ service: 'worker', level: parsedEnv.logLevel, base: { enrollmentId: parsedEnv.credential.enrollmentId } }),
    });
    if (!result.ok) refuseStart(result.line);
    enrolled = result.enrolled;
  }
  const env = enrolled === undefined ? parsedEnv : { ...parsedEnv, workerId: enrolled.workerId, amqpUrl: enrolled.amqpUrls, redisUrl: enrolled.redisUrl };
  const logger = createLogger({ service: 'worker', level: env.logLevel, base: { workerId: env.workerId } });
  // #23: an error nobody handled is one log line, a bounded flush of results, exit 1 (restart).
  const held: { worker?: Worker } = {};
  installFatalHandlers({
    logger,
    executionIds: () => held.worker?.leaseExecutionIds() ?? [],
    flush: (timeoutMs) => held.worker?.flushResults(timeoutMs) ?? Promise.resolve(true),
    flushTimeoutMs: FATAL_FLUSH_MS,
  });
  // Jobs get AX_SHUTDOWN_GRACE_S to finish; killing, flushing and deregistering need a little more.
  let revoked = false;
  const shutdown = createShutdown({ logger, graceMs: (env.shutdownGraceSeconds + 30) * 1000, exit: (code) => process.exit(revoked ? REVOKED_EXIT_CODE : code) });
  const metrics = createMetrics({ service: 'worker', labels: { worker_id: env.workerId } });
  const workerMetrics = createWorkerMetrics(metrics);
  // Off unless the standard OTEL_* variables ask for traces (#48, docs/observability.md).
  const tracer = await startTracing({ serviceName: 'ax-worker', logger });
  shutdown.register('tracing', () => tracer.shutdown()); // registered early: flushed after the jobs end

  const outbox = new Outbox({ file: outboxFile(env) });
  shutdown.register('outbox', () => outbox.close());
  const redis = createRedis(redisTargetOf(env), { logger, name: `ax-worker-${env.workerId}` });
  shutdown.register('redis', () => closeRedis(redis));
  // Every publish carries the login as user_id (R24); an enrollment's login cannot bind or declare the shared topology.
  const busUser = amqpUserOf(env.amqpUrl);
  if (busUser === undefined) logger.warn('the nodes of AX_AMQP_URL name different users: publishes carry no user_id');
  const bus = createBus({
    url: env.amqpUrl,
    namespace: env.namespace,
    logger,
    name: `ax-worker-${env.workerId}`,
    ...(busUser !== undefined ? { userId: busUser } : {}),
    login: enrolled === undefined ? 'service' : 'enrollment',
  });
  shutdown.register('rabbitmq', () => bus.close());

  const health = await startHealthServer({
    port: env.httpPort,
    registry: metrics.registry,
    logger,
    readiness: [
      { name: 'redis', check: async () => void (await redis.ping()) },
      {
        name: 'rabbitmq',
        check: () => (bus.connected ? Promise.resolve() : Promise.reject(new Error('not connected'))),
      },
    ],
  });
  shutdown.register('health server', () => health.close());

  if (env.executorSecret === undefined && enrolled === undefined) logger.warn('AX_EXECUTOR_SECRET is not set: http jobs will fail (they cannot be signed)');
  const refreshing: { current?: EnrollmentRefresh } = {};
  const keys = enrolled === undefined ? undefined : new EnrollmentKeys(enrolled.enrollmentId, enrolled.answer.keys, () => refreshing.current?.refreshNow() ?? Promise.resolve());
  if (enrolled !== undefined && env.jobIsolation === 'uid' && !enrolled.teams.all) {
    const without = enrolled.teams.teams.filter((team) => !env.jobUids.has(team));
    if (without.length > 0) logger.warn({ teams: without }, 'teams of the enrollment without a uid in AX_JOB_UIDS: their shell and python jobs fail without running');
  }
  const plugins = await loadPlugins(env.pluginDir, logger);
  const outputTailBytes = Math.min(env.outputTailBytes, 65_536);
  // secretRefs are read from <AX_SECRETS_DIR>/<team>/<NAME> only (executors/secrets.ts).
  if (env.secretsDir === undefined) logger.info('AX_SECRETS_DIR is not set: tasks using {"secretRef":…} will fail with SECRET_MISSING');
  else {
    // R25: the secrets folder and every team folder 0700, the worker's: no job lists or enters one.
    for (const { folder, problem } of await lockSecretsDir(env.secretsDir)) {
      logger.warn({ folder, problem }, 'secrets folder could not be made 0700: its files must be readable by the worker only (docs/teams.md)');
    }
  }
  const sandbox = await createJobSandbox({ root: jobDirOf(env), identities: env.jobIsolation === 'uid' ? env.jobUids : undefined });
  if (!sandbox.isolated) logger.warn('AX_JOB_ISOLATION=off: jobs run as the worker and can read its credentials and every team\'s secrets (development only)');
  const http = createHttpExecutor({ workerId: env.workerId, secret: env.executorSecret, ...(keys !== undefined ? { keys } : {}), allow: hostAllowList(env.httpExecutorAllow), outputTailBytes, secretsDir: env.secretsDir, tracer });
  shutdown.register('http executor', () => http.close());
  const reserve = env.reservedSlots === undefined ? undefined : parseReservedSlots(env.reservedSlots, env.workerSlots);
  if (reserve !== undefined && !reserve.ok) {
    logger.fatal(`AX_WORKER_RESERVED_SLOTS: ${reserve.problem} (AX_WORKER_SLOTS is ${env.workerSlots})`);
    process.exit(2);
  }
  const worker = new Worker({
    settings: {
      workerId: env.workerId,
      tags: env.workerTags,
      teams: env.teams,
      slots: env.workerSlots,
      ...(reserve?.ok === true ? { reservedSlots: reserve.value } : {}),
      heartbeatIntervalMs: env.heartbeatIntervalMs,
      leaseTtlMs: env.leaseTtlMs,
      skewLimitMs: env.workerSkewLimitMs,
      clockCheckIntervalMs: env.clockCheckIntervalMs,
      shutdownGraceMs: env.shutdownGraceSeconds * 1000,
      prefetch: env.prefetch,
      jobPrefetch: env.jobPrefetch,
      version,
      logMaxBytes: env.logMaxBytes,
      logFlushMs: env.logFlushMs,
      logOutboxMaxBytes: env.logOutboxMaxBytes,
      logOutputInResult: env.logOutputInResult,
    },
    bus,
    redis,
    keys: redisKeys(env.namespace),
    outbox,
    executors: {
      shell: createShellExecutor({ outputTailBytes, killGraceMs: env.killGraceMs, secretsDir: env.secretsDir, sandbox }),
      http,
      plugin: createPluginExecutor({ plugins, outputTailBytes, killGraceMs: env.killGraceMs }),
      python: createPythonExecutor({ outputTailBytes, killGraceMs: env.killGraceMs, secretsDir: env.secretsDir, sandbox }),
      sql: createSqlExecutor({ outputTailBytes, killGraceMs: env.killGraceMs, secretsDir: env.secretsDir }),
    },
    logger,
    metrics: workerMetrics,
    tracer,
    sendAlert: createAlertWebhook({ url: env.alertWebhookUrl, format: env.alertWebhookFormat, logger }),
    ...(enrolled !== undefined ? { teamScope: enrolled.teams } : {}),
  });

  held.worker = worker;
  await bus.start();
  await worker.start();
  shutdown.register('worker', () => worker.stop());
  if (enrolled !== undefined && parsedEnv.credential !== undefined && parsedEnv.adminUrl !== undefined) {
    const { credential } = parsedEnv.credential;
    const adminUrl = parsedEnv.adminUrl;
    const enrollmentId = enrolled.enrollmentId;
    const refresh = new EnrollmentRefresh({
      enrollmentId,
      fetch: () => fetchEnrollment({ adminUrl, credential }),
      intervalMs: env.workerRefreshMs,
      requestedTeams: env.teams,
      logger: logger.child({ component: 'enrollment' }),
      apply: (answer, scope) => {
        keys?.replace(answer.keys);
        worker.setTeams(scope);
      },
      onRevoked: () => {
        revoked = true;
        const line = `enrollment ${enrollmentId} was revoked (admin-api no longer accepts its credential): taking no more work, killing running jobs, exiting ${REVOKED_EXIT_CODE}`;
        logger.error(line);
        void worker.abandon('enrollment revoked').finally(() => void shutdown.shutdown('enrollment revoked'));
      },
    });
    refreshing.current = refresh;
    refresh.start();
    // Revocation closes the connections first: ask at once instead of at the next interval.
    bus.on('disconnected', () => void refresh.refreshNow());
    shutdown.register('enrollment refresh', () => refresh.stop());
  }
  shutdown.register('drain', () => health.setDraining());
  logger.info({ port: health.port, namespace: env.namespace, enrollmentId: enrolled?.enrollmentId, teams: enrolled === undefined ? undefined : describeScope(enrolled.teams), outbox: outboxFile(env), jobDir: jobDirOf(env), jobIsolation: env.jobIsolation, plugins: [...plugins.plugins.keys()] }, 'worker started');
}

main().catch((error: unknown) => {
  // Before the logger exists (or when start-up fails): one line on stderr, exit 1.
  process.stderr.write(`ax worker: start-up failed: ${toError(error).message}\n`);
  process.exit(1);
});
