/**
 * The worker's environment: the shared ax variables it uses (DESIGN §8) plus its own, parsed
 * once (`loadConfigOrExit`: one bad value = one line and exit code 2).
 */
import path from 'node:path';
import { axConfigFields, enumField, httpPortField, intField, pathField, pickFields, type ConfigOf } from '@ax/kit';
import { ALERT_WEBHOOK_FORMATS } from './alert-webhook.js';

/** Every variable the worker reads. */
export const workerEnvFields = {
  ...pickFields(axConfigFields, [
    'redisUrl',
    'amqpUrl',
    'namespace',
    'logLevel',
    'executorSecret',
    'workerId',
    'workerTags',
    'workerSlots',
    'httpExecutorAllow',
    'pluginDir',
    'shutdownGraceSeconds',
    'heartbeatIntervalMs',
    'leaseTtlMs',
    'workerSkewLimitMs',
    'outputTailBytes',
    'alertWebhookUrl',
  ]),
  /** `AX_ALERT_WEBHOOK_FORMAT` — body of the worker's own alerts (clock skew): `generic`, `dingtalk`, `wecom` or `slack`. Default `generic`. */
  alertWebhookFormat: enumField({ env: 'AX_ALERT_WEBHOOK_FORMAT', values: ALERT_WEBHOOK_FORMATS, default: 'generic' }),
  httpPort: httpPortField('worker'),
  /**
   * `AX_WORKER_DATA_DIR` — where the outbox lives: `<dir>/<workerId>/outbox.db` (keep it on a
   * persistent volume: a restarted worker replays and recovers from it). Default `./.ax-worker`.
   */
  dataDir: pathField({ env: 'AX_WORKER_DATA_DIR', default: './.ax-worker' }),
  /** `AX_WORKER_CLOCK_CHECK_MS` — period of the clock check against Redis `TIME`. Default 30000. */
  clockCheckIntervalMs: intField({ env: 'AX_WORKER_CLOCK_CHECK_MS', unit: 'ms', default: 30_000 }),
  /** `AX_WORKER_PREFETCH` — dispatch messages in flight (each acked after the outbox write). Default 50. */
  prefetch: intField({ env: 'AX_WORKER_PREFETCH', unit: 'count', max: 10_000, default: 50 }),
  /** `AX_WORKER_KILL_GRACE_MS` — SIGTERM → SIGKILL grace for timed-out or canceled jobs. Default 5000. */
  killGraceMs: intField({ env: 'AX_WORKER_KILL_GRACE_MS', unit: 'ms', min: 0, default: 5_000 }),
} as const;

/** The worker's parsed environment. */
export type WorkerEnv = ConfigOf<typeof workerEnvFields>;

/** The outbox file of a worker. */
export function outboxFile(env: Pick<WorkerEnv, 'dataDir' | 'workerId'>): string {
  return path.join(env.dataDir, env.workerId, 'outbox.db');
}
