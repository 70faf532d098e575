/**
 * The scheduler's environment: the shared ax variables it uses (DESIGN §8) plus its own
 * timings, parsed once into a {@link SchedulerEnv}; {@link toSchedulerConfig} turns it into the
 * engine's configuration.
 */
import os from 'node:os';
import { axConfigFields, httpPortField, intField, pickFields, type ConfigOf } from '@ax/kit';
import { DEFAULT_SCHEDULER_CONFIG, resolveSchedulerConfig, type SchedulerConfig } from './config.js';

const ms = (env: string, defaultMs: number) => intField({ env, unit: 'ms', default: defaultMs });

/** Every variable the scheduler reads. */
export const schedulerEnvFields = {
  ...pickFields(axConfigFields, [
    'mysqlUrl',
    'redisUrl',
    'redisSentinels',
    'redisSentinelName',
    'redisSentinelPassword',
    'namespace',
    'logLevel',
    'shutdownGraceSeconds',
    'fireLockTtlMs',
    'misfireThresholdMs',
    'schedulerSkewLimitMs',
    'retentionDays',
    'dependencyTimeoutSeconds',
  ]),
  httpPort: httpPortField('scheduler'),
  /** `AX_SCHEDULER_HORIZON_MS` — how far ahead the time wheel holds fires. Default 60000. */
  horizonMs: ms('AX_SCHEDULER_HORIZON_MS', DEFAULT_SCHEDULER_CONFIG.horizonMs),
  /** `AX_SCHEDULER_PRECREATE_MS` — slots of plain tasks are inserted this long before they are due. Default 5000. */
  precreateMs: intField({ env: 'AX_SCHEDULER_PRECREATE_MS', unit: 'ms', default: DEFAULT_SCHEDULER_CONFIG.precreateMs, min: 0 }),
  /** `AX_SCHEDULER_TICK_MS` — period of the fire loop. Default 100. */
  tickIntervalMs: ms('AX_SCHEDULER_TICK_MS', DEFAULT_SCHEDULER_CONFIG.tickIntervalMs),
  /** `AX_SCHEDULER_REFILL_MS` — period of refill and re-scan. Default 1000. */
  refillIntervalMs: ms('AX_SCHEDULER_REFILL_MS', DEFAULT_SCHEDULER_CONFIG.refillIntervalMs),
  /** `AX_SCHEDULER_RESYNC_MS` — period of the full definition re-read. Default 30000. */
  resyncIntervalMs: ms('AX_SCHEDULER_RESYNC_MS', DEFAULT_SCHEDULER_CONFIG.resyncIntervalMs),
  /** `AX_SCHEDULER_DAG_SCAN_MS` — period of the DAG scan. Default 5000. */
  dagScanIntervalMs: ms('AX_SCHEDULER_DAG_SCAN_MS', DEFAULT_SCHEDULER_CONFIG.dagScanIntervalMs),
  /** `AX_SCHEDULER_SKEW_CHECK_MS` — period of the clock-skew check. Default 60000. */
  skewCheckIntervalMs: ms('AX_SCHEDULER_SKEW_CHECK_MS', DEFAULT_SCHEDULER_CONFIG.skewCheckIntervalMs),
  /**
   * `AX_SCHEDULER_HEAP_GROWTH_PERCENT` — how far past its live size V8 lets the heap grow before
   * a full collection, in percent (heap-growth.ts); 0 = V8's own choice (up to 300). Default 100.
   */
  heapGrowthPercent: intField({ env: 'AX_SCHEDULER_HEAP_GROWTH_PERCENT', unit: 'percent', default: 100, min: 0, max: 1_000 }),
  /** `AX_SCHEDULER_RETENTION_MS` — period of the retention purge. Default 3600000. */
  retentionIntervalMs: ms('AX_SCHEDULER_RETENTION_MS', DEFAULT_SCHEDULER_CONFIG.retentionIntervalMs),
  /** `AX_SCHEDULER_RETENTION_PAUSE_PERCENT` — pause after each full purge batch, in percent of the batch's time. Default 600. */
  retentionPausePercent: intField({ env: 'AX_SCHEDULER_RETENTION_PAUSE_PERCENT', unit: 'percent', default: DEFAULT_SCHEDULER_CONFIG.retentionPausePercent, min: 0, max: 10_000 }),
  /** `AX_SCHEDULER_RETENTION_BATCH` — instances purged per batch (one transaction). Default 100. */
  retentionBatchSize: intField({ env: 'AX_SCHEDULER_RETENTION_BATCH', unit: 'count', default: DEFAULT_SCHEDULER_CONFIG.retentionBatchSize, min: 1, max: 10_000 }),
} as const;

/** The parsed environment. */
export type SchedulerEnv = ConfigOf<typeof schedulerEnvFields>;

/** The engine configuration of a parsed environment. */
export function toSchedulerConfig(env: SchedulerEnv, schedulerId = `${os.hostname()}-${process.pid}`): SchedulerConfig {
  return resolveSchedulerConfig(
    { namespace: env.namespace, schedulerId },
    {
      fireLockTtlMs: env.fireLockTtlMs,
      misfireThresholdMs: env.misfireThresholdMs,
      skewLimitMs: env.schedulerSkewLimitMs,
      retentionDays: env.retentionDays,
      dependencyTimeoutSeconds: env.dependencyTimeoutSeconds,
      horizonMs: env.horizonMs,
      precreateMs: env.precreateMs,
      tickIntervalMs: env.tickIntervalMs,
      refillIntervalMs: env.refillIntervalMs,
      resyncIntervalMs: env.resyncIntervalMs,
      dagScanIntervalMs: env.dagScanIntervalMs,
      skewCheckIntervalMs: env.skewCheckIntervalMs,
      retentionIntervalMs: env.retentionIntervalMs,
      retentionPausePercent: env.retentionPausePercent,
      retentionBatchSize: env.retentionBatchSize,
    },
  );
}
