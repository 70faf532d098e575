// One team's HTTP task through the whole system, with real processes: admin-api → MySQL →
// broker → RabbitMQ → worker → (signed v2 POST) → the team's business service (in this
// process, ax-scheduler-sdk) → 202 → signed report → admin-api → RabbitMQ → broker → MySQL. What a team
// relies on (ADMIN-API.md "Teams", "HTTP executors"; docs/http-executors.md): its endpoint is
// called signed with its own executor key, only its own key reports for its executions, and a
// key rotation does not break a service that still holds only the old key during the grace.
// A second service is an ordinary express app (a plain `express.json()` mounted first, keeping no
// raw bytes: the SDK verifies the parsed body re-serialized) serving a task through `ax-scheduler-sdk/express`. Needs
// `pnpm build` (the services run their dist/, and `ax-scheduler-sdk/express` is the package's entry).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { AxApiError, createAxClient, signV2, type TeamKeys } from 'ax-scheduler-sdk';
// The adapter's own entry point, as an app imports it (not a deep import into the sources).
import { axExecutor, type ExecutionContext } from 'ax-scheduler-sdk/express';
import {
  assertNoLeftoverProcesses,
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  dumpAllProcessOutput,
  startService,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
} from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';

const ns = uniqueNamespace('axe2eteam');
const dataDir = mkdtempSync(join(tmpdir(), 'ax-e2e-team-'));
const ADMIN_TOKEN = `axt_e2e_team_admin_${Math.random().toString(36).slice(2)}`;
const EXECUTOR_SECRET = 'e2e-team-executor-secret-0123456789';
const ROUTE = '/ax/settle';
const TASK = 'pay_settle_http';
const WAIT_MS = 30_000;
const HEX64 = expect.stringMatching(/^[0-9a-f]{64}$/) as unknown;
const V2_SIGNATURE = expect.stringMatching(/^v2=[0-9a-f]{64}$/) as unknown;

let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
let service: Server | undefined;
/** The ordinary express app (express.json() first) of the `ax-scheduler-sdk/express` test. */
let expressService: Server | undefined;
const EXPRESS_ROUTE = '/ax/express-settle';
const EXPRESS_TASK = 'pay_settle_express';
let adminUrl = '';

interface ExecutorKey {
  team: string;
  keyVersion: number;
  key: string;
  previousValidUntil?: string;
}
let paymentsV1: ExecutorKey;
let ordersV1: ExecutorKey;
/** What the service is configured with, for the whole file: payments' key of version 1 only. */
let paymentsKeys: TeamKeys;

/** One request as it reached the business service, before the SDK saw it. */
interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly raw: Buffer;
}
/** By `Idempotency-Key` (one per run of a slot: every trigger here is its own slot). */
const received = new Map<string, Received>();
/** The contexts the SDK handler was called with, in order. */
const handled: ExecutionContext[] = [];
/** The outcome of each `ctx.report` the handler made on its own, by execution id. */
const reports = new Map<string, { duplicate: boolean } | Error>();

async function api<T = Record<string, unknown>>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, json: (text === '' ? {} : JSON.parse(text)) as T };
}

async function apiOk<T = Record<string, unknown>>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const { status, json } = await api<T>(method, path, body);
  if (status < 200 || status > 299) throw new Error(`${method} ${path}: ${status} ${JSON.stringify(json)}`);
  return json;
}

interface InstanceDetail {
  id: string;
  state: string;
  team: string;
  reason: string | null;
  currentExecutionId: string | null;
  executions: Array<{ executionId: string; state: string; workerId: string | null; error: string | null }>;
  events: Array<{ type: string }>;
}

const instance = (id: string): Promise<InstanceDetail> => apiOk<InstanceDetail>('GET', `/api/v1/instances/${id}`);

async function trigger(params: Record<string, unknown>, task = TASK): Promise<string> {
  const { status, json } = await api<{ id: string; team: string }>('POST', `/api/v1/tasks/${task}/trigger`, { params });
  expect(status).toBe(202);
  expect(json.team).toBe('payments');
  return json.id;
}

/** Waits until the instance is final; it must be SUCCESS. */
async function expectSuccess(id: string): Promise<InstanceDetail> {
  const final = await waitFor(
    async () => {
      const detail = await instance(id);
      return ['SUCCESS', 'FAILED', 'CANCELED'].includes(detail.state) ? detail : null;
    },
    { description: `instance ${id} final`, timeoutMs: WAIT_MS, intervalMs: 200 },
  );
  expect({ state: final.state, reason: final.reason }).toEqual({ state: 'SUCCESS', reason: null });
  return final;
}

/** The handler's context and the raw request of the instance's (only) execution, once it arrived. */
async function arrival(instanceId: string): Promise<{ ctx: ExecutionContext; request: Received }> {
  return waitFor(
    () => {
      const ctx = handled.find((c) => c.instanceId === instanceId);
      const request = ctx === undefined ? undefined : received.get(ctx.idempotencyKey);
      return ctx !== undefined && request !== undefined ? { ctx, request } : null;
    },
    { description: `the business service called for instance ${instanceId}`, timeoutMs: WAIT_MS, intervalMs: 100 },
  );
}

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(ns);
  amqp = await createTestAmqp(ns);
  const env = {
    AX_MYSQL_URL: db.url,
    AX_NAMESPACE: ns,
    AX_LOG_LEVEL: 'warn',
    AX_EXECUTOR_SECRET: EXECUTOR_SECRET,
    AX_WORKER_DATA_DIR: dataDir,
  };
  const admin = await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } });
  adminUrl = admin.baseUrl;
  await startService('broker', { env });
  // Only the loopback address the business service listens on: an address entry admits it.
  await startService('worker', { env: { ...env, AX_WORKER_ID: 'e2e-team-w1', AX_WORKER_SLOTS: '4', AX_HTTP_EXECUTOR_ALLOW: '127.0.0.1' } });

  for (const team of ['payments', 'orders']) {
    const created = await api<{ name: string; keyVersion: number }>('POST', '/api/v1/teams', { name: team, description: `the ${team} team` });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: team, keyVersion: 1 });
  }
  paymentsV1 = await apiOk<ExecutorKey>('GET', '/api/v1/teams/payments/executor-key');
  ordersV1 = await apiOk<ExecutorKey>('GET', '/api/v1/teams/orders/executor-key');
  expect(paymentsV1).toMatchObject({ team: 'payments', keyVersion: 1, key: HEX64 });
  expect(ordersV1).toMatchObject({ team: 'orders', keyVersion: 1, key: HEX64 });
  expect(ordersV1.key).not.toBe(paymentsV1.key);
  paymentsKeys = { team: 'payments', keys: { 1: paymentsV1.key } };

  // payments' business service: records each request as it arrived (headers and the exact body
  // bytes), then hands it to the SDK, which verifies and parses the same bytes.
  const client = createAxClient({ baseUrl: adminUrl, keys: paymentsKeys });
  const app = express();
  app.use((req, _res, next) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const key = req.headers['idempotency-key'];
      if (typeof key === 'string') received.set(key, { path: req.originalUrl, headers: req.headers, raw });
      // express.raw (body-parser 2) skips a request already read to its end and leaves
      // `req.body` as set: the SDK then verifies and parses exactly these bytes
      (req as { body?: unknown }).body = raw;
      next();
    });
  });
  app.use(
    ROUTE,
    axExecutor({
      keys: paymentsKeys,
      client,
      handler: (ctx) => {
        handled.push(ctx);
        // 'hold': answer 202 and report nothing (the test reports for it)
        if (ctx.params.mode !== 'hold') {
          setTimeout(() => {
            ctx.report({ success: true, message: 'settled' }).then(
              (outcome) => reports.set(ctx.executionId, outcome),
              (error: unknown) => reports.set(ctx.executionId, error instanceof Error ? error : new Error(String(error))),
            );
          }, 200);
        }
        return ctx.accepted();
      },
    }),
  );
  const server = createServer(app);
  service = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const serviceUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const task = await api('POST', '/api/v1/tasks', {
    name: TASK,
    team: 'payments',
    description: 'e2e: payments settlement over HTTP',
    schedule: { type: 'none' },
    exec: { type: 'http', url: `${serviceUrl}${ROUTE}` },
    params: { mode: 'report' },
    timeoutSeconds: 60,
    retry: { max: 0 },
  });
  expect(task.status).toBe(201);
  expect(task.json).toMatchObject({ name: TASK, team: 'payments' });

  // An ordinary express app: JSON parsing for every route first (keeping the raw bytes the
  // signature covers), the ax executor as one route among the app's own.
  const ordinary = express();
  ordinary.use(express.json()); // plain, as NestJS and most apps mount it: the SDK re-serializes and verifies
  ordinary.post('/api/orders', (req, res) => void res.status(201).json(req.body));
  ordinary.post(
    EXPRESS_ROUTE,
    axExecutor({
      keys: [{ team: 'payments', keyVersion: paymentsV1.keyVersion, key: paymentsV1.key }],
      client,
      handler: (ctx) => {
        handled.push(ctx);
        if (ctx.params.mode === 'async') {
          setTimeout(() => {
            ctx.report({ success: true, message: 'settled by express, later' }).then(
              (outcome) => reports.set(ctx.executionId, outcome),
              (error: unknown) => reports.set(ctx.executionId, error instanceof Error ? error : new Error(String(error))),
            );
          }, 200);
          return ctx.accepted();
        }
        return { success: true, message: 'settled by express', data: { parsedBy: 'express.json' } };
      },
    }),
  );
  const ordinaryServer = createServer(ordinary);
  expressService = ordinaryServer;
  await new Promise<void>((resolve) => ordinaryServer.listen(0, '127.0.0.1', resolve));
  const expressTask = await api('POST', '/api/v1/tasks', {
    name: EXPRESS_TASK,
    team: 'payments',
    description: 'e2e: payments settlement over HTTP, served by an ordinary express app',
    schedule: { type: 'none' },
    exec: { type: 'http', url: `http://127.0.0.1:${(ordinaryServer.address() as AddressInfo).port}${EXPRESS_ROUTE}` },
    params: { mode: 'sync' },
    timeoutSeconds: 60,
    retry: { max: 0 },
  });
  expect(expressTask.status).toBe(201);
  await waitFor(
    async () => (await apiOk<{ items: Array<{ id: string }> }>('GET', '/api/v1/workers')).items.some((w) => w.id === 'e2e-team-w1'),
    { description: 'worker e2e-team-w1 registered', timeoutMs: WAIT_MS, intervalMs: 200 },
  );
}, 120_000);

afterAll(async () => {
  await stopAllProcesses();
  for (const server of [service, expressService]) {
    await new Promise<void>((resolve) => {
      if (server === undefined) resolve();
      else {
        server.closeAllConnections();
        server.close(() => resolve());
      }
    });
  }
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
  assertNoLeftoverProcesses();
}, 60_000);

describe("a team's HTTP executor end to end", () => {
  it("#18 e2e: a run of team payments' task reaches its endpoint signed v2 with payments' key; the service answers 202 and reports; the instance ends SUCCESS", async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const id = await trigger({ mode: 'report' });
    const { ctx, request } = await arrival(id);

    expect(ctx).toMatchObject({ team: 'payments', taskName: TASK, instanceId: id, attempt: 1, workerId: 'e2e-team-w1' });
    expect(ctx.params).toMatchObject({ mode: 'report' });
    expect(ctx.idempotencyKey).toMatch(new RegExp(`^${TASK}:.+:1$`));
    expect(request.path).toBe(ROUTE);
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'x-ax-team': 'payments',
      'x-ax-key-version': '1',
      'x-ax-worker': 'e2e-team-w1',
      'x-ax-signature': V2_SIGNATURE,
    });
    expect(request.headers['x-ax-previous-signature']).toBeUndefined();
    // signed with payments' key of version 1 over exactly what was sent, not with orders' key
    const timestamp = String(request.headers['x-ax-timestamp']);
    const signed = { timestamp, method: 'POST', path: ROUTE, body: request.raw };
    expect(request.headers['x-ax-signature']).toBe(signV2(paymentsV1.key, signed));
    expect(request.headers['x-ax-signature']).not.toBe(signV2(ordersV1.key, signed));
    expect(JSON.parse(request.raw.toString('utf8'))).toMatchObject({ executionId: ctx.executionId, instanceId: id, team: 'payments' });

    const final = await expectSuccess(id);
    expect(reports.get(ctx.executionId)).toEqual({ duplicate: false });
    expect(final.team).toBe('payments');
    expect(final.executions).toHaveLength(1);
    expect(final.executions[0]).toMatchObject({ executionId: ctx.executionId, workerId: 'e2e-team-w1' });
    expect(final.events.map((e) => e.type)).toEqual(expect.arrayContaining(['CREATED', 'DISPATCHED', 'SUCCEEDED']));
  });

  it('#21 e2e: an ordinary express app with express.json() mounted first serves a task through ax-scheduler-sdk/express: sync SUCCESS, and 202 then report', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const syncId = await trigger({ mode: 'sync' }, EXPRESS_TASK);
    const asyncId = await trigger({ mode: 'async' }, EXPRESS_TASK);
    const synced = await expectSuccess(syncId);
    expect(synced.executions).toHaveLength(1);
    const syncCtx = handled.find((c) => c.instanceId === syncId);
    expect(syncCtx).toMatchObject({ team: 'payments', taskName: EXPRESS_TASK, attempt: 1, workerId: 'e2e-team-w1', keyVersion: 1 });
    const asyncCtx = await waitFor(() => handled.find((c) => c.instanceId === asyncId), { description: 'the async call', timeoutMs: WAIT_MS });
    await expectSuccess(asyncId);
    expect(reports.get(asyncCtx.executionId)).toEqual({ duplicate: false });
  });

  it('#18 e2e: a service of another team cannot report for payments\' execution', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const id = await trigger({ mode: 'hold' });
    const { ctx } = await arrival(id);
    // the 202 is recorded: the execution is one a report is accepted for
    await waitFor(
      async () => {
        const detail = await instance(id);
        return detail.state === 'RUNNING' && detail.executions.some((e) => e.executionId === ctx.executionId && e.state === 'ASYNC');
      },
      { description: `execution ${ctx.executionId} recorded ASYNC`, timeoutMs: WAIT_MS, intervalMs: 100 },
    );

    const orders = createAxClient({ baseUrl: adminUrl, keys: { team: 'orders', keys: { 1: ordersV1.key } } });
    const refused = await orders.report(ctx.executionId, { success: false, message: 'orders says so' }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(AxApiError);
    expect((refused as AxApiError).status).toBe(401);
    expect(JSON.parse((refused as AxApiError).body)).toMatchObject({ error: { code: 'BAD_SIGNATURE' } });
    // payments' key claimed to be orders': refused too (a key signs for its own team only)
    const posing = createAxClient({ baseUrl: adminUrl, keys: { team: 'orders', keys: { 1: paymentsV1.key } } });
    const posed = await posing.report(ctx.executionId, { success: false }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(posed).toBeInstanceOf(AxApiError);
    expect((posed as AxApiError).status).toBe(401);
    // nothing was relayed: the instance still waits for its report
    const still = await instance(id);
    expect(still.state).toBe('RUNNING');
    expect(still.currentExecutionId).toBe(ctx.executionId);

    const payments = createAxClient({ baseUrl: adminUrl, keys: paymentsKeys });
    expect(await payments.report(ctx.executionId, { success: true, message: 'settled late' })).toEqual({ duplicate: false });
    await expectSuccess(id);
  });

  it('#18 e2e: after a rotation the service holding only the old key keeps working during the grace', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const rotated = await api<ExecutorKey>('POST', '/api/v1/teams/payments/executor-keys');
    expect(rotated.status).toBe(201);
    expect(rotated.json).toMatchObject({ team: 'payments', keyVersion: 2, key: HEX64 });
    const v2 = rotated.json;
    expect(v2.key).not.toBe(paymentsV1.key);
    expect(Date.parse(String(v2.previousValidUntil))).toBeGreaterThan(Date.now());
    expect(await apiOk<ExecutorKey>('GET', '/api/v1/teams/payments/executor-key')).toMatchObject({ keyVersion: 2, key: v2.key });

    // The broker reloads its team directory on the Redis notification of the rotation and every
    // 5 s: after 6 s it signs dispatches with version 2 whatever the notification did.
    await new Promise((resolve) => setTimeout(resolve, 6_000));

    const id = await trigger({ mode: 'report' });
    const { ctx, request } = await arrival(id);
    expect(ctx).toMatchObject({ team: 'payments', instanceId: id });
    expect(request.headers).toMatchObject({
      'x-ax-team': 'payments',
      'x-ax-key-version': '2',
      'x-ax-signature': V2_SIGNATURE,
      'x-ax-previous-signature': V2_SIGNATURE,
    });
    const signed = { timestamp: String(request.headers['x-ax-timestamp']), method: 'POST', path: ROUTE, body: request.raw };
    expect(request.headers['x-ax-signature']).toBe(signV2(v2.key, signed));
    expect(request.headers['x-ax-previous-signature']).toBe(signV2(paymentsV1.key, signed));

    // The service (keys {1: old}) verified it through the previous signature and answered 202;
    // its report, signed with version 1, is accepted during the grace.
    await expectSuccess(id);
    expect(reports.get(ctx.executionId)).toEqual({ duplicate: false });
    expect(paymentsKeys.keys).toEqual({ 1: paymentsV1.key });
  });
});
