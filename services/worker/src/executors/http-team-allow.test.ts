/**
 * #44 on the worker: a team's `httpAllow` (carried in the dispatch item from the team row)
 * narrows `AX_HTTP_EXECUTOR_ALLOW` for that team's http tasks, host and addresses, and never
 * widens it; a task's own `Host` header is never sent.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchItem } from '@ax/core';
import { dispatchItem } from '../testing/fixtures.js';
import type { HostLookup } from './checked-connect.js';
import { hostAllowList } from './host-allow.js';
import { createHttpExecutor } from './http.js';
import type { ExecutionRequest } from './types.js';

const SECRET = 'worker-test-secret-0123';
let server: Server;
let port: number;
const hosts: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hosts.push(String(req.headers.host));
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** `*.a.example` and `api.b.example` resolve to the test server's loopback address. */
const lookup: HostLookup = () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]);

function request(url: string, item: Partial<DispatchItem> = {}): ExecutionRequest {
  return {
    item: dispatchItem({ team: 'a', exec: { type: 'http', url, method: 'POST' }, timeoutSeconds: 10, ...item }),
    deadlineMs: Date.now() + 10_000,
    signal: new AbortController().signal,
  };
}

describe('#44 a team\'s httpAllow on the worker', () => {
  it('attack: team a calls a host the global list admits but its own list does not', async () => {
    const executor = createHttpExecutor({ workerId: 'w', secret: SECRET, allow: hostAllowList(['127.0.0.1', 'internal:orders.a.internal']), lookup, outputTailBytes: 1024 });
    try {
      const url = `http://127.0.0.1:${port}/run`;
      expect(await executor.run(request(url))).toMatchObject({ outcome: 'SUCCESS' });
      expect(await executor.run(request(url, { httpAllow: ['internal:orders.a.internal'] }))).toMatchObject({
        outcome: 'FAILED',
        error: `host 127.0.0.1:${port} is not in AX_HTTP_EXECUTOR_ALLOW and the httpAllow of team a`,
      });
      // its own host still works, through its own checked connections
      expect(await executor.run(request(`http://orders.a.internal:${port}/run`, { httpAllow: ['internal:orders.a.internal'] }))).toMatchObject({ outcome: 'SUCCESS' });
    } finally {
      await executor.close();
    }
  });

  it('attack: a team list never widens the global one (a name, "*", an address)', async () => {
    const executor = createHttpExecutor({ workerId: 'w', secret: SECRET, allow: hostAllowList(['orders.a.internal']), lookup, outputTailBytes: 1024 });
    try {
      for (const httpAllow of [['*'], ['127.0.0.1'], ['internal:payments.b.internal']]) {
        expect(await executor.run(request(`http://127.0.0.1:${port}/run`, { httpAllow })), JSON.stringify(httpAllow)).toMatchObject({ outcome: 'FAILED' });
        expect((await executor.run(request(`http://payments.b.internal:${port}/run`, { httpAllow }))).outcome, JSON.stringify(httpAllow)).toBe('FAILED');
      }
    } finally {
      await executor.close();
    }
  });

  it('attack: under a global "*" a team list of public names still refuses a name that resolves to a private address', async () => {
    const executor = createHttpExecutor({ workerId: 'w', secret: SECRET, allow: hostAllowList(['*']), lookup, outputTailBytes: 1024 });
    try {
      const out = await executor.run(request(`http://api.a.example:${port}/run`, { httpAllow: ['*.a.example'] }));
      expect(out).toMatchObject({ outcome: 'FAILED' });
      expect(out.error).toContain('HOST_REFUSED: api.a.example resolves to 127.0.0.1');
      // an invalid list (a broker bug) calls nothing
      const invalid = await executor.run(request(`http://127.0.0.1:${port}/run`, { httpAllow: ['http://x/'] }));
      expect(invalid.outcome).toBe('FAILED');
      expect(invalid.error).toContain("the team's httpAllow is not valid");
    } finally {
      await executor.close();
    }
  });

  it('attack: a stored task with its own Host header reaches another virtual host; the Host sent is the URL\'s', async () => {
    const executor = createHttpExecutor({ workerId: 'w', secret: SECRET, allow: hostAllowList(['127.0.0.1']), outputTailBytes: 1024 });
    try {
      hosts.length = 0;
      const out = await executor.run(request(`http://127.0.0.1:${port}/run`, { exec: { type: 'http', url: `http://127.0.0.1:${port}/run`, method: 'POST', headers: { HoSt: 'payments.b.internal' } } }));
      expect(out).toMatchObject({ outcome: 'SUCCESS' });
      expect(hosts).toEqual([`127.0.0.1:${port}`]);
    } finally {
      await executor.close();
    }
  });
});
