/**
 * The resolved configuration of a broker. `env.ts` builds it from the environment; tests build
 * it with {@link resolveBrokerConfig} and a few overrides. Every field is an operating
 * parameter with a production default (DESIGN §8), none is a test switch.
 */
import { DEFAULT_BACKLOG_ALERT_INSTANCES } from '@ax/kit';

/** Body format of alert webhooks (`AX_ALERT_WEBHOOK_FORMAT`). */
export type AlertWebhookFormat = 'generic' | 'dingtalk' | 'wecom' | 'slack';

/** Operating parameters of a broker. */
export interface BrokerConfig {
  /** `AX_NAMESPACE`. Default `ax`. */
  readonly namespace: string;
  /** Identity in logs and the AMQP connection name (`<host>-<pid>`). */
  readonly brokerId: string;
  /** `AX_ACK_TIMEOUT_MS`: how long a dispatch waits for the worker's ACK after the confirm. Default 5000. */
  readonly ackTimeoutMs: number;
  /** Grace after the ACK deadline before a re-route (R8: 3 s). Default 3000. */
  readonly ackGraceMs: number;
  /** Extra ACK deadline allowance while a publish is not yet confirmed (R8). Default 30000. */
  readonly publishAllowanceMs: number;
  /** `AX_MAX_REROUTES`: re-routes per attempt after ACK timeouts. Default 3. */
  readonly maxReroutes: number;
  /** `AX_LEASE_TTL_MS`: lease period (R14). Default 15000. */
  readonly leaseTtlMs: number;
  /**
   * `AX_WORKER_SKEW_LIMIT_MS`: how far a worker's clock may be off before it refuses all work
   * (the same setting the workers read). A registry entry's time is trusted only this far when
   * deciding that a silent worker cannot hold a dispatch (gone-dispatches.ts). Default 2000.
   */
  readonly workerSkewLimitMs: number;
  /** `AX_LOST_WORKER_GRACE_MS`: grace after a lease before LOST_WORKER. Default 10000. */
  readonly lostWorkerGraceMs: number;
  /**
   * `AX_WORKER_SILENCE_MS`: a worker whose control queue has no consumer (two readings in a row)
   * and whose registry entry has not changed for this long is lost at once, without waiting for its lease
   * (worker-presence.ts). Default `AX_HEARTBEAT_INTERVAL_MS` + 2500 (7500).
   */
  readonly workerSilenceMs: number;
  /** `AX_MAX_LOST_REDISPATCHES`: automatic re-dispatches after lost workers. Default 3. */
  readonly maxLostRedispatches: number;
  /** `AX_NO_WORKER_ALERT_MS`: wait without an eligible worker before an alert (R11). Default 60000. */
  readonly noWorkerAlertMs: number;
  /** `AX_BACKOFF_CAP_MS`: longest retry delay. Default 3600000. */
  readonly backoffCapMs: number;
  /** `AX_DISPATCH_RATE`: dispatches per second, all brokers together; undefined = unlimited. */
  readonly dispatchRatePerSecond: number | undefined;
  /** `AX_DISPATCH_BATCH`: instances claimed per dispatch transaction. Default 200. */
  readonly dispatchBatchSize: number;
  /** `AX_DISPATCH_POLL_MS`: dispatch polling period (pub/sub wakes it earlier). Default 500. */
  readonly dispatchPollMs: number;
  /** `AX_TIMERS_POLL_MS`: period of the timed-transition scans. Default 1000. */
  readonly timersPollMs: number;
  /** Registry cache age, ms (≤ 1 s). Default 1000. */
  readonly registryCacheMs: number;
  /** Most instances per dispatch message (R10). Default 100. */
  readonly maxItemsPerDispatch: number;
  /** `AX_ALERT_WEBHOOK_URL`; undefined = alerts are only logged. */
  readonly alertWebhookUrl: string | undefined;
  /** `AX_ALERT_WEBHOOK_FORMAT`. Default `generic`. */
  readonly alertWebhookFormat: AlertWebhookFormat;
  /** Period of the alert delivery loop. Default 2000. */
  readonly alertPollMs: number;
  /** Timeout of one webhook POST. Default 5000. */
  readonly alertTimeoutMs: number;
  /** Period of the worker queue depth metric (`ax_worker_queue_depth`). Default 10000. */
  readonly backlogPollMs: number;
  /**
   * `AX_BACKLOG_SCAN_MS`: period of the backlog scan (backlog-scan.ts): why each due instance
   * waits, the backlog metrics and the BACKLOG alert. Default 5000.
   */
  readonly backlogScanMs: number;
  /** Due rows the backlog scan reads at most per (state, team) and pass; beyond it counts are floors. Default 2000. */
  readonly backlogScanLimit: number;
  /** `AX_BACKLOG_ALERT_INSTANCES` (@ax/kit): a team's BACKLOG alert above this many held instances. Default 1000. */
  readonly backlogAlertInstances: number;
  /**
   * `AX_BACKLOG_DEFER_BELOW_PRIORITY`: while a worker pool's backlog holds, its instances of a
   * lower priority are held PENDING (backlog-deferral.ts). 0 = off (nothing is below 0). Default 0.
   */
  readonly backlogDeferBelowPriority: number;
  /**
   * `AX_BACKLOG_DEFER_HOLD_PERCENT`: a pool's backlog holds once its instances at or above
   * `backlogDeferBelowPriority` (due PENDING, DISPATCHED, RUNNING) exceed this share of its
   * slots, and clears at or below half of it. Default 100.
   */
  readonly backlogDeferHoldPercent: number;
  /** Period of the backlog deferral pass (only runs with `backlogDeferBelowPriority` > 0). Default 2000. */
  readonly backlogDeferPollMs: number;
  /** Prefetch of the events consumer. Default 50. */
  readonly eventsPrefetch: number;
  /**
   * `AX_RECALL_HELD_AFTER_MS`: a dispatch a worker has held (prefetched, not started) this long
   * is recalled when another worker has a free slot (R9 prefetch, recall-plan.ts). Default 2000.
   */
  readonly recallHeldAfterMs: number;
  /**
   * `AX_DB_TRANSACTION_TIMEOUT_MS`: most time one broker transaction may take before its
   * connection is dropped and the work retried (a query that never answers must not hold the
   * events queue, which one broker consumes at a time). Default 30000.
   */
  readonly transactionTimeoutMs: number;
}

/** Defaults of everything but the identity. */
export const DEFAULT_BROKER_CONFIG: Omit<BrokerConfig, 'brokerId' | 'namespace'> = Object.freeze({
  ackTimeoutMs: 5_000,
  ackGraceMs: 3_000,
  publishAllowanceMs: 30_000,
  maxReroutes: 3,
  leaseTtlMs: 15_000,
  workerSkewLimitMs: 2_000,
  lostWorkerGraceMs: 10_000,
  workerSilenceMs: 7_500,
  maxLostRedispatches: 3,
  noWorkerAlertMs: 60_000,
  backoffCapMs: 3_600_000,
  dispatchRatePerSecond: undefined,
  dispatchBatchSize: 200,
  dispatchPollMs: 500,
  timersPollMs: 1_000,
  registryCacheMs: 1_000,
  maxItemsPerDispatch: 100,
  alertWebhookUrl: undefined,
  alertWebhookFormat: 'generic',
  alertPollMs: 2_000,
  alertTimeoutMs: 5_000,
  backlogPollMs: 10_000,
  backlogScanMs: 5_000,
  backlogScanLimit: 2_000,
  backlogAlertInstances: DEFAULT_BACKLOG_ALERT_INSTANCES,
  backlogDeferBelowPriority: 0,
  backlogDeferHoldPercent: 100,
  backlogDeferPollMs: 2_000,
  eventsPrefetch: 50,
  transactionTimeoutMs: 30_000,
  recallHeldAfterMs: 2_000,
});

/** A full configuration from the defaults and `overrides`. */
export function resolveBrokerConfig(
  identity: { namespace: string; brokerId: string },
  overrides: Partial<Omit<BrokerConfig, 'brokerId' | 'namespace'>> = {},
): BrokerConfig {
  return { ...DEFAULT_BROKER_CONFIG, ...overrides, ...identity };
}
