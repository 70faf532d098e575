/**
 * The broker process: parse env → pool, Redis, bus → refuse an unsupported schema (R22) →
 * start the engine (consumers and loops) → health server (`/healthz`, `/readyz` with MySQL,
 * Redis and RabbitMQ, `/metrics`; AX_HTTP_PORT, default 9102) → stop cleanly on SIGTERM.
 */
import { amqpUserOf, createBus } from '@ax/bus';
import { closeRedis, createLogger, createMetrics, createRedis, createShutdown, loadConfigOrExit, redisTargetOf, startHealthServer, startTracing, toError } from '@ax/kit';
import { assertSchemaSupported, createPool } from '@ax/store';
import { createBroker } from './broker.js';
import { brokerEnvFields, toBrokerConfig } from './env.js';

async function main(): Promise<void> {
  const env = loadConfigOrExit(brokerEnvFields);
  const config = toBrokerConfig(env);
  const logger = createLogger({ service: 'broker', level: env.logLevel, base: { brokerId: config.brokerId } });
  const shutdown = createShutdown({ logger, graceMs: env.shutdownGraceSeconds * 1000 });
  const metrics = createMetrics({ service: 'broker' });
  // Off unless the standard OTEL_* variables ask for traces (#48, docs/observability.md).
  const tracer = await startTracing({ serviceName: 'ax-broker', logger });
  shutdown.register('tracing', () => tracer.shutdown()); // registered early: flushed after the engine stops
  const pool = createPool(env.mysqlUrl, { connectionLimit: 10 });
  shutdown.register('mysql', () => pool.end());
  const redis = createRedis(redisTargetOf(env), { logger, name: 'ax-broker' });
  shutdown.register('redis', () => closeRedis(redis));
  const version = await assertSchemaSupported(pool);
  logger.info({ schemaVersion: version, database: pool.databaseName }, 'schema supported');
  // Its own user on every publish: a requeued reply keeps its worker's validated user (R24).
  const userId = amqpUserOf(env.amqpUrl);
  if (userId === undefined) logger.warn('AX_AMQP_URL names different users per node: requeued replies of enrolled workers lose their sender and are dropped (R24)');
  const bus = createBus({
    url: env.amqpUrl,
    namespace: config.namespace,
    logger,
    name: `ax-broker-${config.brokerId}`,
    maxRequeues: 10_000,
    ...(userId === undefined ? {} : { userId }),
  });
  shutdown.register('bus', () => bus.close());

  const health = await startHealthServer({
    port: env.httpPort,
    registry: metrics.registry,
    logger,
    readiness: [
      { name: 'mysql', check: async () => void (await pool.query('SELECT 1')) },
      { name: 'redis', check: async () => void (await redis.ping()) },
      {
        name: 'rabbitmq',
        check: async () => {
          if (!bus.connected) throw new Error('not connected');
        },
      },
    ],
  });
  shutdown.register('health server', () => health.close());

  const broker = createBroker({ config, pool, redis, bus, logger, metrics, tracer });
  await broker.start();
  shutdown.register('engine', () => broker.stop());
  shutdown.register('drain', () => health.setDraining());
  logger.info({ port: health.port, namespace: config.namespace }, 'broker ready');
}

main().catch((error: unknown) => {
  process.stderr.write(`ax broker: ${toError(error).message}\n`);
  process.exit(1);
});
