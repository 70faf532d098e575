/**
 * Test fixtures of the broker (excluded from the build): a broker engine on a fresh database,
 * Redis namespace and AMQP namespace, and a scripted protocol peer that plays a worker — it
 * consumes its queue, keeps a registry entry and sends ack / refusal / result messages in
 * exactly the order a test needs (results before ACKs, late results of superseded executions).
 */
import { Redis as IORedis } from 'ioredis';
import {
  amqpUserOf,
  controlQueueArguments,
  createBus,
  defaultAmqpConnect,
  defaultManagementUrl,
  deleteEnrollmentBusUser,
  putEnrollmentBusUser,
  vhostOfAmqpUrl,
  workerQueueArguments,
  type AmqpConnectFn,
  type Bus,
  type BusAdminOptions,
} from '@ax/bus';
import {
  MESSAGE_VERSION,
  encodeMessage,
  parseMessage,
  parseTaskDefinitionOrThrow,
  busUserOf,
  credentialHash,
  enrolledWorkerId,
  enrollmentLoginPassword,
  newWorkerCredential,
  redisUserOf,
  type CancelMessage,
  type DispatchItem,
  type LogMessage,
  type RefusalReason,
  type ResultItem,
} from '@ax/core';
import { createLogger, createMetrics, redisKeys, silentLogger, type Metrics, type Redis, type RedisKeys } from '@ax/kit';
import { deleteEnrollmentRedisUser, publishRegistration, putEnrollmentRedisUser, removeRegistration } from '@ax/redis';
import { insertEnrollment, insertTask, withTransaction, type TaskRecord } from '@ax/store';
import { createTestAmqp, createTestDatabase, createTestRedis, uniqueNamespace, waitFor, type TestAmqp, type TestDatabase, type TestRedis } from '@ax/testing';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { createBroker, type Broker } from './broker.js';
import { resolveBrokerConfig, type BrokerConfig } from './config.js';

/** Short timings so protocol tests run in seconds (operating parameters, not switches). */
export const TEST_TIMINGS: Partial<BrokerConfig> = {
  ackTimeoutMs: 1_000,
  ackGraceMs: 500,
  leaseTtlMs: 1_500,
  // A peer heartbeating every 200 ms (ProtocolPeer.heartbeat) then proves within the grace that it does not hold a dispatch.
  workerSkewLimitMs: 100,
  lostWorkerGraceMs: 500,
  noWorkerAlertMs: 1_000,
  dispatchPollMs: 100,
  timersPollMs: 200,
  registryCacheMs: 100,
  alertPollMs: 200,
  backlogPollMs: 60_000,
  // The backlog scan writes WAITING events; tests of it run passes themselves (backlog-scan.test.ts).
  backlogScanMs: 600_000,
};

/** A scripted worker. */
export class ProtocolPeer {
  readonly dispatches: DispatchItem[] = [];
  readonly cancels: CancelMessage[] = [];
  readonly running = new Set<string>();
  /** Of `running`, those listed as held (R9 prefetch: ACKed, waiting for a slot, not started). */
  readonly held = new Set<string>();
  private cancelConsumers: Array<() => Promise<void>> = [];
  private heartbeatTimer: NodeJS.Timeout | undefined;
  /** When set, every dispatch is ACKed and answered with this outcome at once. */
  autoOutcome: ResultItem['outcome'] | undefined;

  constructor(
    private readonly h: BrokerHarness,
    readonly workerId: string,
    readonly tags: string[],
    readonly slots: number,
  ) {}

  /** Declares the queues, consumes them and registers in the registry. */
  async start(): Promise<this> {
    await this.h.peerBus.assertWorkerQueues(this.workerId);
    const t = this.h.peerBus.topology;
    const dispatch = await this.h.peerBus.consume(t.workerQueue(this.workerId), async (m) => {
      const parsed = parseMessage(m.body);
      if (parsed.ok && parsed.message.kind === 'dispatch') {
        this.dispatches.push(...parsed.message.items);
        if (this.autoOutcome !== undefined) {
          await this.ack(parsed.message.items);
          await this.result(parsed.message.items, this.autoOutcome);
        }
      }
      return 'ack';
    });
    const control = await this.h.peerBus.consume(t.controlQueue(this.workerId), async (m) => {
      const parsed = parseMessage(m.body);
      if (parsed.ok && parsed.message.kind === 'cancel') this.cancels.push(parsed.message);
      return 'ack';
    });
    this.cancelConsumers = [() => dispatch.cancel(), () => control.cancel()];
    await this.register();
    await this.h.redis.redis.publish(this.h.keys.channels.workersChanged, this.workerId);
    await new Promise((resolve) => setTimeout(resolve, 150)); // past the registry cache
    return this;
  }

  /** Writes the registry entry listing `running` (the lease, R14), expiring after `ttlMs`. */
  async register(ttlMs = 60_000): Promise<void> {
    await publishRegistration(
      this.h.redis.redis,
      this.h.keys,
      {
        workerId: this.workerId,
        host: 'test',
        tags: this.tags,
        cores: 4,
        slots: this.slots,
        running: 0,
        runningExecutionIds: [...this.running],
        ...(this.held.size === 0 ? {} : { held: [...this.held].map((executionId) => ({ executionId, heldMs: 0 })) }),
        avgDurationMs5m: 0,
        draining: false,
        version: 'test',
        startedAt: new Date().toISOString(),
        at: new Date().toISOString(),
      },
      ttlMs,
    );
  }

  /**
   * Rewrites the registry entry every `periodMs`, as a live worker does (its `at` moves on): a
   * peer that stays silent about a dispatch while heartbeating is a worker that does not hold it.
   * A `ttlMs` near the lease makes the broker renew leases as often as a real worker's does.
   */
  heartbeat(periodMs = 200, ttlMs = 60_000): this {
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = setInterval(() => void this.register(ttlMs).catch(() => undefined), periodMs);
    return this;
  }

  /** Leaves the registry and stops consuming. */
  async stop(): Promise<void> {
    clearInterval(this.heartbeatTimer);
    await removeRegistration(this.h.redis.redis, this.h.keys, this.workerId);
    for (const cancel of this.cancelConsumers) await cancel();
    this.cancelConsumers = [];
  }

  /** Waits until `n` dispatch items arrived in total. */
  async waitDispatches(n: number, timeoutMs = 10_000): Promise<DispatchItem[]> {
    await waitFor(() => this.dispatches.length >= n, { description: `${n} dispatches on ${this.workerId} (have ${this.dispatches.length})`, timeoutMs });
    return this.dispatches.slice(0, n);
  }

  private async send(body: Buffer): Promise<void> {
    await this.h.peerBus.publish(this.h.peerBus.topology.eventsExchange, 'reply', body);
  }

  async ack(items: readonly DispatchItem[]): Promise<void> {
    for (const i of items) this.running.add(i.executionId);
    await this.register(); // the lease lists what runs (R14)
    await this.send(
      encodeMessage({
        v: MESSAGE_VERSION,
        kind: 'ack',
        workerId: this.workerId,
        items: items.map((i) => ({ executionId: i.executionId, instanceId: i.instanceId, at: new Date().toISOString() })),
      }),
    );
  }

  /**
   * ACKs `items` and waits until the broker has applied the ACK (every instance RUNNING). A
   * result sent right after a bare `ack` may be applied first (R16: results may overtake ACKs,
   * the ACK is then a no-op and no ACKED event is written); a test that asserts the ACKED event
   * or a RUNNING phase sends its result only after this.
   */
  async ackApplied(items: readonly DispatchItem[], timeoutMs = 10_000): Promise<void> {
    await this.ack(items);
    for (const i of items) await this.h.waitState(i.instanceId, 'RUNNING', timeoutMs);
  }

  async refuse(items: readonly DispatchItem[], reason: RefusalReason): Promise<void> {
    await this.send(
      encodeMessage({
        v: MESSAGE_VERSION,
        kind: 'refusal',
        workerId: this.workerId,
        items: items.map((i) => ({ executionId: i.executionId, instanceId: i.instanceId, reason })),
      }),
    );
  }

  async result(items: readonly DispatchItem[], outcome: ResultItem['outcome'], extra: Partial<ResultItem> = {}): Promise<void> {
    for (const i of items) this.running.delete(i.executionId);
    await this.register();
    await this.send(
      encodeMessage({
        v: MESSAGE_VERSION,
        kind: 'result',
        workerId: this.workerId,
        items: items.map((i) => ({
          executionId: i.executionId,
          instanceId: i.instanceId,
          outcome,
          exitCode: outcome === 'SUCCESS' ? 0 : 1,
          outputTail: 'done\n',
          endedAt: new Date().toISOString(),
          ...extra,
        })),
      }),
    );
  }
}

/** A broker on fresh servers, with helpers. */
export interface BrokerHarness {
  readonly namespace: string;
  readonly keys: RedisKeys;
  readonly db: TestDatabase;
  readonly redis: TestRedis;
  readonly amqp: TestAmqp;
  readonly bus: Bus;
  readonly peerBus: Bus;
  readonly broker: Broker;
  /** The main broker's metrics. */
  readonly metrics: Metrics;
  task(name: string, fields?: Record<string, unknown>): Promise<TaskRecord>;
  /** Inserts a PENDING instance and wakes the brokers (`quiet`: no wake-up, for a test that drives the claim rounds itself). */
  instance(
    task: TaskRecord,
    fields?: { trigger?: string; expectedTime?: Date; maxAttempts?: number; priority?: number; rerunBatchId?: string | number; quiet?: boolean },
  ): Promise<string>;
  peer(workerId: string, tags: string[], slots?: number): Promise<ProtocolPeer>;
  /** Another broker engine (own bus) on the same database, Redis and namespace. */
  extraBroker(brokerId: string): Promise<Broker>;
  row(instanceId: string): Promise<Record<string, unknown>>;
  events(instanceId: string): Promise<string[]>;
  waitState(instanceId: string, state: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Starts a broker engine (and its loops) on fresh servers. */
export async function startBrokerHarness(
  overrides: Partial<BrokerConfig> = {},
  options: {
    connect?: AmqpConnectFn;
    /** The main broker's own Redis client (a test that breaks it); the harness's client by default. */
    brokerRedis?: Redis;
  } = {},
): Promise<BrokerHarness> {
  const namespace = uniqueNamespace('axbrk');
  const keys = redisKeys(namespace);
  const db = await createTestDatabase();
  const redis = await createTestRedis(namespace);
  const amqp = await createTestAmqp(namespace);
  const logger = process.env.AX_TEST_LOG === '1' ? createLogger({ service: 'broker-test', level: 'debug' }) : silentLogger();
  const bus = createBus({
    url: amqp.url,
    namespace,
    logger,
    name: `broker-${namespace}`,
    maxRequeues: 1_000,
    reconnectInitialDelayMs: 100,
    userId: amqpUserOf(amqp.url) ?? 'guest',
    ...(options.connect !== undefined ? { connect: options.connect } : {}),
  });
  const peerBus = createBus({ url: amqp.url, namespace, logger, name: `peer-${namespace}` });
  await peerBus.start();
  const config = resolveBrokerConfig({ namespace, brokerId: 'test-broker' }, { ...TEST_TIMINGS, ...overrides });
  const metrics = createMetrics({ service: 'broker', defaultMetrics: false });
  const broker = createBroker({ config, pool: db.pool, redis: options.brokerRedis ?? redis.redis, bus, logger, metrics });
  await broker.start();
  const peers: ProtocolPeer[] = [];
  const extras: Array<{ broker: Broker; bus: Bus }> = [];
  let taskSeq = 0;

  const h: BrokerHarness = {
    namespace,
    keys,
    db,
    redis,
    amqp,
    bus,
    peerBus,
    broker,
    metrics,
    async task(name, fields = {}) {
      taskSeq++;
      return insertTask(db.pool, parseTaskDefinitionOrThrow({ name, schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] }, ...fields }));
    },
    async instance(task, fields = {}) {
      const expected = fields.expectedTime ?? new Date(Date.now() - 10 + taskSeq++);
      // one transaction: the running broker can claim the instance only once CREATED is written
      const result = await withTransaction(db.pool, async (tx) => {
        const [inserted] = await tx.query<ResultSetHeader>(
          `INSERT INTO task_instance (task_id, task_name, team, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority, rerun_batch_id)
           VALUES (?, ?, ?, ?, ?, ?, 'PENDING', 1, ?, NOW(3), '{}', ?, ?)`,
          [
            task.id,
            task.definition.name,
            task.definition.team,
            expected,
            expected.toISOString().slice(0, 10),
            fields.trigger ?? 'schedule',
            fields.maxAttempts ?? task.definition.retry.max + 1,
            fields.priority ?? task.definition.priority,
            fields.rerunBatchId ?? null,
          ],
        );
        await tx.query(`INSERT INTO event_log (instance_id, type) VALUES (?, 'CREATED')`, [inserted.insertId]);
        return inserted;
      });
      if (fields.quiet !== true) await redis.redis.publish(keys.channels.instancesReady, '{}');
      return String(result.insertId);
    },
    async peer(workerId, tags, slots = 4) {
      const p = await new ProtocolPeer(h, workerId, tags, slots).start();
      peers.push(p);
      return p;
    },
    async extraBroker(brokerId) {
      const extraBus = createBus({ url: amqp.url, namespace, logger, name: `${brokerId}-${namespace}`, maxRequeues: 1_000, userId: amqpUserOf(amqp.url) ?? 'guest' });
      const extraConfig = resolveBrokerConfig({ namespace, brokerId }, { ...TEST_TIMINGS, ...overrides });
      const extra = createBroker({ config: extraConfig, pool: db.pool, redis: redis.redis, bus: extraBus, logger, metrics: createMetrics({ service: 'broker', defaultMetrics: false }) });
      await extra.start();
      extras.push({ broker: extra, bus: extraBus });
      return extra;
    },
    async row(instanceId) {
      const [rows] = await db.pool.query<RowDataPacket[]>('SELECT * FROM task_instance WHERE id = ?', [instanceId]);
      return rows[0] as Record<string, unknown>;
    },
    async events(instanceId) {
      const [rows] = await db.pool.query<RowDataPacket[]>('SELECT type FROM event_log WHERE instance_id = ? ORDER BY id', [instanceId]);
      return rows.map((r) => String(r.type));
    },
    async waitState(instanceId, state, timeoutMs = 10_000) {
      return waitFor(
        async () => {
          const row = await h.row(instanceId);
          return row.state === state ? row : null;
        },
        { description: `instance ${instanceId} ${state}`, timeoutMs, intervalMs: 50 },
      );
    },
    async close() {
      for (const e of extras) {
        await e.broker.stop();
        await e.bus.close();
      }
      await broker.stop();
      for (const p of peers) await p.stop();
      await bus.close();
      await peerBus.close();
      await amqp.cleanup();
      await redis.cleanup();
      await db.drop();
    },
  };
  return h;
}

/** The master secret the enrollment fixtures derive their logins from. */
export const TEST_MASTER_SECRET = 'broker-test-master-secret';

/**
 * A worker enrollment made as admin-api makes one (R24): its row, its RabbitMQ user (management
 * API) and its Redis ACL user, with passwords derived from {@link TEST_MASTER_SECRET}. `remove()`
 * deletes both users (as a revocation does), idempotently.
 */
export class TestEnrollment {
  readonly admin: BusAdminOptions;
  constructor(
    private readonly h: BrokerHarness,
    readonly id: string,
  ) {
    this.admin = { managementUrl: process.env['AX_AMQP_MANAGEMENT_URL'] ?? defaultManagementUrl(h.amqp.url), vhost: vhostOfAmqpUrl(h.amqp.url) };
  }

  get busUser(): string {
    return busUserOf(this.h.namespace, this.id);
  }

  static async create(h: BrokerHarness, id: string, teams: readonly string[]): Promise<TestEnrollment> {
    const e = new TestEnrollment(h, id);
    await insertEnrollment(h.db.pool, { id, name: id, teams, tags: [], credentialHash: credentialHash(newWorkerCredential(id)), createdBy: 'test' });
    await putEnrollmentBusUser(e.admin, h.namespace, id, enrollmentLoginPassword(TEST_MASTER_SECRET, 'amqp', h.namespace, id));
    await putEnrollmentRedisUser(h.redis.redis, h.keys, id, enrollmentLoginPassword(TEST_MASTER_SECRET, 'redis', h.namespace, id));
    return e;
  }

  /** `amqp://` URL logging in as the enrollment's RabbitMQ user. */
  amqpUrl(): string {
    const url = new URL(this.h.amqp.url);
    url.username = encodeURIComponent(this.busUser);
    url.password = encodeURIComponent(enrollmentLoginPassword(TEST_MASTER_SECRET, 'amqp', this.h.namespace, this.id));
    return url.toString();
  }

  /** A Redis client logged in as the enrollment's ACL user. */
  redisClient(): Redis {
    const client = new IORedis(this.h.redis.url, {
      username: redisUserOf(this.h.namespace, this.id),
      password: enrollmentLoginPassword(TEST_MASTER_SECRET, 'redis', this.h.namespace, this.id),
      maxRetriesPerRequest: 1,
      lazyConnect: true,
      retryStrategy: () => null, // a deleted user is gone for good: no reconnect loop
    });
    client.on('error', () => undefined); // WRONGPASS once its user is deleted (revocation)
    return client;
  }

  /** Deletes its Redis user (and its workers' registry entries) and its RabbitMQ user (closing its connections). */
  async remove(): Promise<void> {
    await deleteEnrollmentRedisUser(this.h.redis.redis, this.h.keys, this.id);
    await deleteEnrollmentBusUser(this.admin, this.h.namespace, this.id);
  }
}

/**
 * A scripted enrolled worker that uses only what its enrollment may: it connects to RabbitMQ
 * with the enrollment's own login (declaring and consuming its own queues, unbound, publishing
 * replies with its validated `user_id`) and writes its registry entry with the enrollment's Redis
 * login. Every reply can claim any worker id, to play the attacker of R24.
 */
type ChannelModel = Awaited<ReturnType<AmqpConnectFn>>;
type ConfirmChannel = Awaited<ReturnType<ChannelModel['createConfirmChannel']>>;

export class EnrolledPeer {
  readonly workerId: string;
  readonly dispatches: DispatchItem[] = [];
  readonly running = new Set<string>();
  private conn: ChannelModel | undefined;
  private channel: ConfirmChannel | undefined;
  private redisClient: Redis | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly h: BrokerHarness,
    readonly enrollment: TestEnrollment,
    localId: string,
    readonly tags: string[],
    /** What its registry entry advertises (`AX_WORKER_TEAMS`); undefined = nothing. */
    readonly teams?: string[],
  ) {
    this.workerId = enrolledWorkerId(enrollment.id, localId);
  }

  async start(): Promise<this> {
    const t = this.h.peerBus.topology;
    this.conn = await defaultAmqpConnect(this.enrollment.amqpUrl(), {});
    this.conn.on('error', () => undefined);
    this.channel = await this.conn.createConfirmChannel();
    this.channel.on('error', () => undefined);
    await this.channel.assertQueue(t.workerQueue(this.workerId), { durable: true, arguments: workerQueueArguments(t, 120_000) });
    await this.channel.assertQueue(t.controlQueue(this.workerId), { durable: true, arguments: controlQueueArguments(t, 120_000) });
    const ch = this.channel;
    await ch.consume(t.workerQueue(this.workerId), (m) => {
      if (m === null) return;
      const parsed = parseMessage(m.content);
      if (parsed.ok && parsed.message.kind === 'dispatch') this.dispatches.push(...parsed.message.items);
      ch.ack(m);
    });
    await ch.consume(t.controlQueue(this.workerId), (m) => {
      if (m !== null) ch.ack(m);
    });
    this.redisClient = this.enrollment.redisClient();
    await this.redisClient.connect();
    await this.register();
    await this.h.redis.redis.publish(this.h.keys.channels.workersChanged, this.workerId);
    await new Promise((resolve) => setTimeout(resolve, 150));
    return this;
  }

  /** Writes its registry entry with the enrollment's Redis login. */
  async register(ttlMs = 60_000): Promise<void> {
    await publishRegistration(
      this.redisClient as Redis,
      this.h.keys,
      {
        workerId: this.workerId,
        host: 'test',
        tags: this.tags,
        ...(this.teams === undefined ? {} : { teams: this.teams }),
        cores: 4,
        slots: 4,
        running: this.running.size,
        runningExecutionIds: [...this.running],
        avgDurationMs5m: 0,
        draining: false,
        version: 'test',
        startedAt: new Date().toISOString(),
        at: new Date().toISOString(),
      },
      ttlMs,
    );
  }

  heartbeat(periodMs = 200, ttlMs = 60_000): this {
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = setInterval(() => void this.register(ttlMs).catch(() => undefined), periodMs);
    return this;
  }

  async waitDispatches(n: number, timeoutMs = 10_000): Promise<DispatchItem[]> {
    await waitFor(() => this.dispatches.length >= n, { description: `${n} dispatches on ${this.workerId} (have ${this.dispatches.length})`, timeoutMs });
    return this.dispatches.slice(0, n);
  }

  /** Publishes `body` to the events (or logs) exchange under its own validated user. */
  async send(body: Buffer, exchange: 'events' | 'logs' = 'events'): Promise<void> {
    const t = this.h.peerBus.topology;
    const ch = this.channel as ConfirmChannel;
    ch.publish(exchange === 'events' ? t.eventsExchange : t.logsExchange, '', body, { persistent: true, userId: this.enrollment.busUser, contentType: 'application/json' });
    await ch.waitForConfirms();
  }

  async ack(items: readonly DispatchItem[], claim = this.workerId): Promise<void> {
    for (const i of items) if (claim === this.workerId) this.running.add(i.executionId);
    await this.register();
    await this.send(encodeMessage({ v: MESSAGE_VERSION, kind: 'ack', workerId: claim, items: items.map((i) => ({ executionId: i.executionId, instanceId: i.instanceId, at: new Date().toISOString() })) }));
  }

  async result(items: readonly DispatchItem[], outcome: ResultItem['outcome'], claim = this.workerId): Promise<void> {
    for (const i of items) this.running.delete(i.executionId);
    await this.register();
    await this.send(
      encodeMessage({
        v: MESSAGE_VERSION,
        kind: 'result',
        workerId: claim,
        items: items.map((i) => ({ executionId: i.executionId, instanceId: i.instanceId, outcome, exitCode: outcome === 'SUCCESS' ? 0 : 1, endedAt: new Date().toISOString() })),
      }),
    );
  }

  async refuse(items: readonly DispatchItem[], reason: RefusalReason, claim = this.workerId): Promise<void> {
    await this.send(encodeMessage({ v: MESSAGE_VERSION, kind: 'refusal', workerId: claim, items: items.map((i) => ({ executionId: i.executionId, instanceId: i.instanceId, reason })) }));
  }

  /** One `log` message: a chunk `text` on stdout at offset 0 for each item. */
  async log(items: readonly DispatchItem[], text: string, claim = this.workerId): Promise<void> {
    const data = Buffer.from(text).toString('base64');
    const message: LogMessage = {
      v: MESSAGE_VERSION,
      kind: 'log',
      workerId: claim,
      items: items.map((i) => ({ part: 'chunk' as const, executionId: i.executionId, instanceId: i.instanceId, stream: 'stdout' as const, offset: 0, allOffset: 0, data })),
    };
    await this.send(encodeMessage(message), 'logs');
  }

  /** A bus heartbeat naming `claim`. */
  async busHeartbeat(claim = this.workerId): Promise<void> {
    const now = new Date().toISOString();
    await this.send(
      encodeMessage({ v: MESSAGE_VERSION, kind: 'heartbeat', workerId: claim, host: 'test', tags: this.tags, cores: 4, slots: 4, running: 0, runningExecutionIds: [], avgDurationMs5m: 0, draining: false, version: 'test', startedAt: now, at: now }),
    );
  }

  /** Stops heartbeating and closes its connections (its registry entry stays until removed or expired). */
  async stop(): Promise<void> {
    clearInterval(this.heartbeatTimer);
    await this.conn?.close().catch(() => undefined);
    this.conn = undefined;
    if (this.redisClient !== undefined) this.redisClient.disconnect();
    this.redisClient = undefined;
  }
}
