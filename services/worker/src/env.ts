/**
 * The worker's environment: the shared ax variables it uses (DESIGN §8) plus its own, parsed
 * once (`loadConfigOrExit`: one bad value = one line and exit code 2).
 */
import path from 'node:path';
import { axConfigFields, booleanField, enumField, httpPortField, intField, listField, pathField, pickFields, stringField, type ConfigOf, type EnvField } from '@ax/kit';
import { DEFAULT_LOG_MAX_BYTES, LOG_TAIL_KEPT_BYTES, TEAM_NAME_PATTERN } from '@ax/core';
import { ALERT_WEBHOOK_FORMATS } from './alert-webhook.js';
import { allowEntryProblem } from './executors/host-allow.js';

/**
 * `AX_HTTP_EXECUTOR_ALLOW` as the worker reads it: the kit's field (default `*`, required with
 * `NODE_ENV=production`) with the worker's wider entry syntax — `internal:host`, CIDR ranges —
 * checked by the matcher's own parser (executors/host-allow.ts), so a bad entry is one config
 * line and exit code 2, not a failure at the first http job.
 */
function httpExecutorAllowField(): EnvField<readonly string[]> {
  const kit = axConfigFields.httpExecutorAllow;
  const expected = 'a comma-separated list of "*", "host", "host:port", "*.domain", "internal:host", addresses, CIDR ranges or [IPv6], each with an optional :port';
  const field = listField({
    env: kit.env,
    expected,
    itemPattern: /^[a-z0-9*.:/[\]-]+$/,
    lowerCase: true,
    requiredReason: (ctx) => (ctx.production ? 'required when NODE_ENV=production' : undefined),
    default: ['*'],
  });
  return {
    ...field,
    schema: (ctx) =>
      field.schema(ctx).superRefine((entries, zctx) => {
        for (const entry of entries) {
          const problem = allowEntryProblem(entry);
          if (problem !== undefined) return void zctx.addIssue({ code: 'custom', message: `expected ${expected} (bad item ${JSON.stringify(entry)}: ${problem})` });
        }
      }),
  };
}

/** Every variable the worker reads. */
export const workerEnvFields = {
  ...pickFields(axConfigFields, [
    'redisUrl',
    'redisSentinels',
    'redisSentinelName',
    'redisSentinelPassword',
    'amqpUrl',
    'namespace',
    'logLevel',
    'executorSecret',
    'workerId',
    'workerTags',
    'workerSlots',
    'pluginDir',
    'shutdownGraceSeconds',
    'heartbeatIntervalMs',
    'leaseTtlMs',
    'workerSkewLimitMs',
    'outputTailBytes',
    'alertWebhookUrl',
  ]),
  httpExecutorAllow: httpExecutorAllowField(),
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
  /**
   * `AX_WORKER_TEAMS` — comma list of the teams whose work this worker takes (ADMIN-API.md
   * "Teams"); the broker routes an instance only to workers serving its team. Default: every team.
   */
  teams: listField({
    env: 'AX_WORKER_TEAMS',
    expected: 'a comma-separated list of team names (^[a-z][a-z0-9_-]{0,63}$)',
    itemPattern: TEAM_NAME_PATTERN,
    default: [],
  }),
  /**
   * `AX_SECRETS_DIR` — where `{"secretRef":"NAME"}` is read: `<dir>/<team>/<NAME>` of the task's
   * team, one trailing newline removed (ADMIN-API.md "Secrets"). Unset: every secretRef fails
   * the attempt with SECRET_MISSING. Nothing else (no environment variable) is ever a secret.
   */
  secretsDir: pathField({ env: 'AX_SECRETS_DIR', optional: true }),
  /**
   * `AX_WORKER_RESERVED_SLOTS` — `N:P` (or `S%:P`) keeps N slots (S % of them) for instances of
   * priority ≥ P: lower priority starts here only while more than N slots are free. Default: none.
   */
  reservedSlots: stringField({
    env: 'AX_WORKER_RESERVED_SLOTS',
    expected: '"N:P" or "S%:P" (N slots or S % of them kept for priority ≥ P, 1..9)',
    pattern: /^\s*\d{1,5}%?:\d\s*$/,
    optional: true,
  }),
  /** `AX_WORKER_KILL_GRACE_MS` — SIGTERM → SIGKILL grace for timed-out or canceled jobs. Default 5000. */
  killGraceMs: intField({ env: 'AX_WORKER_KILL_GRACE_MS', unit: 'ms', min: 0, default: 5_000 }),
  /**
   * `AX_LOG_MAX_BYTES` — job output shipped per execution, stdout and stderr together (DESIGN
   * §11). Past it the head is kept, the rest is dropped except each stream's last 64 KiB, and the
   * log says truncated. Default 16777216 (16 MiB).
   */
  logMaxBytes: intField({ env: 'AX_LOG_MAX_BYTES', unit: 'bytes', min: LOG_TAIL_KEPT_BYTES, default: DEFAULT_LOG_MAX_BYTES }),
  /** `AX_LOG_FLUSH_MS` — longest wait of printed output before the worker writes and sends it. Default 250. */
  logFlushMs: intField({ env: 'AX_LOG_FLUSH_MS', unit: 'ms', min: 10, max: 10_000, default: 250 }),
  /**
   * `AX_LOG_OUTBOX_MAX_BYTES` — job output the outbox may hold unshipped (a RabbitMQ outage);
   * past it running jobs keep only their streams' tails (their logs say truncated) instead of
   * filling the disk. Default 268435456 (256 MiB).
   */
  logOutboxMaxBytes: intField({ env: 'AX_LOG_OUTBOX_MAX_BYTES', unit: 'bytes', min: 1_048_576, default: 268_435_456 }),
  /**
   * `AX_LOG_OUTPUT_IN_RESULT` — a short attempt's output (at most 8 KiB left at its end) travels in
   * its result when the dispatch allows it (`outputInResult`). false ships every byte as `log`
   * messages, as older workers do (for a rollout that moves brokers and workers together). Default true.
   */
  logOutputInResult: booleanField({ env: 'AX_LOG_OUTPUT_IN_RESULT', default: true }),
} as const;

/** The worker's parsed environment. */
export type WorkerEnv = ConfigOf<typeof workerEnvFields>;

/** The outbox file of a worker. */
export function outboxFile(env: Pick<WorkerEnv, 'dataDir' | 'workerId'>): string {
  return path.join(env.dataDir, env.workerId, 'outbox.db');
}
