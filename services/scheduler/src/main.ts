/**
 * The scheduler process: parse env → set the heap's growing factor (heap-growth.ts) → build
 * pool and Redis → refuse an unsupported schema (R22) → start the engine's loops → health
 * server (`/healthz`, `/readyz` with MySQL and Redis, `/metrics`) → stop cleanly on SIGTERM.
 */
import {
  closeRedis,
  createLogger,
  createMetrics,
  createRedis,
  createShutdown,
  loadConfigOrExit,
  redisTargetOf,
  startHealthServer,
  startTracing,
  systemClock,
  toError,
} from '@ax/kit';
import { assertSchemaSupported, createPool } from '@ax/store';
import { createSchedulerEngine } from './engine.js';
import { schedulerEnvFields, toSchedulerConfig } from './env.js';
import { setHeapGrowingPercent } from './heap-growth.js';
import { createSchedulerMetrics } from './metrics.js';

async function main(): Promise<void> {
  const env = loadConfigOrExit(schedulerEnvFields);
  setHeapGrowingPercent(env.heapGrowthPercent); // before the task cache fills the heap
  const config = toSchedulerConfig(env);
  const logger = createLogger({ service: 'scheduler', level: env.logLevel, base: { schedulerId: config.schedulerId } });
  const shutdown = createShutdown({ logger, graceMs: env.shutdownGraceSeconds * 1000 });
  const metrics = createSchedulerMetrics(createMetrics({ service: 'scheduler' }));
  // Off unless the standard OTEL_* variables ask for traces (#48, docs/observability.md).
  const tracer = await startTracing({ serviceName: 'ax-scheduler', logger });
  shutdown.register('tracing', () => tracer.shutdown()); // registered early: flushed after the engine stops
  const pool = createPool(env.mysqlUrl, { connectionLimit: 10 });
  shutdown.register('mysql', () => pool.end());
  const redis = createRedis(redisTargetOf(env), { logger, name: 'ax-scheduler' });
  shutdown.register('redis', () => closeRedis(redis));
  const version = await assertSchemaSupported(pool);
  logger.info({ schemaVersion: version, database: pool.databaseName }, 'schema supported');

  const health = await startHealthServer({
    port: env.httpPort,
    registry: metrics.metrics.registry,
    logger,
    readiness: [
      { name: 'mysql', check: async () => void (await pool.query('SELECT 1')) },
      { name: 'redis', check: async () => void (await redis.ping()) },
    ],
  });
  shutdown.register('health server', () => health.close());

  const engine = createSchedulerEngine({ pool, redis, clock: systemClock, config, logger, metrics, tracer });
  await engine.start();
  shutdown.register('engine', () => engine.stop());
  shutdown.register('drain', () => health.setDraining());
  logger.info({ port: health.port, namespace: config.namespace }, 'scheduler started');
}

main().catch((error: unknown) => {
  // Before the shutdown coordinator exists there is nothing to close: report and exit 1.
  process.stderr.write(`ax scheduler: ${toError(error).message}\n`);
  process.exit(1);
});
