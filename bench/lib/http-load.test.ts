/**
 * The closed-loop HTTP load of bench/scenarios/ax-history.mjs against a local server: every
 * request answered or counted failed, the time limit stopping the sending, and a request still
 * unanswered at the limit given up (the per-request deadline of a fractional millisecond count
 * once threw before any request was sent, and every read of a run reported 400 failures).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedLoop as load } from './http-load.mjs';

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/slow') return void setTimeout(() => res.end('late'), 5_000).unref();
    res.statusCode = req.url === '/missing' ? 404 : 200;
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('closedLoop', () => {
  it('answers every request, and counts each failure while keeping only the first five', async () => {
    const r = await load({ baseUrl, concurrency: 4, requests: 40, maxS: 10, pathOf: (i) => (i % 4 === 0 ? '/missing' : '/ok') });
    expect(r).toMatchObject({ requests: 40, stoppedByTime: false, failed: 10 });
    expect(r.failures).toHaveLength(5);
    expect(r.failures[0]).toBe('404 /missing');
  });

  it('gives up a request still unanswered when the time is up, and counts it failed', async () => {
    const r = await load({ baseUrl, concurrency: 2, requests: 10, maxS: 0.3, pathOf: () => '/slow' });
    expect(r.requests).toBe(2);
    expect(r.stoppedByTime).toBe(true);
    expect(r.failed).toBe(2);
    expect(r.failures[0]).toMatch(/^\/slow: /);
  });

  it('reports p50 ≤ p99 ≤ max of the requests sent, and null figures (not NaN) when none was sent', async () => {
    const r = await load({ baseUrl, concurrency: 2, requests: 20, pathOf: () => '/ok' });
    expect(r.p50Ms).toBeGreaterThan(0);
    expect(r.p50Ms).toBeLessThanOrEqual(r.p99Ms ?? 0);
    expect(r.p99Ms).toBeLessThanOrEqual(r.maxMs ?? 0);
    const none = await load({ baseUrl, concurrency: 2, requests: 0, pathOf: () => '/ok' });
    expect(none).toMatchObject({ requests: 0, failed: 0, p50Ms: null, p99Ms: null, maxMs: null });
  });
});
