// Each framework adapter against real HTTP servers on 127.0.0.1, called exactly as an ax worker
// calls (testing/worker-call.ts signs with @ax/core's signV2): a sync SUCCESS, an async 202
// followed by a signed report (to a stand-in admin API verifying with @ax/core), a refused bad
// signature — and, for the node frameworks, a JSON parser that ran first without keeping the
// bytes (the parsed body is re-serialized and verified), one that changed the body (401 naming
// the raw-body fix), and a body that is neither bytes nor JSON (500 RAW_BODY_UNAVAILABLE).
import 'reflect-metadata';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, HttpCode, Module, Post, Req, Res, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import express from 'express';
import express4 from 'express4';
import Fastify from 'fastify';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@ax/testing';
import { createAxClient } from './client.js';
import { axExecutor, captureRawBody } from './express.js';
import { axFastify } from './fastify.js';
import type { AxExecutorOptions, ExecutionContext } from './handler.js';
import { axKoa } from './koa.js';
import { axCallOf, AxExecutorGuard, axNest, type NestLikeRequest, type NestLikeResponse } from './nest.js';
import { close, executionBody, KEY_V1, listen, OTHER_TEAM_KEY, standInAdminApi, workerCall, type AdminCall } from './testing/worker-call.js';

const ROUTE = '/ax/order-stat';
let admin: { server: Server; url: string; calls: AdminCall[] };
const handled: ExecutionContext[] = [];
/** One executor's options: 'sync' answers a result, 'async' answers 202 and reports 20 ms later. */
let options: AxExecutorOptions;

beforeAll(async () => {
  admin = await standInAdminApi();
  const client = createAxClient({ baseUrl: admin.url, keys: [KEY_V1] });
  options = {
    keys: [KEY_V1],
    client,
    handler: (ctx) => {
      handled.push(ctx);
      if (ctx.params.mode === 'async') {
        setTimeout(() => void ctx.report({ success: true, message: `reported ${ctx.executionId}` }).catch(() => undefined), 20);
        return ctx.accepted();
      }
      return { success: true, message: `counted ${ctx.bizDate}`, data: { rows: 3, worker: ctx.workerId } };
    },
  };
});
afterAll(() => close(admin.server));

/** The three outcomes every adapter must give, against a running service at `base`. */
async function expectProtocol(base: string, tag: string): Promise<void> {
  const url = `${base}${ROUTE}`;
  const sync = await workerCall(url, { body: executionBody({ executionId: `${tag}-sync` }) });
  expect(sync).toEqual({ status: 200, json: { success: true, message: 'counted 2026-12-01', data: { rows: 3, worker: 'w-test' } } });
  expect(handled.at(-1)).toMatchObject({ executionId: `${tag}-sync`, idempotencyKey: 'order_stat:2026-12-01T02:00:00.000Z:1', keyVersion: 1, team: 'orders' });

  const accepted = await workerCall(url, { body: executionBody({ executionId: `${tag}-async`, params: { mode: 'async' } }) });
  expect(accepted).toEqual({ status: 202, json: { accepted: true } });
  const report = await waitFor(() => admin.calls.find((c) => c.executionId === `${tag}-async`), { description: `the report of ${tag}-async` });
  expect(report).toEqual({ executionId: `${tag}-async`, action: 'report', valid: true, body: { success: true, message: `reported ${tag}-async` } });

  const count = handled.length;
  const bad = await workerCall(url, { body: executionBody({ executionId: `${tag}-bad` }), key: OTHER_TEAM_KEY });
  expect(bad).toMatchObject({ status: 401, json: { error: { code: 'BAD_SIGNATURE' } } });
  const stale = await workerCall(url, { body: executionBody({ executionId: `${tag}-stale` }), timestampMs: Date.now() - 301_000 });
  expect(stale).toMatchObject({ status: 401, json: { error: { code: 'STALE_TIMESTAMP' } } });
  expect(handled.length).toBe(count);
}

async function expectRawBodyUnavailable(base: string, fix: RegExp): Promise<void> {
  const count = handled.length;
  const answer = await workerCall(`${base}${ROUTE}`);
  expect(answer).toMatchObject({ status: 500, json: { error: { code: 'RAW_BODY_UNAVAILABLE' } } });
  expect(String((answer.json.error as { message: string }).message)).toMatch(fix);
  expect(handled.length).toBe(count);
}

describe('ax-scheduler-sdk/express', () => {
  for (const [major, factory] of [
    ['5', express],
    ['4', express4],
  ] as const) {
    it(`express ${major} with app.use(express.json({ verify: captureRawBody })) first: sync SUCCESS, 202 + report, 401`, async () => {
      const app = factory();
      app.use(factory.json({ verify: captureRawBody }));
      app.post(ROUTE, axExecutor(options));
      // the app's own JSON routes keep working
      app.post('/echo', (req, res) => void res.json(req.body));
      const { server, url } = await listen(app);
      try {
        await expectProtocol(url, `express${major}-json`);
        const echo = await fetch(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
        expect(await echo.json()).toEqual({ a: 1 });
      } finally {
        await close(server);
      }
    });

    it(`express ${major} without a body parser, mounted with app.use(path): reads the stream itself`, async () => {
      const app = factory();
      app.use(ROUTE, axExecutor(options));
      const { server, url } = await listen(app);
      try {
        await expectProtocol(url, `express${major}-stream`);
      } finally {
        await close(server);
      }
    });

    it(`express ${major} with a plain app.use(express.json()) first (#21): the parsed body re-serialized verifies — sync SUCCESS, 202 + report, 401`, async () => {
      const app = factory();
      app.use(factory.json());
      app.post(ROUTE, axExecutor(options));
      const { server, url } = await listen(app);
      try {
        await expectProtocol(url, `express${major}-plain-json`);
      } finally {
        await close(server);
      }
    });

    it(`express ${major} with a JSON parser that changed the body: 401 BAD_SIGNATURE saying how to keep the raw bytes; the handler never runs`, async () => {
      const app = factory();
      app.use(factory.json({ reviver: (key: string, value: unknown) => (key === 'bizDate' ? '1999-01-01' : value) }));
      app.post(ROUTE, axExecutor(options));
      const { server, url } = await listen(app);
      try {
        const count = handled.length;
        const answer = await workerCall(`${url}${ROUTE}`);
        expect(answer).toMatchObject({ status: 401, json: { error: { code: 'BAD_SIGNATURE' } } });
        expect(String((answer.json.error as { message: string }).message)).toMatch(/re-serialized from the parsed JSON.*express\.json\(\{ verify: captureRawBody \}\)/);
        expect(handled.length).toBe(count);
      } finally {
        await close(server);
      }
    });

    it(`express ${major} with express.text() first: 500 RAW_BODY_UNAVAILABLE saying what to add`, async () => {
      const app = factory();
      app.use(factory.text({ type: '*/*' }));
      app.post(ROUTE, axExecutor(options));
      const { server, url } = await listen(app);
      const warnings: Error[] = [];
      const onWarning = (warning: Error): void => void warnings.push(warning);
      process.on('warning', onWarning);
      try {
        await expectRawBodyUnavailable(url, /express\.json\(\{ verify: captureRawBody \}\)/);
        await waitFor(() => warnings.some((w) => /RAW_BODY_UNAVAILABLE|captureRawBody/.test(`${(w as { code?: string }).code} ${w.message}`)), { description: 'the warning' });
      } finally {
        process.off('warning', onWarning);
        await close(server);
      }
    });
  }
});

describe('ax-scheduler-sdk/fastify', () => {
  it('a plugin scoped to its route: sync SUCCESS, 202 + report, 401; the app keeps parsing JSON elsewhere', async () => {
    const app = Fastify();
    await app.register(axFastify({ ...options, path: ROUTE }));
    app.post('/echo', async (request) => request.body);
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      await expectProtocol(url, 'fastify');
      const echo = await fetch(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
      expect(await echo.json()).toEqual({ a: 1 });
    } finally {
      await app.close();
    }
  });
});

describe('ax-scheduler-sdk/koa', () => {
  it('after koa-bodyparser (ctx.request.rawBody) and without a body parser: sync SUCCESS, 202 + report, 401', async () => {
    for (const [tag, parser] of [
      ['koa-bodyparser', true],
      ['koa-stream', false],
    ] as const) {
      const app = new Koa();
      if (parser) app.use(bodyParser());
      app.use(axKoa({ ...options, path: ROUTE }));
      app.use((ctx) => {
        ctx.body = { other: ctx.path };
      });
      const callback = app.callback();
      const { server, url } = await listen((req, res) => void callback(req, res));
      try {
        await expectProtocol(url, tag);
        expect(await (await fetch(`${url}/elsewhere`)).json()).toEqual({ other: '/elsewhere' });
      } finally {
        await close(server);
      }
    }
  });

  for (const [what, parse, expected] of [
    ['a JSON parser that kept no raw bytes: the parsed body re-serialized verifies', (text: string): unknown => JSON.parse(text), 'protocol'],
    ['a parser that kept a string, no raw bytes: 500 RAW_BODY_UNAVAILABLE', (text: string): unknown => text, 'unavailable'],
  ] as const) {
    it(`after ${what}`, async () => {
      const app = new Koa();
      app.use(async (ctx, next) => {
        const chunks: Buffer[] = [];
        for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
        (ctx.request as { body?: unknown }).body = parse(Buffer.concat(chunks).toString('utf8'));
        await next();
      });
      app.use(axKoa({ ...options, path: ROUTE }));
      const callback = app.callback();
      const { server, url } = await listen((req, res) => void callback(req, res));
      try {
        if (expected === 'protocol') await expectProtocol(url, 'koa-parsed');
        else await expectRawBodyUnavailable(url, /ctx\.request\.rawBody/);
      } finally {
        await close(server);
      }
    });
  }
});

describe('ax-scheduler-sdk/nest', () => {
  /** An app with one controller; Nest's decorators applied as functions (no decorator syntax here). */
  async function nestApp(rawBody: boolean): Promise<{ url: string; close: () => Promise<void> }> {
    const orderStat = axNest(options);
    class AxController {
      orderStat(req: NestLikeRequest, res: NestLikeResponse): Promise<void> {
        return orderStat.handle(req, res);
      }
      guarded(req: NestLikeRequest): { success: boolean; message: string } {
        return { success: true, message: `guarded ${axCallOf(req).executionId}` };
      }
    }
    const proto = AxController.prototype;
    const method = (name: 'orderStat' | 'guarded'): PropertyDescriptor => Object.getOwnPropertyDescriptor(proto, name) as PropertyDescriptor;
    Controller('ax')(AxController);
    Post('order-stat')(proto, 'orderStat', method('orderStat'));
    Req()(proto, 'orderStat', 0);
    Res()(proto, 'orderStat', 1);
    Post('guarded')(proto, 'guarded', method('guarded'));
    HttpCode(200)(proto, 'guarded', method('guarded'));
    UseGuards(new AxExecutorGuard({ keys: [KEY_V1] }))(proto, 'guarded', method('guarded'));
    Req()(proto, 'guarded', 0);
    class AppModule {}
    Module({ controllers: [AxController] })(AppModule);
    const app = await NestFactory.create(AppModule, { rawBody, logger: false });
    await app.listen(0, '127.0.0.1');
    const server = app.getHttpServer() as Server;
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => app.close() };
  }

  it('NestFactory.create(AppModule, { rawBody: true }): axNest answers sync SUCCESS, 202 + report, 401; the guard lets through only a verified call', async () => {
    const app = await nestApp(true);
    try {
      await expectProtocol(app.url, 'nest');
      expect(await workerCall(`${app.url}/ax/guarded`, { body: executionBody({ executionId: 'nest-guarded' }) })).toEqual({
        status: 200,
        json: { success: true, message: 'guarded nest-guarded' },
      });
      expect(await workerCall(`${app.url}/ax/guarded`, { key: OTHER_TEAM_KEY })).toMatchObject({ status: 401, json: { error: { code: 'BAD_SIGNATURE' } } });
    } finally {
      await app.close();
    }
  });

  it('without rawBody: true (Nest parses JSON by default): the parsed body re-serialized verifies, in the helper and the guard; a bad key is 401 naming the option', async () => {
    const app = await nestApp(false);
    try {
      await expectProtocol(app.url, 'nest-parsed');
      expect(await workerCall(`${app.url}/ax/guarded`, { body: executionBody({ executionId: 'nest-parsed-guarded' }) })).toEqual({
        status: 200,
        json: { success: true, message: 'guarded nest-parsed-guarded' },
      });
      const bad = await workerCall(`${app.url}/ax/guarded`, { key: OTHER_TEAM_KEY });
      expect(bad).toMatchObject({ status: 401, json: { error: { code: 'BAD_SIGNATURE' } } });
      expect(JSON.stringify(bad.json)).toMatch(/rawBody: true/);
    } finally {
      await app.close();
    }
  });
});
