// Test support (not built, not packed): calls an executor exactly as an ax worker does
// (services/worker/src/executors/http.ts: @ax/core's signV2 with the team key derived from the
// master secret, the same headers and body), and a stand-in for the admin API's report and
// claim endpoints that verifies with @ax/core's own signature helpers.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deriveExecutorKey, parseSignatureHeaders, signatureMatches, signV2 } from '@ax/core';
import { request } from 'undici';

export const MASTER_SECRET = 'sdk-test-master-secret-0123456789';
export const TEAM = 'orders';
/** The team's key of version 1, as `GET /api/v1/teams/orders/executor-key` hands it out. */
export const KEY_V1 = { team: TEAM, keyVersion: 1, key: deriveExecutorKey(MASTER_SECRET, TEAM, 1) };
/** Another team's key: a call signed with it is refused. */
export const OTHER_TEAM_KEY = { team: TEAM, keyVersion: 1, key: deriveExecutorKey(MASTER_SECRET, 'payments', 1) };

/** The body the worker sends (httpExecutionBody). */
export function executionBody(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    executionId: 'exec-1',
    instanceId: '41',
    taskName: 'order_stat',
    team: TEAM,
    bizDate: '2026-12-01',
    expectedTime: '2026-12-01T02:00:00.000Z',
    attempt: 1,
    params: { mode: 'sync' },
    traceId: 'trace-1',
    deadline: new Date(Date.now() + 60_000).toISOString(),
    ...overrides,
  });
}

export interface WorkerCallOptions {
  readonly body?: string;
  /** The key the worker signs with; default KEY_V1. */
  readonly key?: { readonly keyVersion: number; readonly key: string };
  readonly timestampMs?: number;
}

/** POSTs `body` to `url` signed as the worker signs; answers status and JSON. */
export async function workerCall(url: string, options: WorkerCallOptions = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const target = new URL(url);
  const body = options.body ?? executionBody();
  const key = options.key ?? KEY_V1;
  const signed = { timestamp: String(options.timestampMs ?? Date.now()), method: 'POST', path: `${target.pathname}${target.search}`, body };
  const res = await request(target, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-ax-team': TEAM,
      'x-ax-key-version': String(key.keyVersion),
      'x-ax-timestamp': signed.timestamp,
      'x-ax-signature': signV2(key.key, signed),
      'x-ax-worker': 'w-test',
      'idempotency-key': 'order_stat:2026-12-01T02:00:00.000Z:1',
    },
    body,
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown> };
}

export async function listen(handler: RequestListener): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** One report or claim as the stand-in admin API received it. */
export interface AdminCall {
  readonly executionId: string;
  readonly action: string;
  readonly valid: boolean;
  readonly body: unknown;
}

/** A stand-in for `POST /api/v1/executions/{id}/report|claim`, verifying as admin-api does. */
export async function standInAdminApi(): Promise<{ server: Server; url: string; calls: AdminCall[] }> {
  const calls: AdminCall[] = [];
  const { server, url } = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const match = /^\/api\/v1\/executions\/([^/]+)\/(report|claim)$/.exec(req.url ?? '');
      const header = (name: string): string | undefined => {
        const value = req.headers[name];
        return typeof value === 'string' ? value : undefined;
      };
      const parsed = parseSignatureHeaders(
        { team: header('x-ax-team'), keyVersion: header('x-ax-key-version'), timestamp: header('x-ax-timestamp'), signature: header('x-ax-signature') },
        Date.now(),
      );
      const valid =
        match !== null &&
        parsed.ok &&
        parsed.value.team === TEAM &&
        signatureMatches(deriveExecutorKey(MASTER_SECRET, TEAM, parsed.value.keyVersion), { timestamp: parsed.value.timestamp, method: 'POST', path: req.url ?? '', body: raw }, parsed.value.signature);
      calls.push({ executionId: decodeURIComponent(match?.[1] ?? ''), action: match?.[2] ?? '', valid, body: JSON.parse(raw.toString('utf8') || '{}') });
      res.statusCode = valid ? 200 : 401;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(match?.[2] === 'claim' ? { granted: true } : {}));
    });
  });
  return { server, url, calls };
}
