/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/**
 * Test harness: the app in-process on a free port, against a fresh test database and Redis
 * namespace, with a recording RabbitMQ publisher. Three tokens (viewer, operator, admin).
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { busTopology, defaultManagementUrl, vhostOfAmqpUrl, type BusAdminOptions } from '@ax/bus';
import { deriveExecutorKey, signV2 } from '@ax/core';
import { createMetrics, redisKeys, silentLogger, type Redis } from '@ax/kit';
import { insertApiToken, type StorePool } from '@ax/store';
import { createTestDatabase, createTestRedis, testAmqpUrl, uniqueNamespace, type TestDatabase, type TestRedis } from '@ax/testing';
import { createApp } from './app.js';
import { hashToken } from './auth.js';
import type { AppDepsInput } from './deps.js';
import { createApiMetrics } from './metrics.js';

export const EXECUTOR_SECRET = 'test-executor-secret-0123456789';

/**
 * Signature v2 headers of a business service of `team` calling `POST path` with `body`
 * (ADMIN-API.md "HTTP executors"); `key` overrides the team's derived key.
 */
export function signedBy(team: string, path: string, body: string, opts: { keyVersion?: number; timestampMs?: number; key?: string; method?: string } = {}): Record<string, string> {
  const keyVersion = opts.keyVersion ?? 1;
  const timestamp = String(opts.timestampMs ?? Date.now());
  const key = opts.key ?? deriveExecutorKey(EXECUTOR_SECRET, team, keyVersion);
  return {
    'x-ax-team': team,
    'x-ax-key-version': String(keyVersion),
    'x-ax-timestamp': timestamp,
    'x-ax-signature': signV2(key, { timestamp, method: opts.method ?? 'POST', path, body }),
  };
}

export interface Published {
  exchange: string;
  routingKey: string;
  body: Record<string, unknown>;
}

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  raw?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  body: any;
  headers: Headers;
}

export interface TestApp {
  url: string;
  db: TestDatabase;
  pool: StorePool;
  redis: TestRedis;
  namespace: string;
  published: Published[];
  deps: AppDepsInput;
  tokens: { viewer: string; operator: string; admin: string };
  call(method: string, path: string, opts?: CallOptions): Promise<CallResult>;
  close(): Promise<void>;
}

export async function startTestApp(overrides: Partial<AppDepsInput> = {}): Promise<TestApp> {
  const db = await createTestDatabase();
  const namespace = uniqueNamespace('axadm');
  const redis = await createTestRedis(namespace);
  const published: Published[] = [];
  const metrics = createMetrics({ service: 'admin-api', defaultMetrics: false });
  const deps: AppDepsInput = {
    pool: db.pool,
    redis: redis.redis,
    keys: redisKeys(namespace),
    bus: {
      topology: busTopology(namespace),
      connected: true,
      publish: (exchange: string, routingKey: string, body: Buffer) => {
        published.push({ exchange, routingKey, body: JSON.parse(body.toString('utf8')) as Record<string, unknown> });
        return Promise.resolve();
      },
    },
    logger: silentLogger(),
    metrics,
    apiMetrics: createApiMetrics(metrics),
    busAdmin: testBusAdmin(),
    executorSecret: EXECUTOR_SECRET,
    hmacWindowMs: 300_000,
    bodyLimitBytes: 1_048_576,
    corsOrigins: [],
    authFailureLimit: { max: 1_000_000, windowMs: 60_000 },
    now: Date.now,
    ...overrides,
  };
  const tokens = { viewer: 'tok-viewer-0123456789', operator: 'tok-operator-0123456789', admin: 'tok-admin-0123456789' };
  for (const [role, token] of Object.entries(tokens)) {
    await insertApiToken(db.pool, { name: `${role}-user`, role, tokenHash: hashToken(token) });
  }
  const { app } = createApp(deps);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (method: string, path: string, opts: CallOptions = {}): Promise<CallResult> => {
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token === undefined ? tokens.admin : opts.token;
    if (token !== null) headers['authorization'] = `Bearer ${token}`;
    let body: string | Buffer | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
    const response = await fetch(`${url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json') && text !== '') parsed = JSON.parse(text);
    return { status: response.status, body: parsed, headers: response.headers };
  };
  return {
    url,
    db,
    pool: db.pool,
    redis,
    namespace,
    published,
    deps,
    tokens,
    call,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      // Enrollment users of this namespace go too (on the real management API, whatever the test
      // overrode); only asked of RabbitMQ when the file made enrollments, so the other files do
      // not depend on its management plugin.
      const [enrolled] = await db.pool.query<any[]>('SELECT COUNT(*) AS n FROM worker_enrollment');
      const aclUsers = ((await redis.redis.call('ACL', 'USERS')) as string[]).filter((u) => u.startsWith(`${namespace}.enr-`));
      if (Number(enrolled[0]?.n ?? 0) > 0 || aclUsers.length > 0) await dropEnrollmentUsers(namespace, redis.redis, testBusAdmin());
      await redis.cleanup();
      await db.drop();
    },
  };
}

/** The test RabbitMQ's management API: worker enrollments make and delete their users there. */
export function testBusAdmin(): BusAdminOptions {
  return { managementUrl: process.env['AX_AMQP_MANAGEMENT_URL'] ?? defaultManagementUrl(testAmqpUrl()), vhost: vhostOfAmqpUrl(testAmqpUrl()) };
}

/** Basic auth header and base URL of a management API URL (tests). */
function management(busAdmin: BusAdminOptions): { base: string; authorization: string } {
  const url = new URL(busAdmin.managementUrl);
  const authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  return { base: `${url.origin}/api`, authorization };
}

/**
 * The worker enrollment users of `namespace` that exist now: RabbitMQ users (management API)
 * and Redis ACL users named `<ns>.enr-…`, sorted. What tests check "nothing was created" with.
 */
export async function enrollmentUsersOf(namespace: string, redis: Redis, busAdmin: BusAdminOptions | undefined): Promise<{ rabbitmq: string[]; redis: string[] }> {
  const prefix = `${namespace}.enr-`;
  const acl = ((await redis.call('ACL', 'USERS')) as string[]).filter((u) => u.startsWith(prefix)).sort();
  let bus: string[] = [];
  if (busAdmin !== undefined) {
    const { base, authorization } = management(busAdmin);
    const res = await fetch(`${base}/users?columns=name`, { headers: { authorization } });
    if (res.ok) bus = ((await res.json()) as Array<{ name: string }>).map((u) => u.name).filter((u) => u.startsWith(prefix)).sort();
  }
  return { rabbitmq: bus, redis: acl };
}

/** Deletes every worker enrollment user of `namespace` (RabbitMQ and Redis): a test file leaves none. */
export async function dropEnrollmentUsers(namespace: string, redis: Redis, busAdmin: BusAdminOptions | undefined): Promise<void> {
  const users = await enrollmentUsersOf(namespace, redis, busAdmin);
  for (const user of users.redis) await redis.call('ACL', 'DELUSER', user);
  if (busAdmin !== undefined) {
    const { base, authorization } = management(busAdmin);
    for (const user of users.rabbitmq) await fetch(`${base}/users/${encodeURIComponent(user)}`, { method: 'DELETE', headers: { authorization } });
  }
}

/** Inserts an instance row directly (tests). Returns its id. */
export async function insertInstance(
  pool: StorePool,
  i: { task: string; expected: string; bizDate: string; state: string; runNo?: number; workerId?: string | null; executionId?: string | null },
): Promise<string> {
  const [rows] = await pool.query<any[]>('SELECT id FROM task WHERE name = ?', [i.task]);
  const taskId = rows[0]?.id ?? 0;
  const [result] = await pool.query<any>(
    `INSERT INTO task_instance (task_id, task_name, expected_time, run_no, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params,
                                priority, worker_id, current_execution_id, ended_at)
     VALUES (?, ?, ?, ?, ?, 'schedule', ?, 1, 1, ?, '{}', 5, ?, ?, ?)`,
    [
      taskId,
      i.task,
      new Date(i.expected),
      i.runNo ?? 1,
      i.bizDate,
      i.state,
      new Date(i.expected),
      i.workerId ?? null,
      i.executionId ?? null,
      ['SUCCESS', 'FAILED', 'CANCELED'].includes(i.state) ? new Date(i.expected) : null,
    ],
  );
  return String(result.insertId);
}

/** A minimal valid task definition. */
export function taskDef(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, schedule: { type: 'cron', expr: '0 2 * * *' }, exec: { type: 'shell', command: ['echo', 'hi'] }, ...extra };
}

/** Stores a token of `role` acting for `teams` (tests); returns its plaintext. */
export async function addToken(pool: StorePool, name: string, role: string, teams: readonly string[]): Promise<string> {
  const token = `tok-${name}-0123456789`;
  await insertApiToken(pool, { name, role, teams, tokenHash: hashToken(token) });
  return token;
}
