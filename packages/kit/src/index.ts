// The public API of @ax/kit: the infrastructure every service uses (config, logs, metrics,
// health, shutdown, loops, errors, clock, Redis client and keys).
//
// A service's main.ts, in outline (closers run in reverse registration order):
//
//   const config = loadConfigOrExit(axServiceFields('broker'));          // exit 2 on a bad variable
//   const logger = createLogger({ service: 'broker', level: config.logLevel });
//   const shutdown = createShutdown({ logger, graceMs: config.shutdownGraceSeconds * 1000 });
//   const metrics = createMetrics({ service: 'broker' });
//   const redis = createRedis(config.redisUrl, { logger, name: 'ax-broker' });
//   const health = await startHealthServer({ port: config.httpPort, registry: metrics.registry, logger,
//     readiness: [{ name: 'redis', check: async () => void (await redis.ping()) }] });
//   shutdown.register('health server', () => health.close());   // first registered: closed last
//   shutdown.register('redis', () => closeRedis(redis));
//   const loop = startBackgroundLoop({ name: 'dispatch', intervalMs: 500, logger, run: dispatchOnce });
//   shutdown.register('dispatch loop', () => loop.stop());
//   shutdown.register('drain', () => health.setDraining());     // last registered: runs first
export * from './ax-config.js';
export * from './config.js';
export {
  booleanField,
  enumField,
  intField,
  listField,
  pathField,
  positiveNumberField,
  stringField,
  UNSET_PARAM,
  urlField,
} from './env-fields.js';
export * from './errors.js';
export * from './health.js';
export * from './logger.js';
export * from './loop.js';
export * from './metrics.js';
export {
  hasPlaceholderMarker,
  PLACEHOLDER_MARKER,
  PRODUCTION_SECRET_MIN_DISTINCT_CHARS,
  PRODUCTION_SECRET_MIN_LENGTH,
  productionSecretProblem,
  type ProductionSecretRule,
} from './production-secrets.js';
export * from './redis.js';
export * from './shutdown.js';
export * from './system-clock.js';
export * from './tracing/traceparent.js';
export { NOOP_TRACER, startTracing, tracingWanted, type AxSpan, type AxTracer, type SpanAttributes, type SpanKindName, type StartSpanOptions, type StartTracingOptions } from './tracing/tracer.js';
