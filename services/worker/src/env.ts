/**
 * The worker's environment: the shared ax variables it uses (DESIGN §8) plus its own, parsed
 * once (`loadConfigOrExit`: one bad value = one line and exit code 2).
 */
import { readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { axConfigFields, booleanField, enumField, httpPortField, intField, listField, pathField, pickFields, stringField, UNSET_PARAM, type ConfigOf, type EnvField } from '@ax/kit';
import { z } from 'zod';
import { DEFAULT_LOG_MAX_BYTES, ENROLLMENT_ID_PATTERN, LOG_TAIL_KEPT_BYTES, TEAM_NAME_PATTERN, WORKER_CREDENTIAL_PATTERN } from '@ax/core';
import { ALERT_WEBHOOK_FORMATS } from './alert-webhook.js';
import { allowEntryProblem } from './executors/host-allow.js';
import { defaultJobPrefetch } from './job-prefetch.js';

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

/** `AX_JOB_ISOLATION` values: `uid` (each team's jobs under its own uid) or `off` (development only). */
export const JOB_ISOLATION_MODES = ['uid', 'off'] as const;

/** `AX_JOB_ISOLATION`, `off` refused with NODE_ENV=production. */
function jobIsolationField(): EnvField<(typeof JOB_ISOLATION_MODES)[number]> {
  const field = enumField({ env: 'AX_JOB_ISOLATION', values: JOB_ISOLATION_MODES, default: 'uid' });
  return {
    ...field,
    schema: (ctx) =>
      field.schema(ctx).superRefine((mode, zctx) => {
        if (mode === 'off' && ctx.production) zctx.addIssue({ code: 'custom', message: 'off is for development only and refused with NODE_ENV=production (set AX_JOB_UIDS)' });
      }),
  };
}

const JOB_UID_ENTRY = /^([a-z][a-z0-9_-]{0,63})=(\d{1,10})(?::(\d{1,10}))?$/;
const MAX_ID = 4_294_967_294;

/**
 * `AX_JOB_UIDS` — `team=uid[:gid]` per team (gid defaults to the uid), e.g.
 * `alpha=20001,beta=20002`: the OS identity of each team's shell and python jobs (R25). No uid or
 * gid 0, no uid shared by two teams; every team of AX_WORKER_TEAMS must have one. Required unless
 * AX_JOB_ISOLATION=off. A job of a team without one fails without running.
 */
function jobUidsField(): EnvField<ReadonlyMap<string, { readonly uid: number; readonly gid: number }>> {
  const expected = 'a comma-separated list of team=uid or team=uid:gid (uid and gid 1 to 4294967294, one uid per team)';
  const field = listField({
    env: 'AX_JOB_UIDS',
    expected,
    itemPattern: JOB_UID_ENTRY,
    default: [],
    requiredReason: (ctx) => ((ctx.env.AX_JOB_ISOLATION ?? '').trim().toLowerCase() === 'off' ? undefined : 'required unless AX_JOB_ISOLATION=off (development only)'),
  });
  return {
    ...field,
    schema: (ctx) =>
      field.schema(ctx).transform((entries, zctx) => {
        const map = new Map<string, { uid: number; gid: number }>();
        const owners = new Map<number, string>();
        const fail = (message: string): typeof z.NEVER => {
          zctx.addIssue({ code: 'custom', message: `expected ${expected} (${message})` });
          return z.NEVER;
        };
        for (const entry of entries) {
          const m = JOB_UID_ENTRY.exec(entry);
          if (m === null) return fail(`bad item ${JSON.stringify(entry)}`);
          const [, team = '', uidText = '', gidText] = m;
          const uid = Number(uidText);
          const gid = gidText === undefined ? uid : Number(gidText);
          if (uid < 1 || uid > MAX_ID || gid < 1 || gid > MAX_ID) return fail(`${JSON.stringify(entry)}: uid and gid must be 1 to ${MAX_ID}, never root's 0`);
          if (map.has(team)) return fail(`team ${team} is given twice`);
          const other = owners.get(uid);
          if (other !== undefined) return fail(`teams ${other} and ${team} share uid ${uid}: each team needs its own`);
          owners.set(uid, team);
          map.set(team, { uid, gid });
        }
        if (map.size > 0) {
          const served = (ctx.env.AX_WORKER_TEAMS ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '');
          const missing = served.filter((team) => !map.has(team));
          if (missing.length > 0) return fail(`no uid for team${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of AX_WORKER_TEAMS`);
        }
        return map;
      }),
  };
}

/** The variable that makes a worker an enrolled one. */
const CREDENTIAL_FILE = 'AX_WORKER_CREDENTIAL_FILE';
const enrolledIn = (env: Readonly<Record<string, string | undefined>>): boolean => env[CREDENTIAL_FILE] !== undefined;

/** An enrolled worker's credential, read from `AX_WORKER_CREDENTIAL_FILE`. */
export interface WorkerCredential {
  /** The file it was read from (absolute). */
  readonly file: string;
  /** `axw_<enrollment id>_<secret>`. */
  readonly credential: string;
  /** The enrollment it names. */
  readonly enrollmentId: string;
}

/**
 * `AX_WORKER_CREDENTIAL_FILE` read at start-up: a missing or unreadable file, or one that does
 * not hold a credential (`axw_<id>_<secret>`, one trailing newline allowed), is one config line
 * naming the variable and the file (never its content) and exit code 2. So is a file every user
 * may read while jobs run under other uids (AX_JOB_ISOLATION=uid): a job could take the
 * enrollment's credential, hence its teams' keys (R25). Unset with NODE_ENV=production, too: an
 * unenrolled worker holds the master secret and the services' shared logins, which a job of any
 * team could take (#44), so production runs enrolled workers only.
 */
function credentialFileField(): EnvField<WorkerCredential | undefined> {
  const kit = axConfigFields.workerCredentialFile;
  const expected = 'a readable file holding a worker credential (axw_<enrollment id>_<secret>, as POST /api/v1/workers/enrollments showed it)';
  return {
    ...kit,
    expected,
    schema: (ctx) =>
      kit.schema(ctx).transform((file, zctx): WorkerCredential | undefined => {
        if (file === undefined) {
          if (!ctx.production) return undefined;
          zctx.addIssue({
            code: 'custom',
            message: `required when NODE_ENV=production: a worker must be enrolled (ADMIN-API.md "Workers"), never run with AX_EXECUTOR_SECRET and the services' logins; see docs/deploy.md "An enrolled worker"`,
            params: { [UNSET_PARAM]: true },
          });
          return z.NEVER;
        }
        const fail = (problem: string): typeof z.NEVER => {
          zctx.addIssue({ code: 'custom', message: `expected ${expected} (${problem})` });
          return z.NEVER;
        };
        let text: string;
        let mode: number;
        try {
          text = readFileSync(file, 'utf8');
          mode = statSync(file).mode;
        } catch (error) {
          return fail(`${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
        }
        const isolated = (ctx.env.AX_JOB_ISOLATION ?? 'uid').trim().toLowerCase() !== 'off';
        if (isolated && (mode & 0o004) !== 0) {
          zctx.addIssue({ code: 'custom', message: `the file is readable by every user (mode ${(mode & 0o777).toString(8).padStart(4, '0')}): a job could read the credential (DESIGN R25); make it 0400, the worker's` });
          return z.NEVER;
        }
        const credential = text.replace(/\r?\n$/, '');
        const match = WORKER_CREDENTIAL_PATTERN.exec(credential);
        if (match?.[1] === undefined || !ENROLLMENT_ID_PATTERN.test(match[1])) {
          return fail(credential.trim() === '' ? 'the file is empty' : 'its content is not a credential');
        }
        return { file, credential, enrollmentId: match[1] };
      }),
  };
}

/** `AX_ADMIN_URL`, required with `AX_WORKER_CREDENTIAL_FILE` (the worker asks it for its enrollment). */
function adminUrlField(): EnvField<string | undefined> {
  const kit = axConfigFields.adminUrl;
  return {
    ...kit,
    schema: (ctx) =>
      kit.schema(ctx).superRefine((url, zctx) => {
        if (url === undefined && enrolledIn(ctx.env)) {
          zctx.addIssue({ code: 'custom', message: `required with ${CREDENTIAL_FILE}: the worker asks admin-api there for its enrollment; expected ${kit.expected}` });
        }
      }),
  };
}

/** `AX_EXECUTOR_SECRET`, refused on an enrolled worker: it is given its teams' keys, never the master secret (R25). */
function executorSecretField(): EnvField<string | undefined> {
  const kit = axConfigFields.executorSecret;
  return {
    ...kit,
    schema: (ctx) =>
      kit.schema(ctx).superRefine((secret, zctx) => {
        if (secret !== undefined && enrolledIn(ctx.env)) {
          zctx.addIssue({ code: 'custom', message: `a worker with ${CREDENTIAL_FILE} is never given the master secret (DESIGN R25): its enrollment gives it its teams' keys; remove it` });
        }
      }),
  };
}

/** Longest local id of an enrolled worker: `<enrollment id>.<local id>` is a worker id of at most 128 characters. */
export const ENROLLED_LOCAL_ID_MAX = 128 - 'enr-xxxxxxxxxxxx.'.length;

/** The host name as a worker id (what `AX_WORKER_ID` defaults to on an enrolled worker: a pod's name, stable over restarts). */
export function hostLocalId(hostname: string = os.hostname()): string {
  const host = hostname
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '');
  return (host || 'worker').slice(0, ENROLLED_LOCAL_ID_MAX);
}

/**
 * `AX_WORKER_ID`: the kit's field (default `<host>-<pid>`); on an enrolled worker the local part
 * of its id (`<enrollment id>.<AX_WORKER_ID>`), default the host name, at most 111 characters.
 */
function workerIdField(): EnvField<string> {
  const kit = axConfigFields.workerId;
  return {
    ...kit,
    schema: (ctx) => {
      if (!enrolledIn(ctx.env)) return kit.schema(ctx);
      const checked = kit.schema(ctx);
      return z
        .string()
        .optional()
        .transform((raw, zctx): string => {
          const parsed = checked.safeParse(raw ?? hostLocalId());
          if (!parsed.success) {
            zctx.addIssue({ code: 'custom', message: parsed.error.issues[0]?.message ?? `expected ${kit.expected}` });
            return z.NEVER;
          }
          if (parsed.data.length > ENROLLED_LOCAL_ID_MAX) {
            zctx.addIssue({ code: 'custom', message: `at most ${ENROLLED_LOCAL_ID_MAX} characters on an enrolled worker (its id is <enrollment id>.<AX_WORKER_ID>)` });
            return z.NEVER;
          }
          return parsed.data;
        });
    },
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
    'workerTags',
    'workerSlots',
    'pluginDir',
    'shutdownGraceSeconds',
    'heartbeatIntervalMs',
    'leaseTtlMs',
    'workerSkewLimitMs',
    'outputTailBytes',
    'alertWebhookUrl',
    'workerRefreshMs',
  ]),
  executorSecret: executorSecretField(),
  workerId: workerIdField(),
  credential: credentialFileField(),
  adminUrl: adminUrlField(),
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
  /**
   * `AX_WORKER_PREFETCH` — RabbitMQ consumer prefetch: dispatch *messages* in flight, each acked
   * right after the outbox write (not jobs held; see `AX_WORKER_JOB_PREFETCH`). Default 50.
   */
  prefetch: intField({ env: 'AX_WORKER_PREFETCH', unit: 'count', max: 10_000, default: 50 }),
  /**
   * `AX_WORKER_JOB_PREFETCH` — dispatches held beyond the slots (R9 prefetch, job-prefetch.ts):
   * brokers reserve the worker up to slots + this, and it starts a held one itself the moment a
   * slot frees. 0 = none (every freed slot goes back through a broker). Default: the worker's
   * slots (`defaultJobPrefetch`; an invalid AX_WORKER_SLOTS is reported by its own field).
   */
  jobPrefetch: intField({
    env: 'AX_WORKER_JOB_PREFETCH',
    unit: 'count',
    min: 0,
    max: 10_000,
    default: (ctx) => {
      const slots = axConfigFields.workerSlots.schema(ctx).safeParse(ctx.env.AX_WORKER_SLOTS);
      return slots.success ? defaultJobPrefetch(slots.data) : 0;
    },
  }),
  /**
   * `AX_WORKER_TEAMS` — comma list of the teams whose work this worker takes (ADMIN-API.md
   * "Teams"); the broker routes an instance only to workers serving its team. On an enrolled
   * worker it may only narrow its enrollment's teams (a team outside them: exit 2). Default:
   * every team (of its enrollment).
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
   * `AX_JOB_ISOLATION` — `uid` (default): each team's shell and python jobs run under the team's
   * uid of AX_JOB_UIDS, which the worker must be able to switch to (root, or CAP_SETUID,
   * CAP_SETGID, CAP_KILL and CAP_CHOWN) or it does not start. `off`: jobs run as the worker, who
   * can then read its credentials and every team's secrets — development only, refused with
   * NODE_ENV=production (docs/teams.md "The worker machine").
   */
  jobIsolation: jobIsolationField(),
  jobUids: jobUidsField(),
  /**
   * `AX_JOB_DIR` — where each run gets its working folder (HOME, TMPDIR under `tmp/`), made 0700
   * for the team's uid and removed when the run ends. The folder itself is the worker's (0711).
   * Default `<os tmpdir>/ax-jobs-<worker uid>/<AX_WORKER_ID>`.
   */
  jobDir: pathField({ env: 'AX_JOB_DIR', optional: true }),
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

/** The folder of the jobs' working folders (`AX_JOB_DIR` or its default). */
export function jobDirOf(env: Pick<WorkerEnv, 'jobDir' | 'workerId'>): string {
  return env.jobDir ?? path.join(os.tmpdir(), `ax-jobs-${process.getuid?.() ?? 'user'}`, env.workerId);
}

/** The outbox file of a worker. */
export function outboxFile(env: Pick<WorkerEnv, 'dataDir' | 'workerId'>): string {
  return path.join(env.dataDir, env.workerId, 'outbox.db');
}
