// #21 "each runs an ax HTTP task to SUCCESS through the SDK": a Fastify app, a Koa app (with
// koa-bodyparser) and a NestJS app (Nest's default JSON parsing, no `rawBody: true`) behind a
// real ax stack — admin-api, broker and worker processes on MySQL, Redis and RabbitMQ. Each
// serves a task of team orders with its executor key from the API: a sync SUCCESS, and a 202
// then a report through the SDK's client (the real /report endpoint). The express adapter's
// real-stack run is in test/e2e/team-http-executor.test.ts. Needs `pnpm build` (services run
// their dist/).
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Controller, Module, Post, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import Fastify from 'fastify';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { createTestAmqp, createTestDatabase, createTestRedis, dumpAllProcessOutput, startService, stopAllProcesses, uniqueNamespace, waitFor } from '@ax/testing';
import { createAxClient } from './client.js';
import { axFastify } from './fastify.js';
import type { AxExecutorOptions, ExecutionContext } from './handler.js';
import { axKoa } from './koa.js';
import { axNest, type NestLikeRequest, type NestLikeResponse } from './nest.js';

const ns = uniqueNamespace('axsdkfw');
const dataDir = mkdtempSync(join(tmpdir(), 'ax-sdk-frameworks-'));
const ADMIN_TOKEN = `axt_sdk_fw_admin_${Math.random().toString(36).slice(2)}`;
const ROUTE = '/ax/order-stat';
const WAIT_MS = 30_000;

let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
let adminUrl = '';
const closers: Array<() => Promise<unknown>> = [];
/** The frameworks' base URLs. */
const apps = new Map<string, string>();
/** Every context a handler got, and each async report's outcome by execution. */
const handled: ExecutionContext[] = [];
const reports = new Map<string, unknown>();

async function api<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

const portOf = (server: Server): number => (server.address() as AddressInfo).port;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(ns);
  amqp = await createTestAmqp(ns);
  const env = {
    AX_MYSQL_URL: db.url,
    AX_REDIS_URL: redis.url,
    AX_AMQP_URL: amqp.url,
    AX_NAMESPACE: ns,
    AX_LOG_LEVEL: 'warn',
    AX_EXECUTOR_SECRET: 'sdk-frameworks-executor-secret-0123456789',
    AX_WORKER_DATA_DIR: dataDir,
  };
  adminUrl = (await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } })).baseUrl;
  await startService('broker', { env });
  await startService('worker', { env: { ...env, AX_WORKER_ID: 'sdk-fw-w1', AX_WORKER_SLOTS: '4', AX_HTTP_EXECUTOR_ALLOW: '127.0.0.1' } });
  await api('POST', '/api/v1/teams', { name: 'orders', description: 'the orders team' });
  const key = await api<{ team: string; keyVersion: number; key: string }>('GET', '/api/v1/teams/orders/executor-key');
  const keys = [key];
  const options: AxExecutorOptions = {
    keys,
    client: createAxClient({ baseUrl: adminUrl, keys }),
    handler: (ctx) => {
      handled.push(ctx);
      if (ctx.params.mode !== 'async') return { success: true, message: `counted ${ctx.bizDate}` };
      setTimeout(() => {
        ctx.report({ success: true, message: 'reported' }).then(
          (outcome) => reports.set(ctx.executionId, outcome),
          (error: unknown) => reports.set(ctx.executionId, error),
        );
      }, 100);
      return ctx.accepted();
    },
  };

  const fastify = Fastify();
  await fastify.register(axFastify({ ...options, path: ROUTE }));
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  closers.push(() => fastify.close());
  apps.set('fastify', `http://127.0.0.1:${portOf(fastify.server)}`);

  const koa = new Koa();
  koa.use(bodyParser());
  koa.use(axKoa({ ...options, path: ROUTE }));
  const koaServer = await new Promise<Server>((resolve) => {
    const s = koa.listen(0, '127.0.0.1', () => resolve(s));
  });
  closers.push(() => new Promise((resolve) => koaServer.close(resolve)));
  apps.set('koa', `http://127.0.0.1:${portOf(koaServer)}`);

  // Nest as most apps create it: its JSON parser on, no rawBody option.
  const orderStat = axNest(options);
  class AxController {
    orderStat(req: NestLikeRequest, res: NestLikeResponse): Promise<void> {
      return orderStat.handle(req, res);
    }
  }
  const proto = AxController.prototype;
  Controller('ax')(AxController);
  Post('order-stat')(proto, 'orderStat', Object.getOwnPropertyDescriptor(proto, 'orderStat') as PropertyDescriptor);
  Req()(proto, 'orderStat', 0);
  Res()(proto, 'orderStat', 1);
  class AppModule {}
  Module({ controllers: [AxController] })(AppModule);
  const nest = await NestFactory.create(AppModule, { logger: false });
  await nest.listen(0, '127.0.0.1');
  closers.push(() => nest.close());
  apps.set('nest', `http://127.0.0.1:${portOf(nest.getHttpServer() as Server)}`);

  for (const [framework, base] of apps) {
    await api('POST', '/api/v1/tasks', {
      name: `fw_${framework}`,
      team: 'orders',
      schedule: { type: 'none' },
      exec: { type: 'http', url: `${base}${ROUTE}`, method: 'POST' },
      timeoutSeconds: 30,
      retry: { max: 0 },
    });
  }
  await waitFor(async () => (await api<{ items: Array<{ id: string }> }>('GET', '/api/v1/workers')).items.some((w) => w.id === 'sdk-fw-w1'), {
    description: 'worker sdk-fw-w1 registered',
    timeoutMs: WAIT_MS,
    intervalMs: 200,
  });
}, 120_000);

afterAll(async () => {
  for (const close of closers) await close().catch(() => undefined);
  await stopAllProcesses({ graceMs: 5_000 });
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function final(id: string): Promise<{ state: string; reason: string | null }> {
  return waitFor(
    async () => {
      const d = await api<{ state: string; reason: string | null }>('GET', `/api/v1/instances/${id}`);
      return ['SUCCESS', 'FAILED', 'CANCELED'].includes(d.state) ? d : null;
    },
    { description: `instance ${id} final`, timeoutMs: WAIT_MS, intervalMs: 200 },
  );
}

describe('#21 the SDK adapters behind a real ax stack', () => {
  for (const framework of ['fastify', 'koa', 'nest']) {
    it(`${framework}: an ax HTTP task runs to SUCCESS, sync and with a 202 then a report`, async () => {
      onTestFailed(() => dumpAllProcessOutput());
      const sync = await api<{ id: string }>('POST', `/api/v1/tasks/fw_${framework}/trigger`, { params: { mode: 'sync' } });
      const async = await api<{ id: string }>('POST', `/api/v1/tasks/fw_${framework}/trigger`, { params: { mode: 'async' } });
      expect(await final(sync.id)).toMatchObject({ state: 'SUCCESS', reason: null });
      expect(await final(async.id)).toMatchObject({ state: 'SUCCESS', reason: null });
      const asyncCtx = handled.find((c) => c.instanceId === async.id);
      expect(asyncCtx).toMatchObject({ team: 'orders', taskName: `fw_${framework}`, workerId: 'sdk-fw-w1', keyVersion: 1 });
      expect(reports.get(asyncCtx?.executionId ?? '')).toEqual({ duplicate: false });
      expect(handled.find((c) => c.instanceId === sync.id)?.params).toEqual({ mode: 'sync' });
    });
  }
});
