/**
 * A real ax stack for one scenario round: its own database, namespace (Redis keys, exchanges,
 * queues) and worker data directory, real service processes from `services/*\/dist`, all
 * tracked for cleanup (see harness.mjs). Settings an operator would tune for a burst of no-op
 * HTTP jobs are in `AX_BENCH_ENV`, documented in docs/benchmarks.md. Workers are enrolled
 * through an admin-api of the round, as in production (enrollment.mjs).
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTaskDefinitionOrThrow } from '../../packages/core/dist/index.js';
import { redisKeys } from '../../packages/kit/dist/index.js';
import {
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  freePort,
  serviceEntry,
  startProcess,
  uniqueNamespace,
} from '../../packages/testing/dist/index.js';
import { busAdminOf, deleteEnrollmentLogins, enrollBenchWorkers, enrolledWorkerEnv, enrolledWorkerId, roundAdminToken, workerLoginOf } from './enrollment.mjs';
import { log, onCleanup, removeDir, track, untrack } from './harness.mjs';
import { cpuSnapshot, serverPids } from './proc-cpu.mjs';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/**
 * The tree whose services and migrations a round runs: this one, or the built checkout of an
 * older commit that `bench/run.mjs --baseline <commit>` prepared (bench/lib/baseline.mjs), so
 * old and new code are measured by the same scenario script in the same minutes.
 */
export const benchTree = process.env.AX_BENCH_TREE ?? repoRoot;
const entryOf = (service) => (benchTree === repoRoot ? serviceEntry(service) : path.join(benchTree, 'services', service, 'dist', 'main.js'));
export const EXECUTOR_SECRET = 'bench-executor-secret-0123456789';
/** `enrollment` (workers enrolled through the round's admin-api) or `service` (bench/lib/enrollment.mjs). */
export const WORKER_LOGIN = workerLoginOf(process.env, benchTree !== repoRoot);

/** Operator settings of the bench stack (per service; overridable by the same env names). */
export const AX_BENCH_ENV = {
  common: { AX_LOG_LEVEL: 'warn' },
  scheduler: {},
  broker: { AX_DISPATCH_BATCH: '500', AX_DISPATCH_POLL_MS: '200' },
  // AX_WORKER_JOB_PREFETCH (R9): the worker's own default unless the bench's environment sets it.
  worker: { AX_WORKER_SLOTS: '256', AX_WORKER_PREFETCH: '64', AX_WORKER_JOB_PREFETCH: undefined },
};

/** `defaults` with the same names in the environment taking their place; undefined = left unset. */
function fromEnv(defaults) {
  const out = {};
  for (const [k, v] of Object.entries(defaults)) {
    const value = process.env[k] ?? v;
    if (value !== undefined) out[k] = value;
  }
  return out;
}

/**
 * Creates the database, Redis client, AMQP namespace and data dir of one round. `database`
 * (`{ url, pool }`) runs the round on an existing database instead, which it neither migrates
 * nor drops (the history scenario's kept database); `serverUrl` creates the round's database on
 * another server than the shared test server (the soak's private MariaDB, `--buffer-pool`),
 * which the round drops with the rest as it would on the shared one.
 */
export async function createAxRound(label, { database, serverUrl } = {}) {
  const namespace = uniqueNamespace('axbench');
  track('namespaces', namespace);
  const db =
    database ??
    (await createTestDatabase({
      ...(serverUrl === undefined ? {} : { serverUrl }),
      poolOptions: { connectionLimit: 4 },
      ...(benchTree === repoRoot ? {} : { migrateOptions: { migrationsDir: path.join(benchTree, 'packages', 'store', 'migrations') } }),
    }));
  // A private server goes with its folder; only the shared one needs its leftovers found by name.
  if (database === undefined && serverUrl === undefined) track('databases', db.name);
  const redis = await createTestRedis(namespace);
  const amqp = await createTestAmqp(namespace);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `ax-bench-${label}-`));
  track('dirs', dataDir);
  const procs = [];
  const allProcs = [];
  const httpPorts = new WeakMap();
  /** The bootstrap admin token of every admin-api the round starts (unless a scenario gives its own). */
  const adminToken = roundAdminToken();
  const adminTokens = new WeakMap();
  let enrolling;
  const round = {
    namespace,
    db,
    redis,
    dataDir,
    procs,
    /** The enrollment of the round's workers, once one started enrolled (WORKER_LOGIN `enrollment`). */
    enrollment: undefined,
    env: {
      AX_MYSQL_URL: db.url,
      AX_REDIS_URL: redis.url,
      AX_AMQP_URL: amqp.url,
      AX_NAMESPACE: namespace,
      AX_EXECUTOR_SECRET: EXECUTOR_SECRET,
      AX_WORKER_DATA_DIR: dataDir,
      ...fromEnv(AX_BENCH_ENV.common),
    },
    /**
     * Starts `count` processes of a service; `profileDir` turns on `--cpu-prof`; `name` labels
     * the process in output dumps (default `<service>-<i>`); `serviceDefaults` leaves out the
     * settings of AX_BENCH_ENV (common and the service's: the service runs with its own defaults,
     * except for those of these variables set in the bench's own environment); `nodeArgs` go to
     * node before the entry (e.g. `--heapsnapshot-signal=SIGUSR2`).
     */
    async start(service, count, { profileDir, extraEnv = {}, name, serviceDefaults = false, nodeArgs: extraNodeArgs = [] } = {}) {
      const enrolled = service === 'worker' && WORKER_LOGIN === 'enrollment' ? enrolledWorkerEnv(await round.enroll()) : {};
      const serviceEnv =
        service === 'admin-api' ? { AX_ADMIN_TOKEN: adminToken, AX_AMQP_MANAGEMENT_URL: busAdminOf(amqp.url).managementUrl } : {};
      const started = await Promise.all(
        Array.from({ length: count }, async (_, i) => {
          const settings = serviceDefaults
            ? Object.fromEntries(Object.keys({ ...AX_BENCH_ENV.common, ...(AX_BENCH_ENV[service] ?? {}) }).map((k) => [k, process.env[k]]))
            : fromEnv(AX_BENCH_ENV[service] ?? {});
          const env = { ...round.env, ...settings, ...serviceEnv, ...enrolled, ...extraEnv };
          if (service === 'worker') {
            env.AX_WORKER_ID = extraEnv.AX_WORKER_ID ?? `bench-w${i + 1}`;
            // R25: as root (this machine, CI) the bench runs each job under its team's uid, as
            // production does; elsewhere a worker cannot switch uids, and jobs run as the worker.
            if (env.AX_JOB_UIDS === undefined && env.AX_JOB_ISOLATION === undefined) {
              if (process.getuid?.() === 0) env.AX_JOB_UIDS = 'default=20001';
              else env.AX_JOB_ISOLATION = 'off';
            }
          }
          const nodeArgs = [...extraNodeArgs];
          if (profileDir) {
            // Node 20 refuses --cpu-prof in NODE_OPTIONS: pass it as an argument.
            const dir = path.join(profileDir, service);
            mkdirSync(dir, { recursive: true });
            nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
          }
          const port = await freePort();
          env.AX_HTTP_PORT = String(port);
          const proc = await startProcess({
            name: name ?? `${service}-${i + 1}`,
            command: process.execPath,
            args: [...nodeArgs, entryOf(service)],
            env,
            readyUrl: `http://127.0.0.1:${port}/healthz`,
            readyTimeoutMs: 30_000,
          });
          track('pgids', proc.pgid);
          httpPorts.set(proc, port);
          if (service === 'admin-api') adminTokens.set(proc, env.AX_ADMIN_TOKEN);
          return proc;
        }),
      );
      procs.push(...started.map((p) => ({ service, proc: p })));
      allProcs.push(...started.map((p) => ({ service, proc: p })));
      return started.map((p) => p);
    },
    /**
     * The round's enrollment, made on the first call: through an admin-api of the round that runs
     * with the round's token, or one started for it (it stays up: enrolled workers refresh their
     * enrollment from it, and its CPU counts with the round's).
     */
    enroll() {
      enrolling ??= (async () => {
        const running = procs.find((p) => p.service === 'admin-api' && adminTokens.get(p.proc) === adminToken);
        const api = running?.proc ?? (await round.start('admin-api', 1, { name: 'admin-api-enroll' }))[0];
        round.enrollment = await enrollBenchWorkers({ adminUrl: round.httpUrl(api), token: adminToken, dir: path.join(dataDir, 'enrollment') });
        log(`workers enrolled as ${round.enrollment.id} through ${round.httpUrl(api)}`);
        return round.enrollment;
      })();
      return enrolling;
    },
    /** The id a worker started with `AX_WORKER_ID=localId` registers (and runs jobs) under. */
    workerId(localId) {
      return enrolledWorkerId(round.enrollment, localId);
    },
    /** `http://127.0.0.1:<port>` of a started process's health server (`/healthz`, `/metrics`). */
    httpUrl(proc) {
      return `http://127.0.0.1:${httpPorts.get(proc)}`;
    },
    /** Kills one started process's group (SIGKILL unless told otherwise) and forgets it once gone. */
    async kill(proc, signal = 'SIGKILL') {
      await proc.stop({ signal, graceMs: 5_000 });
      untrack('pgids', proc.pgid);
      const i = procs.findIndex((p) => p.proc === proc);
      if (i >= 0) procs.splice(i, 1);
    },
    /** The last `n` output lines of every process started so far (kept after they stop). */
    outputTail(n = 20) {
      const out = {};
      for (const { proc } of allProcs) {
        const lines = proc.lines().slice(-n).map((l) => l.text.slice(0, 500));
        if (lines.length > 0) out[proc.name] = lines;
      }
      return out;
    },
    /** Stops the given service's processes (all when omitted), SIGTERM then SIGKILL after grace. */
    async stop(service, graceMs = 15_000) {
      const which = procs.filter((p) => service === undefined || p.service === service);
      await Promise.all(
        which.map(async ({ proc }) => {
          const info = await proc.stop({ graceMs });
          untrack('pgids', proc.pgid);
          if (info.signal === 'SIGKILL') log(`${proc.name} needed SIGKILL`);
        }),
      );
      for (const p of which) procs.splice(procs.indexOf(p), 1);
    },
    /**
     * CPU ticks so far of each service's processes, this bench process (the sink), the servers
     * and the whole machine (`cpuSecondsBetween` of two of them gives the seconds used).
     */
    cpuSnapshot() {
      // The round's own MariaDB: a private server's work is what its figures are about.
      const groups = { bench: [process.pid], ...serverPids({ mariadbPort: Number(new URL(db.url).port || 3306) }) };
      for (const { service, proc } of procs) (groups[service] ??= []).push(proc.pid);
      return cpuSnapshot(groups);
    },
    /** Tells every scheduler that tasks changed (one message per name). */
    async publishChanged(names) {
      const channel = redisKeys(namespace).channels.taskChanged;
      const pipe = redis.redis.pipeline();
      for (const n of names) pipe.publish(channel, n);
      await pipe.exec();
    },
  };
  onCleanup(async () => {
    removeDir(dataDir);
    untrack('dirs', dataDir);
  });
  if (database === undefined) {
    onCleanup(async () => {
      await db.drop();
      untrack('databases', db.name);
    });
  }
  onCleanup(async () => {
    await redis.cleanup();
    await amqp.cleanup();
    untrack('namespaces', namespace);
  });
  // After the processes stop (cleanups run last-in first-out): what revoking the enrollment removes.
  onCleanup(async () => {
    if (round.enrollment !== undefined) await deleteEnrollmentLogins({ enrollment: round.enrollment, amqpUrl: amqp.url, redis: redis.redis, namespace });
  });
  onCleanup(() => round.stop(undefined, 10_000));
  return round;
}

/** Column values of a task definition as `task` stores them (same order as INSERT_COLUMNS). */
const INSERT_COLUMNS = ['name', 'schedule', 'schedule_type', 'timezone', 'exec', 'params', 'tags', 'priority',
  'timeout_s', 'retry', 'misfire', 'block_strategy', 'route', 'enabled'];

/** The column values after `name` of a parsed definition, in INSERT_COLUMNS order (enabled). */
function taskValues(def) {
  return [JSON.stringify(def.schedule), def.schedule.type, def.schedule.timezone, JSON.stringify(def.exec),
    JSON.stringify(def.params), JSON.stringify(def.tags), def.priority, def.timeoutSeconds, JSON.stringify(def.retry),
    JSON.stringify(def.misfire), def.block, def.route, 1];
}

/** Inserts one task from a definition (validated by `@ax/core`); returns `{ id, def }`. */
export async function insertTaskDefinition(pool, input) {
  const def = parseTaskDefinitionOrThrow(input);
  const [t] = await pool.query(`INSERT INTO task (${INSERT_COLUMNS.join(', ')}) VALUES (?)`, [[def.name, ...taskValues(def)]]);
  return { id: t.insertId, def };
}

/**
 * Inserts `count` tasks `<prefix>-<i>` in batches of 1,000 with one definition (validated once by
 * `@ax/core`): the same cron expression and a no-op HTTP call to `url` (or `exec`, e.g. a shell job).
 */
export async function insertTasks(pool, { count, prefix, schedule, url, exec }) {
  const def = parseTaskDefinitionOrThrow({
    name: `${prefix}-0`,
    schedule,
    exec: exec ?? { type: 'http', url },
    block: 'parallel',
    retry: { max: 0 },
    timeoutSeconds: 30,
  });
  const shared = taskValues(def);
  const names = [];
  for (let i = 0; i < count; i += 1_000) {
    const rows = [];
    for (let j = i; j < Math.min(count, i + 1_000); j++) {
      names.push(`${prefix}-${j}`);
      rows.push([`${prefix}-${j}`, ...shared]);
    }
    await pool.query(`INSERT INTO task (${INSERT_COLUMNS.join(', ')}) VALUES ?`, [rows]);
  }
  return names;
}

/**
 * `count` instances PENDING and due already (slots a second apart from a minute ago), spread
 * over every task of the round in turn, one INSERT per second of slots. Returns each instance's
 * `{ name, atMs }` (its task and slot time). The rows carry what the scheduler writes on the
 * schema of the tree measured: their task's team (0010) and version (0015) where those columns
 * exist. A row without a team is one written before 0010, which the claim reaches by its task
 * (a rollout's path, not the one measured).
 */
export async function insertDueInstances(pool, count) {
  const [tasks] = await pool.query('SELECT id, name, team, version FROM task');
  const [present] = await pool.query(
    `SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'task_instance' AND COLUMN_NAME IN ('team', 'task_version')`,
  );
  const extra = ['team', 'task_version'].filter((c) => present.some((p) => p.name === c));
  const extraOf = (task) => extra.map((c) => (c === 'team' ? task.team : task.version));
  const baseMs = Math.floor(Date.now() / 1000) * 1000 - 60_000;
  const slots = [];
  for (let k = 0; slots.length < count && tasks.length > 0; k++) {
    const rows = [];
    for (const task of tasks) {
      if (slots.length >= count) break;
      const at = new Date(baseMs + k * 1_000);
      slots.push({ name: task.name, atMs: at.getTime() });
      rows.push([task.id, task.name, at, at.toISOString().slice(0, 10), 'manual', 'PENDING', 1, 1, at, '{}', 5, ...extraOf(task)]);
    }
    await pool.query(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority${extra.map((c) => `, ${c}`).join('')}) VALUES ?`,
      [rows],
    );
  }
  return slots;
}

/** Six-field cron expression that fires once a day at the UTC second of `atMs`. */
export function cronAt(atMs) {
  const d = new Date(atMs);
  return `${d.getUTCSeconds()} ${d.getUTCMinutes()} ${d.getUTCHours()} * * *`;
}

/** Instance counts by state. */
export async function countByState(pool) {
  const [rows] = await pool.query('SELECT state, COUNT(*) AS n FROM task_instance GROUP BY state');
  const out = {};
  for (const r of rows) out[r.state] = Number(r.n);
  return out;
}

/** `[{ backlog, pending }]`: instances due (`due_at <= NOW(3)`) and not final, and those PENDING. */
export async function dueBacklog(pool) {
  const [rows] = await pool.query(
    `SELECT state, COUNT(*) AS n FROM task_instance
      WHERE state IN ('PENDING', 'DISPATCHED', 'RUNNING', 'RETRY_WAIT') AND due_at <= NOW(3) GROUP BY state`,
  );
  let backlog = 0;
  let pending = 0;
  for (const r of rows) {
    backlog += Number(r.n);
    if (r.state === 'PENDING') pending = Number(r.n);
  }
  return [{ backlog, pending }];
}

/**
 * Per instance: slot key, fire lag (expected → created, ms) and end lag (expected → ended,
 * ms), state. Times are on the database clock. `params` fill the `?` of `where`.
 */
export async function instanceRows(pool, where = '1=1', params = []) {
  const [rows] = await pool.query(
    `SELECT task_name, expected_time, state, reason, run_no,
            TIMESTAMPDIFF(MICROSECOND, expected_time, created_at) / 1000 AS fire_lag,
            TIMESTAMPDIFF(MICROSECOND, expected_time, ended_at) / 1000 AS end_lag,
            UNIX_TIMESTAMP(ended_at) * 1000 AS ended_ms
       FROM task_instance WHERE ${where}`,
    params,
  );
  return rows.map((r) => ({
    taskName: r.task_name,
    expectedMs: r.expected_time.getTime(),
    state: r.state,
    reason: r.reason ?? null,
    runNo: Number(r.run_no),
    fireLag: Number(r.fire_lag),
    endLag: r.end_lag === null ? null : Number(r.end_lag),
    endedMs: r.ended_ms === null ? null : Number(r.ended_ms),
  }));
}

/**
 * MySQL bytes per instance (#24's "MySQL size per million instances"): data and index bytes of
 * each ax table with rows (`information_schema`, after `ANALYZE TABLE` so the figures are
 * current), divided by `instances`. InnoDB counts whole 16 KiB pages, so the figure is good to a
 * few percent only when the tables hold thousands of rows.
 */
export async function storagePerInstance(pool, instances) {
  const [tables] = await pool.query(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'`);
  for (const { t } of tables) await pool.query(`ANALYZE TABLE \`${t}\``);
  const [rows] = await pool.query(
    `SELECT table_name AS t, table_rows AS n, data_length + index_length AS bytes
       FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' ORDER BY bytes DESC`,
  );
  const byTable = {};
  let total = 0;
  for (const r of rows) {
    if (Number(r.n) === 0) continue;
    byTable[r.t] = Math.round(Number(r.bytes) / instances);
    total += Number(r.bytes);
  }
  return { instances, bytesPerInstance: Math.round(total / instances), byTable };
}

/**
 * What a missing-slot report needs: the missing slots per second and per task, and the task
 * counters of skipped and coalesced slots (misfire policy), so a lost slot can be told apart
 * from one the misfire policy coalesced on purpose.
 */
export async function missingDetail(pool, expectedKeys, instancesPerSlot) {
  const bySecond = {};
  const byTask = {};
  let n = 0;
  for (const key of expectedKeys) {
    if ((instancesPerSlot.get(key) ?? 0) > 0) continue;
    n += 1;
    const first = key.indexOf(':');
    const task = key.slice(0, first);
    const second = key.slice(first + 1, key.lastIndexOf(':'));
    bySecond[second] = (bySecond[second] ?? 0) + 1;
    byTask[task] = (byTask[task] ?? 0) + 1;
  }
  if (n === 0) return null;
  const [rows] = await pool.query('SELECT SUM(skipped_count) AS skipped, SUM(coalesced_count) AS coalesced FROM task');
  const tasks = Object.entries(byTask).sort((a, b) => b[1] - a[1]);
  // Holes beyond what each task's misfire counters account for (a slot skipped or coalesced on
  // purpose leaves no instance; the counters count since the task was created, so this can only
  // under-count losses of a task that also misfired outside the checked window).
  const [counters] = await pool.query('SELECT name, skipped_count + coalesced_count AS misfired FROM task WHERE name IN (?)', [tasks.map(([t]) => t)]);
  const misfired = new Map(counters.map((r) => [r.name, Number(r.misfired)]));
  const unexplained = tasks.reduce((sum, [task, holes]) => sum + Math.max(0, holes - (misfired.get(task) ?? 0)), 0);
  return {
    missing: n,
    unexplainedByMisfire: unexplained,
    bySecond,
    tasksWithMissing: tasks.length,
    worstTasks: tasks.slice(0, 5),
    taskSkippedCount: Number(rows[0]?.skipped ?? 0),
    taskCoalescedCount: Number(rows[0]?.coalesced ?? 0),
  };
}
