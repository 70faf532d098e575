// The example business service (examples/business-service) against a stand-in admin API.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, waitFor } from '@ax/testing';
import { signedHeaders, verifySignature } from './index.js';

const KEYS = { team: 'orders', keys: { 1: '0123456789abcdef'.repeat(4) } };
const servers: Server[] = [];
const reports: Array<{ id: string; action: string; valid: boolean; body: unknown }> = [];
let appUrl: string;

function listen(handler: RequestListener): Promise<string> {
  return new Promise((resolve) => {
    const server = createServer(handler);
    servers.push(server);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

beforeAll(async () => {
  const admin = express();
  admin.post('/api/v1/executions/:id/:action', express.raw({ type: () => true }), (req, res) => {
    const raw = req.body as Buffer;
    const received = { team: req.get('x-ax-team'), keyVersion: req.get('x-ax-key-version'), timestamp: req.get('x-ax-timestamp'), signature: req.get('x-ax-signature') };
    const valid = verifySignature({ keys: KEYS, received, method: req.method, path: req.originalUrl, body: raw }) === null;
    reports.push({ id: String(req.params.id), action: String(req.params.action), valid, body: JSON.parse(raw.toString('utf8')) });
    res.status(valid ? 200 : 401).json(req.params.action === 'claim' ? { granted: true } : {});
  });
  const adminApiUrl = await listen(admin);
  const modulePath = path.join(repoRoot(), 'examples/business-service/app.mjs');
  const { createApp } = (await import(modulePath)) as { createApp: (o: { keys: typeof KEYS; adminApiUrl: string }) => RequestListener };
  appUrl = await listen(createApp({ keys: KEYS, adminApiUrl }));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

async function call(route: string, params: Record<string, unknown>, executionId = 'e1') {
  const body = JSON.stringify({
    executionId,
    instanceId: '9',
    taskName: 'order_stat_daily',
    bizDate: '2026-12-01',
    expectedTime: '2026-12-01T02:00:00.000Z',
    attempt: 1,
    params,
    traceId: 't',
    deadline: new Date(Date.now() + 60_000).toISOString(),
  });
  const res = await request(`${appUrl}${route}`, { method: 'POST', headers: { ...signedHeaders(KEYS, { method: 'POST', path: route, body }), 'idempotency-key': 'order_stat_daily:2026-12-01T02:00:00.000Z:1' }, body });
  return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
}

describe('examples/business-service', () => {
  it('sync success, sync failure, and async 202 followed by a signed claim and report', async () => {
    expect(await call('/ax/order-stat', { source: 'orders' })).toEqual({
      status: 200,
      json: { success: true, message: 'counted orders for 2026-12-01', data: { bizDate: '2026-12-01', rows: 42 } },
    });
    expect(await call('/ax/settle', {})).toEqual({ status: 200, json: { success: false, message: 'ledger for 2026-12-01 is not open yet' } });
    expect((await call('/ax/export', { delayMs: 10 }, 'e-async')).status).toBe(202);
    await waitFor(() => reports.some((r) => r.action === 'report'), { description: 'async report' });
    expect(reports).toEqual([
      { id: 'e-async', action: 'claim', valid: true, body: {} },
      { id: 'e-async', action: 'report', valid: true, body: { success: true, message: 'export written', data: { file: 'export-2026-12-01.csv' } } },
    ]);
  });
});
