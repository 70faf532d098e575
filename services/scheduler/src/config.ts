/**
 * The resolved configuration of the scheduler engine. `env.ts` builds it from the environment;
 * tests build it with {@link resolveSchedulerConfig} and a few overrides. Nothing in here is a
 * test switch: every field is an operating parameter with a production default.
 */

/** Operating parameters of a scheduler engine. */
export interface SchedulerConfig {
  /** `AX_NAMESPACE`: prefix of Redis keys and channels. Default `ax`. */
  readonly namespace: string;
  /** Identity in logs, alerts and Redis (`<host>-<pid>` by default). */
  readonly schedulerId: string;
  /** `AX_FIRE_LOCK_TTL_MS`: TTL of a slot's Redis fire lock; also the age after which a missing slot is re-inserted (R2). Default 30000. */
  readonly fireLockTtlMs: number;
  /** `AX_MISFIRE_THRESHOLD_MS`: lateness after which a slot counts as missed. Default 5000. */
  readonly misfireThresholdMs: number;
  /** `AX_SCHEDULER_SKEW_LIMIT_MS`: offset from MySQL `NOW(3)` above which firing stops. Default 2000. */
  readonly skewLimitMs: number;
  /** `AX_SCHEDULER_HORIZON_MS`: how far ahead the time wheel holds fires. Default 60000. */
  readonly horizonMs: number;
  /**
   * `AX_SCHEDULER_PRECREATE_MS`: how long before its time a slot of a plain task (no parents,
   * not `serial`) is inserted, `PENDING` with `due_at` = its time, so a burst ("everything at
   * 02:00") is committed before it is due instead of after (XXL-JOB pre-reads 5 s the same
   * way). Edits, disables and deletes withdraw such not-yet-due rows in their own transaction
   * (R3). 0 = insert at the slot time. Default 5000.
   */
  readonly precreateMs: number;
  /** Most fires per task put on the wheel by one refill. Default 600. */
  readonly maxQueuedPerTask: number;
  /** `AX_SCHEDULER_TICK_MS`: period of the fire loop. Default 100. */
  readonly tickIntervalMs: number;
  /** `AX_SCHEDULER_REFILL_MS`: period of refill + re-scan (R2). Default 1000. */
  readonly refillIntervalMs: number;
  /** `AX_SCHEDULER_RESYNC_MS`: period of the full re-read of definitions (pub/sub fallback) and of reconcile's read of every task row (refill.ts). Default 30000. */
  readonly resyncIntervalMs: number;
  /** `AX_SCHEDULER_DAG_SCAN_MS`: period of the DAG readiness and dependency-timeout scan (event fallback). Default 5000. */
  readonly dagScanIntervalMs: number;
  /** `AX_SCHEDULER_SKEW_CHECK_MS`: period of the clock-skew check. Default 60000. */
  readonly skewCheckIntervalMs: number;
  /** `AX_RETENTION_DAYS`: days of final history kept. Default 30. */
  readonly retentionDays: number;
  /** `AX_SCHEDULER_RETENTION_MS`: period of the purge. Default 3600000. */
  readonly retentionIntervalMs: number;
  /**
   * `AX_SCHEDULER_RETENTION_BATCH`: instances purged per batch (one transaction). Default 100:
   * dispatch waits for MariaDB while a batch's transaction runs, so shorter ones bound each
   * wait. Beside 1,000 jobs/s batches of 500 raised start lag p99 ×1.06–1.33, batches of 100
   * ×0.96–1.08, purging about 10 % fewer a second (bench ax-purge, docs/benchmarks.md).
   */
  readonly retentionBatchSize: number;
  /**
   * `AX_SCHEDULER_RETENTION_PAUSE_PERCENT`: after each full batch the purge pauses this share of
   * the batch's own time, so dispatch keeps most of MySQL while a backlog of expired history is
   * purged. Default 600 (a seventh of the time purging; 300 measured ×1.13–1.39 on start lag p99
   * beside 1,000 jobs/s, 600 ×0.99–1.16: bench ax-purge, docs/benchmarks.md).
   */
  readonly retentionPausePercent: number;
  /** Most missed slots counted for one misfire decision (beyond it the counters stop at the cap). Default 100000. */
  readonly maxMisfireSlots: number;
  /** `AX_DEPENDENCY_TIMEOUT_S`: the wait of a task that sets no `dependencyTimeoutSeconds` (and of a deleted task's instances). Default 86400. */
  readonly dependencyTimeoutSeconds: number;
}

/** Defaults of everything but the identity. */
export const DEFAULT_SCHEDULER_CONFIG: Omit<SchedulerConfig, 'schedulerId' | 'namespace'> = Object.freeze({
  fireLockTtlMs: 30_000,
  misfireThresholdMs: 5_000,
  skewLimitMs: 2_000,
  horizonMs: 60_000,
  precreateMs: 5_000,
  maxQueuedPerTask: 600,
  tickIntervalMs: 100,
  refillIntervalMs: 1_000,
  resyncIntervalMs: 30_000,
  dagScanIntervalMs: 5_000,
  skewCheckIntervalMs: 60_000,
  retentionDays: 30,
  retentionIntervalMs: 3_600_000,
  retentionBatchSize: 100,
  retentionPausePercent: 600,
  maxMisfireSlots: 100_000,
  dependencyTimeoutSeconds: 86_400,
});

/** A full configuration from the identity and any overrides. */
export function resolveSchedulerConfig(
  base: { namespace: string; schedulerId: string },
  overrides: Partial<SchedulerConfig> = {},
): SchedulerConfig {
  return { ...DEFAULT_SCHEDULER_CONFIG, ...base, ...overrides };
}
