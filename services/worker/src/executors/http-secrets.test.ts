import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchItem } from '../testing/fixtures.js';
import { hostAllowList } from './host-allow.js';
import { createHttpExecutor } from './http.js';
import type { ExecutionRequest } from './types.js';

// A plain endpoint (no SDK): it echoes the X-Api-Key header it received in its answer.
const root = mkdtempSync(path.join(os.tmpdir(), 'ax-http-secrets-'));
const secretsDir = path.join(root, 'secrets');
mkdirSync(path.join(secretsDir, 'team-a'), { recursive: true });
mkdirSync(path.join(secretsDir, 'team-b'), { recursive: true });
writeFileSync(path.join(secretsDir, 'team-a', 'API_KEY'), 'alpha-api-key-1111\n');
writeFileSync(path.join(secretsDir, 'team-b', 'API_KEY'), 'bravo-api-key-2222\r\n');

let server: Server;
let base: string;
const received: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    received.push(req.headers);
    const key = String(req.headers['x-api-key'] ?? '');
    if (req.url === '/echo') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, data: { seen: key, [key]: 1 } }));
    if (req.url === '/refuse') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, message: `key ${key} is not allowed` }));
    if (req.url === '/long') return void res.writeHead(200, { 'content-type': 'application/json' }).end(`{"success":true,"key":"${key}","pad":"${'.'.repeat(1_010)}"}`);
    res.writeHead(403).end(`denied for ${key}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await executor.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(root, { recursive: true, force: true });
});

const executor = createHttpExecutor({ workerId: 'w-secrets', secret: 'worker-test-secret-0123', allow: hostAllowList(['127.0.0.1']), outputTailBytes: 1024, secretsDir });

function request(pathname: string, team: string, secretRef: string): ExecutionRequest {
  const item = dispatchItem({ team, exec: { type: 'http', url: `${base}${pathname}`, method: 'POST', headers: { 'X-Api-Key': { secretRef }, 'X-Mode': 'literal' } } });
  return { item, deadlineMs: Date.now() + 30_000, signal: new AbortController().signal };
}

describe('#18 secrets: http header secretRefs', () => {
  it('#18 secrets: a header secretRef is read from the task team folder (team A and team B, same NAME)', async () => {
    expect(await executor.run(request('/echo', 'team-a', 'API_KEY'))).toMatchObject({ outcome: 'SUCCESS', exitCode: 200 });
    expect(received.at(-1)).toMatchObject({ 'x-api-key': 'alpha-api-key-1111', 'x-mode': 'literal' });
    expect(await executor.run(request('/echo', 'team-b', 'API_KEY'))).toMatchObject({ outcome: 'SUCCESS', exitCode: 200 });
    expect(received.at(-1)).toMatchObject({ 'x-api-key': 'bravo-api-key-2222' });
  });

  it('#18 secrets: a header secretRef to AX_EXECUTOR_SECRET or another env variable fails SECRET_MISSING, no request sent', async () => {
    process.env.AX_TEST_HTTP_SECRET_18 = 'env-value-must-not-leak';
    try {
      for (const name of ['AX_EXECUTOR_SECRET', 'AX_TEST_HTTP_SECRET_18', 'HOME']) {
        const before = received.length;
        const out = await executor.run(request('/echo', 'team-a', name));
        expect(out).toMatchObject({ outcome: 'FAILED', exitCode: null, error: `SECRET_MISSING: secret "${name}" is not in the secrets folder of team "team-a"` });
        expect(received.length).toBe(before);
      }
      const other = await executor.run(request('/echo', 'team-a', '../team-b/API_KEY'));
      expect(other.error).toMatch(/^SECRET_MISSING: secret "\.\.\/team-b\/API_KEY" is not a valid secret name/);
    } finally {
      delete process.env.AX_TEST_HTTP_SECRET_18;
    }
  });

  it('#18 secrets: an endpoint echoing the value shows *** in the output tail, the error and the result data', async () => {
    const ok = await executor.run(request('/echo', 'team-a', 'API_KEY'));
    expect(ok.outputTail).toBe('{"success":true,"data":{"seen":"***","***":1}}');
    expect(ok.data).toEqual({ seen: '***', '***': 1 });
    const refused = await executor.run(request('/refuse', 'team-a', 'API_KEY'));
    expect(refused).toMatchObject({ outcome: 'FAILED', exitCode: 200, error: 'key *** is not allowed' });
    const denied = await executor.run(request('/denied', 'team-a', 'API_KEY'));
    expect(denied).toMatchObject({ outcome: 'FAILED', exitCode: 403, outputTail: 'denied for ***' });
    // Masked before the cut to 1024 bytes: the value that would straddle it is gone whole.
    const long = await executor.run(request('/long', 'team-a', 'API_KEY'));
    expect(long.outputTruncated).toBe(true);
    expect(long.outputTail?.startsWith('***","pad":"')).toBe(true); // unmasked, the cut would begin inside the value
    for (const out of [ok, refused, denied, long]) expect(JSON.stringify(out)).not.toMatch(/alpha-api|api-key-1111|key-1111/);
  });

  it('#18 secrets: without AX_SECRETS_DIR a header secretRef fails; literal headers still work', async () => {
    const none = createHttpExecutor({ workerId: 'w', secret: 'worker-test-secret-0123', allow: hostAllowList(['127.0.0.1']), outputTailBytes: 1024 });
    try {
      expect(await none.run(request('/echo', 'team-a', 'API_KEY'))).toMatchObject({
        outcome: 'FAILED',
        error: 'SECRET_MISSING: secret "API_KEY" of team "team-a" cannot be read: AX_SECRETS_DIR is not set on this worker',
      });
      const literal = dispatchItem({ team: 'team-a', exec: { type: 'http', url: `${base}/echo`, method: 'POST', headers: { 'X-Api-Key': 'plain-value' } } });
      expect(await none.run({ item: literal, deadlineMs: Date.now() + 30_000, signal: new AbortController().signal })).toMatchObject({ outcome: 'SUCCESS', data: { seen: 'plain-value' } });
    } finally {
      await none.close();
    }
  });
});
