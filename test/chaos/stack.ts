/**
 * One drill's world: a PRIVATE MariaDB, Redis and RabbitMQ (own ports and temp dirs; the shared
 * servers on 3306/6379/5672 are never touched), the load (200 `http` tasks every 2 s to the
 * sink), and real service processes (schedulers, brokers, workers, one admin-api) started from
 * `dist/`. The workers are ENROLLED, as in production (issue #44): the stack makes one enrollment
 * through its admin-api and starts every worker from that credential file and admin-api's URL
 * alone (no master secret, no MySQL, server URLs without logins); a worker's id is
 * `<enrollment id>.<local id>` (`stack.workerId('worker-1')`), and so is its service's name.
 * With `topology.mysql: 'primary-replica'` the MariaDB is a replicated pair behind a TCP proxy
 * (mysql-pair.ts), for the failover drill.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { RowDataPacket } from 'mysql2';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { insertTask } from '@ax/store';
import {
  createTestDatabase,
  createTestEnrollment,
  enrolledWorkerEnv,
  startMariaDb,
  startRabbitMq,
  startRabbitMqCluster,
  startRedisServer,
  startService,
  stopAllProcesses,
  uniqueNamespace,
  type ManagedProcess,
  type MariaDbServer,
  type PrivateRabbitMq,
  type PrivateRabbitMqCluster,
  type PrivateRedis,
  type TestDatabase,
} from '@ax/testing';
import { startMysqlPair, type MysqlPair } from './mysql-pair.js';
import { startSink, type Sink } from './sink.js';
import type { SlotInstance } from './stats.js';

/** Tasks of the load. */
export const TASKS = 200;
/** Every task fires every 2 s: `*\/2 * * * * *` (6 fields, seconds first). */
export const PERIOD_MS = 2_000;
export const CRON = '*/2 * * * * *';
/** Sink calls per second at the nominal load. */
export const NOMINAL_CALLS_PER_SECOND = (TASKS * 1_000) / PERIOD_MS;
/** How long the sink holds each call before answering success: jobs really run for a while. */
export const SINK_HOLD_MS = 200;

/**
 * Short timings so drills are fast (defaults in docs/configuration.md):
 * - lease 5 s (default 15), heartbeat 1 s (5), lost-worker grace 2 s (10): a dead or frozen
 *   worker's jobs are taken over after about 7–8 s;
 * - fire lock TTL 5 s (30): the re-scan after a scheduler dies holding locks starts sooner;
 * - worker clock check every 1 s (30 s): the faketime worker notices its skew at once;
 * - timed-transition scans every 500 ms (1000);
 * - shutdown grace 5 s (30); ACK timeout stays 5 s (default; a loaded 2-core machine needs it).
 */
export const TIMINGS: Readonly<Record<string, string>> = Object.freeze({
  AX_LEASE_TTL_MS: '5000',
  AX_HEARTBEAT_INTERVAL_MS: '1000',
  AX_LOST_WORKER_GRACE_MS: '2000',
  AX_FIRE_LOCK_TTL_MS: '5000',
  AX_WORKER_CLOCK_CHECK_MS: '1000',
  AX_TIMERS_POLL_MS: '500',
  AX_SHUTDOWN_GRACE_S: '5',
});

/**
 * `AX_CHAOS_TIMINGS=default` runs the drills with the production lease, heartbeat, grace and
 * fire-lock timings (to measure recovery against the goals as operators will see it); the
 * clock check stays at 1 s so drill 7 still notices its skew at once.
 */
function drillTimings(): Readonly<Record<string, string>> {
  if (process.env.AX_CHAOS_TIMINGS !== 'default') return TIMINGS;
  return { AX_WORKER_CLOCK_CHECK_MS: '1000', AX_SHUTDOWN_GRACE_S: '5' };
}

/** libfaketime of Debian's `faketime` package. */
export const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/** A started service. */
export type Service = ManagedProcess & { readonly port: number; readonly baseUrl: string };

/** Shape of a drill's processes. */
export interface Topology {
  readonly schedulers?: number;
  readonly brokers?: number;
  readonly workers?: number;
  /** RabbitMQ nodes: 1 (default) a private node; more a private cluster, whose URLs every service gets in `AX_AMQP_URL`. */
  readonly rabbitmqNodes?: number;
  /**
   * `single` (default): one private MariaDB, services connect as root. `primary-replica`: a
   * primary, a GTID replica of it and a TCP proxy in front (the writer VIP / DNS name), services
   * connect through the proxy as a user without SUPER ({@link MysqlPair}).
   */
  readonly mysql?: 'single' | 'primary-replica';
}


/**
 * Extra load on top of the 200 `http` tasks: `shellTasks` `shell` tasks on the same cron, each
 * printing `shellOutputLines` lines (~100 bytes each; half, then `shellSleepS` seconds of sleep,
 * then the rest: its output goes through the log outbox while it runs) and then POSTing its slot
 * to the sink with `curl`, so it is counted like an `http` call. Its `X-Ax-Worker` is
 * `pid:<worker pid>` (a job does not get the worker id; `workerOfCall` maps it).
 */
export interface Load {
  readonly shellTasks?: number;
  readonly shellOutputLines?: number;
  readonly shellSleepS?: number;
}

/** The program of a drill's `shell` task: `sh -c SCRIPT ax-chaos <sink url> <lines> <sleep s>`. */
const SHELL_JOB = [
  'out() { while [ $i -lt "$1" ]; do echo "chaos output $AX_TASK_NAME $AX_EXECUTION_ID line $i: the quick brown fox jumps over the lazy dog"; i=$((i+1)); done; }',
  'i=0',
  'out $(($2 / 2))',
  'echo "chaos stderr $AX_EXECUTION_ID" >&2',
  '[ "$3" = 0 ] || sleep "$3"',
  'out "$2"',
  'exec curl -sS -f -o /dev/null --max-time 15 -H "content-type: application/json" -H "x-ax-worker: pid:$PPID" ' +
    '-d "{\\"taskName\\":\\"$AX_TASK_NAME\\",\\"expectedTime\\":\\"$AX_EXPECTED_TIME\\",\\"executionId\\":\\"$AX_EXECUTION_ID\\",\\"instanceId\\":\\"$AX_INSTANCE_ID\\",\\"attempt\\":$AX_ATTEMPT}" "$1"',
].join('\n');

/** The worker a sink call came from (its full id): its `X-Ax-Worker`, or for a `shell` job (`pid:<n>`) the worker of that pid. */
export function workerOfCall(stack: Pick<Stack, 'workers'>, workerId: string): string {
  if (!workerId.startsWith('pid:')) return workerId;
  const pid = Number(workerId.slice(4));
  return stack.workers.find((w) => w.pid === pid)?.name ?? workerId;
}

/** Extra variables of worker `index` (1-based; e.g. libfaketime); `dir` is the drill's temp dir. */
export type WorkerExtraEnv = (index: number, dir: string) => Readonly<Record<string, string>> | undefined;

/** The drill's world. */
export interface Stack {
  readonly namespace: string;
  readonly mariadb: MariaDbServer;
  readonly redis: PrivateRedis;
  /** The RabbitMQ node (with a cluster: node 0). */
  readonly rabbit: PrivateRabbitMq;
  /** The private cluster, when `topology.rabbitmqNodes` > 1. */
  readonly rabbitCluster: PrivateRabbitMqCluster | undefined;
  /** The primary, replica and proxy, when `topology.mysql` is `primary-replica` (then `mariadb` is the primary). */
  readonly mysqlPair: MysqlPair | undefined;
  readonly db: TestDatabase;
  readonly sink: Sink;
  readonly taskNames: readonly string[];
  readonly dir: string;
  readonly schedulers: Service[];
  readonly brokers: Service[];
  /** The workers; each one's `name` is its full worker id `<enrollment id>.<local id>`. */
  readonly workers: Service[];
  /** The admin-api the workers enrolled at and ask for their enrollment (AX_ADMIN_URL). */
  readonly adminApi: Service;
  /** The enrollment every worker belongs to. */
  readonly enrollmentId: string;
  /** The full id of the worker started as `localId` (`<enrollment id>.<localId>`). */
  workerId(localId: string): string;
  /** Variables every scheduler, broker and admin-api gets (workers get {@link enrolledWorkerEnv} of it). */
  readonly env: Readonly<Record<string, string>>;
  startBroker(name: string): Promise<Service>;
  /** Starts an enrolled worker with AX_WORKER_ID `localId`; its service is named by its full id. */
  startWorker(localId: string, extra?: Readonly<Record<string, string>>): Promise<Service>;
  /** Window slots' instances, `expected_time` in `[fromMs, toMs)`. */
  instances(fromMs: number, toMs: number): Promise<SlotInstance[]>;
  /** SUCCESS instances with `expected_time` in `[fromMs, toMs)`. */
  succeeded(fromMs: number, toMs: number): Promise<number>;
  query<T extends RowDataPacket>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Output of every service process (for failure messages and findings). */
  dumpOutput(): string;
  /** Error-level log lines of the services, counted by service and message (kept output only). */
  errorSummary(): string[];
  cleanup(): Promise<void>;
}

/** True when the port on 127.0.0.1 refuses a TCP connection (ECONNREFUSED). */
export function portRefuses(port: number, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (refused: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(refused);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(false));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED'));
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function settleAll(steps: ReadonlyArray<() => Promise<unknown>>): Promise<string[]> {
  const errors: string[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      errors.push(error instanceof Error ? error.message : String(error));
    }
  }
  return errors;
}

/** Starts the servers, the sink, the load's tasks and the services. */
export async function startStack(topology: Topology = {}, workerExtraEnv?: WorkerExtraEnv, load: Load = {}): Promise<Stack> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-chaos-'));
  const namespace = uniqueNamespace('axchaos');
  const cleanups: Array<() => Promise<unknown>> = [];
  const services: Service[] = [];
  const schedulers: Service[] = [];
  const brokers: Service[] = [];
  const workers: Service[] = [];
  let stack: Stack | undefined;

  const cleanup = async (): Promise<void> => {
    const errors = await settleAll([
      async () => {
        await Promise.allSettled(services.map((s) => s.stop({ graceMs: 3_000 })));
        await stopAllProcesses({ graceMs: 3_000 });
      },
      ...cleanups.reverse(),
      () => {
        rmSync(dir, { recursive: true, force: true });
        return Promise.resolve();
      },
    ]);
    if (errors.length > 0) throw new Error(`drill cleanup: ${errors.join('; ')}`);
  };

  try {
    const nodes = topology.rabbitmqNodes ?? 1;
    const [mariadbOrPair, redis, rabbitOrCluster, sink] = await Promise.all([
      topology.mysql === 'primary-replica' ? startMysqlPair(dir) : startMariaDb({ parentDir: dir }),
      startRedisServer(),
      // The management plugin: admin-api makes the enrollment's RabbitMQ user through it.
      nodes > 1 ? startRabbitMqCluster({ size: nodes, management: true }) : startRabbitMq({ management: true }),
      startSink({ holdMs: SINK_HOLD_MS }),
    ]);
    const rabbitCluster = 'nodes' in rabbitOrCluster ? rabbitOrCluster : undefined;
    const mysqlPair = 'proxy' in mariadbOrPair ? mariadbOrPair : undefined;
    const mariadb: MariaDbServer = mysqlPair === undefined ? (mariadbOrPair as MariaDbServer) : mysqlPair.primary;
    const rabbit: PrivateRabbitMq = rabbitCluster === undefined ? (rabbitOrCluster as PrivateRabbitMq) : clusterNodeZero(rabbitCluster);
    cleanups.push(
      () => (mysqlPair ?? mariadb).cleanup(),
      () => redis.cleanup(),
      () => rabbit.cleanup(),
      () => sink.close(),
    );
    // With a pair, the drill's own queries go through the proxy too: they follow the failover.
    const serverUrl = mysqlPair === undefined ? mariadb.url : `mysql://root@127.0.0.1:${mysqlPair.proxy.port}`;
    const db = await createTestDatabase({ serverUrl, poolOptions: { connectionLimit: 4 } });
    cleanups.push(() => db.pool.end().catch(() => undefined));
    const mysqlUrl = mysqlPair === undefined ? db.url : await mysqlPair.grantServiceUser(db.name);

    const taskNames: string[] = [];
    for (let i = 0; i < TASKS; i++) {
      const name = `chaos_${String(i).padStart(3, '0')}`;
      taskNames.push(name);
      await insertTask(
        db.pool,
        parseTaskDefinitionOrThrow({
          name,
          schedule: { type: 'cron', expr: CRON },
          exec: { type: 'http', url: `${sink.url}/job` },
          // Every slot must run: no coalescing (serial) and no dropped misfires.
          block: 'parallel',
          misfire: { policy: 'catch_up', max: 1_000 },
          timeoutSeconds: 20,
          retry: { max: 5, backoffSeconds: 1, factor: 1, jitterSeconds: 0 },
        }),
      );
    }
    for (let i = 0; i < (load.shellTasks ?? 0); i++) {
      const name = `chaos_sh_${String(i).padStart(3, '0')}`;
      taskNames.push(name);
      await insertTask(
        db.pool,
        parseTaskDefinitionOrThrow({
          name,
          schedule: { type: 'cron', expr: CRON },
          exec: { type: 'shell', command: ['sh', '-c', SHELL_JOB, 'ax-chaos', `${sink.url}/job`, String(load.shellOutputLines ?? 40), String(load.shellSleepS ?? 0)] },
          block: 'parallel',
          misfire: { policy: 'catch_up', max: 1_000 },
          timeoutSeconds: 20,
          retry: { max: 5, backoffSeconds: 1, factor: 1, jitterSeconds: 0 },
        }),
      );
    }

    const env: Record<string, string> = {
      AX_MYSQL_URL: mysqlUrl,
      AX_REDIS_URL: redis.url,
      AX_AMQP_URL: rabbitCluster === undefined ? rabbit.url : rabbitCluster.urls.join(','),
      AX_NAMESPACE: namespace,
      AX_LOG_LEVEL: 'warn',
      AX_EXECUTOR_SECRET: 'chaos-executor-secret-0123456789',
      AX_HTTP_EXECUTOR_ALLOW: '127.0.0.1',
      AX_ALERT_WEBHOOK_URL: `${sink.url}/alerts`,
      ...drillTimings(),
    };
    const start = async (service: 'scheduler' | 'broker' | 'worker' | 'admin-api', name: string, serviceEnv: Readonly<Record<string, string | undefined>>): Promise<Service> => {
      const proc = await startService(service, { name, env: serviceEnv, readyTimeoutMs: 60_000 });
      services.push(proc);
      return proc;
    };
    const startBroker = async (name: string): Promise<Service> => {
      const b = await start('broker', name, env);
      brokers.push(b);
      return b;
    };

    // One admin-api per stack: the enrollment is made there and the workers ask it for their
    // enrollment (start-up and every 30 s); its reconciler keeps the enrollment's logins.
    const adminToken = `axt_chaos_${namespace}`;
    if (rabbit.managementUrl === undefined) throw new Error('the private RabbitMQ has no management API');
    const adminApi = await start('admin-api', 'admin-api', { ...env, AX_ADMIN_TOKEN: adminToken, AX_AMQP_MANAGEMENT_URL: rabbit.managementUrl });
    // The load's tasks are team `default`'s.
    const enrollment = await createTestEnrollment({ adminUrl: adminApi.baseUrl, adminToken, name: 'chaos-workers', teams: ['default'], credentialFile: path.join(dir, 'worker-credential') });
    const workerEnv = enrolledWorkerEnv(env, enrollment, adminApi.baseUrl);
    const workerId = (localId: string): string => `${enrollment.id}.${localId}`;
    const startWorker = async (localId: string, extra: Readonly<Record<string, string>> = {}): Promise<Service> => {
      const w = await start('worker', workerId(localId), { ...workerEnv, AX_WORKER_ID: localId, AX_WORKER_SLOTS: '32', AX_WORKER_DATA_DIR: path.join(dir, 'workers'), ...extra });
      workers.push(w);
      return w;
    };

    for (let i = 1; i <= (topology.brokers ?? 2); i++) await startBroker(`broker-${i}`);
    for (let i = 1; i <= (topology.workers ?? 3); i++) await startWorker(`worker-${i}`, workerExtraEnv?.(i, dir));
    for (let i = 1; i <= (topology.schedulers ?? 2); i++) schedulers.push(await start('scheduler', `scheduler-${i}`, env));

    const query = async <T extends RowDataPacket>(sql: string, params: unknown[] = []): Promise<T[]> => {
      const [rows] = await db.pool.query<T[]>(sql, params);
      return rows;
    };
    stack = {
      namespace,
      mariadb,
      redis,
      rabbit,
      rabbitCluster,
      mysqlPair,
      db,
      sink,
      taskNames,
      dir,
      schedulers,
      brokers,
      workers,
      adminApi,
      enrollmentId: enrollment.id,
      workerId,
      env,
      startBroker,
      startWorker,
      async instances(fromMs, toMs) {
        const rows = await query(
          `SELECT id, task_name, expected_time, state, ended_at FROM task_instance
            WHERE expected_time >= ? AND expected_time < ?`,
          [new Date(fromMs), new Date(toMs)],
        );
        return rows.map((r) => ({
          instanceId: String(r.id),
          taskName: String(r.task_name),
          expectedMs: (r.expected_time as Date).getTime(),
          state: String(r.state),
          endedMs: r.ended_at === null ? null : (r.ended_at as Date).getTime(),
        }));
      },
      async succeeded(fromMs, toMs) {
        const rows = await query(
          `SELECT COUNT(*) AS n FROM task_instance WHERE expected_time >= ? AND expected_time < ? AND state = 'SUCCESS'`,
          [new Date(fromMs), new Date(toMs)],
        );
        return Number(rows[0]?.n ?? 0);
      },
      query,
      dumpOutput: () => services.map((s) => `--- ${s.name} (pid ${s.pid}${s.exitInfo ? `, exited ${s.exitInfo.signal ?? s.exitInfo.code}` : ''}) ---\n${s.output()}`).join('\n'),
      errorSummary() {
        const counts = new Map<string, number>();
        for (const svc of services) {
          for (const line of svc.lines()) {
            if (!line.text.includes('"level":"error"') && !line.text.includes('"level":"fatal"')) continue;
            let message = line.text.slice(0, 120);
            try {
              const parsed = JSON.parse(line.text) as { msg?: string; err?: { message?: string } };
              message = `${parsed.msg ?? ''}${parsed.err?.message !== undefined ? `: ${parsed.err.message}` : ''}`.slice(0, 120);
            } catch {
              // not JSON: keep the raw start of the line
            }
            const key = `${svc.name}: ${message}`;
            counts.set(key, (counts.get(key) ?? 0) + 1);
          }
        }
        return [...counts.entries()].map(([key, n]) => `${n}× ${key}`);
      },
      cleanup,
    };
    return stack;
  } catch (error) {
    await cleanup().catch(() => undefined);
    throw error;
  }
}

/** Node 0 of a cluster seen as the stack's `rabbit`; `cleanup()` removes the whole cluster. */
function clusterNodeZero(cluster: PrivateRabbitMqCluster): PrivateRabbitMq {
  const node = cluster.nodes[0];
  if (node === undefined) throw new Error('a cluster without nodes');
  return {
    url: node.url,
    port: node.port,
    managementUrl: node.managementUrl,
    get running() {
      return node.running;
    },
    start: () => node.start(),
    stop: () => node.stop(),
    cleanup: () => cluster.cleanup(),
  };
}

/** A file whose content is libfaketime's offset, e.g. `+0` or `+10s` (re-read every second). */
export function faketimeEnv(file: string, initial = '+0'): Record<string, string> {
  if (!existsSync(LIBFAKETIME)) throw new Error(`${LIBFAKETIME} is missing: install Debian's faketime package`);
  writeFileSync(file, `${initial}\n`);
  return {
    LD_PRELOAD: LIBFAKETIME,
    FAKETIME_TIMESTAMP_FILE: file,
    FAKETIME_CACHE_DURATION: '1',
    // Only the wall clock moves: timers (monotonic) keep running normally.
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}
