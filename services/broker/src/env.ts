/** The broker's environment variables (DESIGN §8) → `BrokerConfig`. */
import os from 'node:os';
import { axConfigFields, enumField, httpPortField, intField, pickFields, type ConfigOf } from '@ax/kit';
import { resolveBrokerConfig, type BrokerConfig } from './config.js';

/** Every variable the broker reads. */
export const brokerEnvFields = {
  ...pickFields(axConfigFields, [
    'mysqlUrl',
    'redisUrl',
    'redisSentinels',
    'redisSentinelName',
    'redisSentinelPassword',
    'amqpUrl',
    'namespace',
    'logLevel',
    'shutdownGraceSeconds',
    'alertWebhookUrl',
    'dispatchRatePerSecond',
    'ackTimeoutMs',
    'maxReroutes',
    'leaseTtlMs',
    'workerSkewLimitMs',
    'lostWorkerGraceMs',
    'heartbeatIntervalMs',
    'maxLostRedispatches',
    'noWorkerAlertMs',
    'backlogAlertInstances',
    'backoffCapMs',
  ]),
  httpPort: httpPortField('broker'),
  /** `AX_ALERT_WEBHOOK_FORMAT` — `generic` (ADMIN-API.md JSON), `dingtalk`, `wecom` or `slack`. Default `generic`. */
  alertWebhookFormat: enumField({ env: 'AX_ALERT_WEBHOOK_FORMAT', values: ['generic', 'dingtalk', 'wecom', 'slack'] as const, default: 'generic' }),
  /** `AX_DISPATCH_BATCH` — instances claimed per dispatch transaction. Default 200. */
  dispatchBatchSize: intField({ env: 'AX_DISPATCH_BATCH', unit: 'count', max: 1_000, default: 200 }),
  /** `AX_DISPATCH_POLL_MS` — dispatch polling period (pub/sub wakes it earlier). Default 500. */
  dispatchPollMs: intField({ env: 'AX_DISPATCH_POLL_MS', unit: 'ms', default: 500 }),
  /** `AX_TIMERS_POLL_MS` — period of the timed-transition scans (retries are woken when due; this is their fallback). Default 1000. */
  timersPollMs: intField({ env: 'AX_TIMERS_POLL_MS', unit: 'ms', default: 1_000 }),
  /**
   * `AX_WORKER_SILENCE_MS` — a worker with no consumer on its control queue and no heartbeat for
   * this long is lost without waiting for its lease. Default `AX_HEARTBEAT_INTERVAL_MS` + 2500.
   */
  workerSilenceMs: intField({
    env: 'AX_WORKER_SILENCE_MS',
    unit: 'ms',
    min: 1_000,
    default: (ctx) => {
      const raw = ctx.env.AX_HEARTBEAT_INTERVAL_MS;
      const heartbeatMs = raw !== undefined && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : 5_000;
      return heartbeatMs + 2_500;
    },
  }),
  /**
   * `AX_BACKLOG_DEFER_BELOW_PRIORITY` — while a worker pool's backlog holds, instances of lower
   * priority wait PENDING (docs/configuration.md "Backlog deferral"). 0..9; 0 = off. Default 0.
   */
  backlogDeferBelowPriority: intField({ env: 'AX_BACKLOG_DEFER_BELOW_PRIORITY', unit: 'count', min: 0, max: 9, default: 0 }),
  /**
   * `AX_BACKLOG_DEFER_HOLD_PERCENT` — the backlog holds once the pool's instances at or above that
   * priority exceed this % of its slots; it clears at half. Default 100.
   */
  backlogDeferHoldPercent: intField({ env: 'AX_BACKLOG_DEFER_HOLD_PERCENT', unit: 'count', min: 1, max: 10_000, default: 100 }),
  /** `AX_BACKLOG_SCAN_MS` — period of the backlog scan (why each due instance waits, backlog metrics, BACKLOG alert). Default 5000. */
  backlogScanMs: intField({ env: 'AX_BACKLOG_SCAN_MS', unit: 'ms', min: 100, default: 5_000 }),
  /**
   * `AX_RECALL_HELD_AFTER_MS` — a dispatch a worker holds beyond its slots (R9 prefetch) this
   * long is recalled while another worker has a free slot. Default 2000.
   */
  recallHeldAfterMs: intField({ env: 'AX_RECALL_HELD_AFTER_MS', unit: 'ms', min: 100, default: 2_000 }),
  /** `AX_DB_TRANSACTION_TIMEOUT_MS` — most time one MySQL transaction may take. Default 30000. */
  transactionTimeoutMs: intField({ env: 'AX_DB_TRANSACTION_TIMEOUT_MS', unit: 'ms', min: 100, default: 30_000 }),
};

/** The parsed environment. */
export type BrokerEnv = ConfigOf<typeof brokerEnvFields>;

/** The engine configuration of a parsed environment. */
export function toBrokerConfig(env: BrokerEnv): BrokerConfig {
  return resolveBrokerConfig(
    { namespace: env.namespace, brokerId: `${os.hostname()}-${process.pid}` },
    {
      ackTimeoutMs: env.ackTimeoutMs,
      maxReroutes: env.maxReroutes,
      leaseTtlMs: env.leaseTtlMs,
      workerSkewLimitMs: env.workerSkewLimitMs,
      lostWorkerGraceMs: env.lostWorkerGraceMs,
      workerSilenceMs: env.workerSilenceMs,
      maxLostRedispatches: env.maxLostRedispatches,
      noWorkerAlertMs: env.noWorkerAlertMs,
      backoffCapMs: env.backoffCapMs,
      dispatchRatePerSecond: env.dispatchRatePerSecond,
      dispatchBatchSize: env.dispatchBatchSize,
      dispatchPollMs: env.dispatchPollMs,
      timersPollMs: env.timersPollMs,
      transactionTimeoutMs: env.transactionTimeoutMs,
      recallHeldAfterMs: env.recallHeldAfterMs,
      backlogDeferBelowPriority: env.backlogDeferBelowPriority,
      backlogDeferHoldPercent: env.backlogDeferHoldPercent,
      backlogScanMs: env.backlogScanMs,
      backlogAlertInstances: env.backlogAlertInstances,
      alertWebhookUrl: env.alertWebhookUrl,
      alertWebhookFormat: env.alertWebhookFormat,
    },
  );
}
