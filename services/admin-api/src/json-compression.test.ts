/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * JSON replies compressed per Accept-Encoding (json-reply.ts, #47): a large list answers with
 * `content-encoding` br or gzip and decodes to the very bytes sent without it; a small reply, a
 * client that asks for none (or refuses both), and an SSE log stream go as they are. Read with
 * node:http, which (unlike fetch) neither asks for nor undoes compression.
 */
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertExecutions } from '@ax/store';
import { COMPRESS_JSON_MIN_BYTES } from './json-reply.js';
import { insertInstance, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
}

/** One request; the body as it came over the wire (a stream: its first bytes, then closed). */
function raw(path: string, headers: Record<string, string> = {}, firstChunkOnly = false): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${t.url}${path}`, { headers: { authorization: `Bearer ${t.tokens.viewer}`, ...headers } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        parts.push(chunk);
        if (firstChunkOnly) {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(parts) });
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', (err) => (firstChunkOnly ? undefined : reject(err)));
    req.end();
  });
}

const LIST = '/api/v1/tasks?limit=100';

beforeAll(async () => {
  t = await startTestApp();
  for (let i = 0; i < 30; i++) {
    const description = `nightly export number ${i} of the ledger to the warehouse`;
    expect((await t.call('POST', '/api/v1/tasks', { body: taskDef(`zip_${String(i).padStart(2, '0')}`, { description }) })).status).toBe(201);
  }
});

afterAll(async () => {
  await t?.close();
});

describe('JSON replies compressed per Accept-Encoding', () => {
  it('a large list: br or gzip as asked, the same JSON once decoded, Vary: Accept-Encoding', async () => {
    const plain = await raw(LIST);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.bytes.length).toBeGreaterThan(COMPRESS_JSON_MIN_BYTES * 4);
    expect(Number(plain.headers['content-length'])).toBe(plain.bytes.length);
    expect(JSON.parse(plain.bytes.toString('utf8')).items).toHaveLength(30);

    const br = await raw(LIST, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(String(br.headers['vary'])).toMatch(/accept-encoding/i);
    expect(Number(br.headers['content-length'])).toBe(br.bytes.length);
    expect(br.bytes.length).toBeLessThan(plain.bytes.length / 4);
    expect(brotliDecompressSync(br.bytes).equals(plain.bytes)).toBe(true);

    const gz = await raw(LIST, { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.bytes).equals(plain.bytes)).toBe(true);

    // q-values: gzip preferred over br when the client says so.
    expect((await raw(LIST, { 'accept-encoding': 'br;q=0.5, gzip' })).headers['content-encoding']).toBe('gzip');
  });

  it('goes as it is without Accept-Encoding, when both are refused, and under the threshold', async () => {
    const refused = await raw(LIST, { 'accept-encoding': 'br;q=0, gzip;q=0, identity' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(refused.bytes.toString('utf8')).items).toHaveLength(30);

    const small = await raw('/api/v1/whoami', { 'accept-encoding': 'br, gzip' });
    expect(small.status).toBe(200);
    expect(small.bytes.length).toBeLessThan(COMPRESS_JSON_MIN_BYTES);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.headers['vary']).toBeUndefined();
    expect(JSON.parse(small.bytes.toString('utf8'))).toMatchObject({ role: 'viewer' });
  });

  it('never compresses an SSE log stream', async () => {
    const instanceId = await insertInstance(t.pool, { task: 'zip_00', expected: '2026-11-20T01:00:00.000Z', bizDate: '2026-11-20', state: 'RUNNING', executionId: '0190b000-0000-7000-8000-00000000f001', workerId: 'w1' });
    await insertExecutions(t.pool, [{ executionId: '0190b000-0000-7000-8000-00000000f001', instanceId, attempt: 1, runNo: 1, workerId: 'w1' }]);
    const stream = await raw('/api/v1/executions/0190b000-0000-7000-8000-00000000f001/log/stream', { 'accept-encoding': 'br, gzip' }, true);
    expect(stream.status).toBe(200);
    expect(String(stream.headers['content-type'])).toMatch(/^text\/event-stream/);
    expect(stream.headers['content-encoding']).toBeUndefined();
  });
});
