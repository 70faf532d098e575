/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * What the console needs from admin-api: its files at `/` with the SPA fallback (API paths
 * keep their JSON 404s), a clear 503 when it was not built, `whoami` for the role, and the
 * per-hour figures of the dashboard's charts.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_NOT_BUILT, locateConsoleDist } from './console.js';
import { insertInstance, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

const dist = mkdtempSync(join(tmpdir(), 'ax-console-dist-'));
mkdirSync(join(dist, 'assets'));
writeFileSync(join(dist, 'index.html'), '<!doctype html><title>ax console</title><div id="root"></div>');
writeFileSync(join(dist, 'assets', 'index-abc123.js'), 'console.log("ax")');
// A script worth compressing, with the twins the console's build writes beside it (precompress.ts).
const script = Buffer.from(`export const names = [${Array.from({ length: 400 }, (_, i) => `"task_${i}"`).join(',')}];\n`);
writeFileSync(join(dist, 'assets', 'big-def456.js'), script);
writeFileSync(join(dist, 'assets', 'big-def456.js.br'), brotliCompressSync(script));
writeFileSync(join(dist, 'assets', 'big-def456.js.gz'), gzipSync(script));
writeFileSync(join(dist, 'index.html.br'), brotliCompressSync(readFileSync(join(dist, 'index.html'))));

/** A GET whose body is not decoded (fetch would undo the content coding): status, headers, raw bytes. */
function rawGet(url: string, headers: Record<string, string>, path?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    // `path` as given, not normalized as a URL string would be (`..` segments kept).
    const req = httpRequest(url, { headers, ...(path === undefined ? {} : { path }) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

let built: TestApp;
let unbuilt: TestApp;
beforeAll(async () => {
  [built, unbuilt] = await Promise.all([startTestApp({ consoleDir: dist }), startTestApp({ consoleDir: null })]);
});
afterAll(async () => {
  await Promise.all([built?.close(), unbuilt?.close()]);
  rmSync(dist, { recursive: true, force: true });
});

describe('the console at /', () => {
  it('serves index.html at / and for client routes, with its own CSP and no caching', async () => {
    for (const path of ['/', '/tasks/order_stat', '/instances/42?tab=events']) {
      const res = await built.call('GET', path, { token: null });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(String(res.body)).toContain('<div id="root">');
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      // Revalidated each time (its ETag makes that a 304), so a new build is loaded at once.
      expect(res.headers.get('cache-control')).toBe('no-cache');
    }
  });

  it('#47 sends brotli to a client that accepts it, gzip to one that accepts only that, identity to one without; each decodes to the file', async () => {
    const url = `${built.url}/assets/big-def456.js`;
    const br = await rawGet(url, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/javascript/);
    expect(br.headers['vary']).toMatch(/accept-encoding/i);
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    expect(br.body.length).toBeLessThan(script.length / 4);
    expect(brotliDecompressSync(br.body).equals(script)).toBe(true);

    const gz = await rawGet(url, { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(script)).toBe(true);

    for (const headers of [{}, { 'accept-encoding': 'identity' }, { 'accept-encoding': 'br;q=0, gzip;q=0' }] as Array<Record<string, string>>) {
      const plain = await rawGet(url, headers);
      expect(plain.headers['content-encoding'], JSON.stringify(headers)).toBeUndefined();
      expect(plain.headers['vary']).toMatch(/accept-encoding/i);
      expect(plain.body.equals(script)).toBe(true);
    }

    // index.html for a client route too, still revalidated; a twin is never served by its own name.
    const index = await rawGet(`${built.url}/tasks/x`, { 'accept-encoding': 'br' });
    expect(index.headers['content-encoding']).toBe('br');
    expect(index.headers['content-type']).toMatch(/^text\/html/);
    expect(index.headers['cache-control']).toBe('no-cache');
    expect(brotliDecompressSync(index.body).toString()).toContain('<div id="root">');
    expect((await rawGet(`${url}.br`, {})).status).toBe(404);
    expect((await rawGet(built.url, {}, '/assets/../../etc/passwd')).status).toBe(404);
    expect((await rawGet(built.url, {}, '/assets/%2e%2e/%2e%2e/index.html')).status).toBe(404);
  });

  it('#47 the console build has a .br and a .gz twin of each script and stylesheet, decoding to it', () => {
    const assets = join(locateConsoleDist() ?? '', 'assets');
    const files = readdirSync(assets).filter((f) => /\.(js|css)$/.test(f));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const original = readFileSync(join(assets, f));
      expect(brotliDecompressSync(readFileSync(join(assets, `${f}.br`))).equals(original), f).toBe(true);
      expect(gunzipSync(readFileSync(join(assets, `${f}.gz`))).equals(original), f).toBe(true);
    }
  });

  it('serves hashed assets as immutable, and a missing asset as a plain 404 (never index.html)', async () => {
    const asset = await built.call('GET', '/assets/index-abc123.js', { token: null });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    const missing = await built.call('GET', '/assets/index-gone.js', { token: null });
    expect(missing.status).toBe(404);
    expect(String(missing.body)).not.toContain('<div id="root">');
  });

  it('keeps JSON 404s for API paths and refuses writes to console paths in the error shape', async () => {
    const api = await built.call('GET', '/api/v1/nope');
    expect(api.status).toBe(404);
    expect(api.body.error.code).toBe('NOT_FOUND');
    const post = await built.call('POST', '/tasks', { body: {} });
    expect(post.status).toBe(404);
    expect(post.body.error.code).toBe('NOT_FOUND');
    expect((await built.call('GET', '/healthz', { token: null })).body).toEqual({ status: 'ok' });
  });

  it('answers 503 with a clear text when the console was not built; the API still works', async () => {
    const res = await unbuilt.call('GET', '/', { token: null });
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.body).toBe(CONSOLE_NOT_BUILT);
    expect((await unbuilt.call('GET', '/api/v1/tasks')).status).toBe(200);
    expect((await unbuilt.call('GET', '/api/v1/nope')).body.error.code).toBe('NOT_FOUND');
  });

  it('finds the console build through the @ax/console package', () => {
    expect(locateConsoleDist()).toMatch(/console[/\\]dist$/);
  });
});

describe('GET /api/v1/whoami', () => {
  it("answers the token's name and role, and 401 without one", async () => {
    const viewer = await built.call('GET', '/api/v1/whoami', { token: built.tokens.viewer });
    expect(viewer.status).toBe(200);
    expect(viewer.body).toMatchObject({ name: 'viewer-user', role: 'viewer' });
    expect((await built.call('GET', '/api/v1/whoami', { token: built.tokens.operator })).body.role).toBe('operator');
    expect((await built.call('GET', '/api/v1/whoami', { token: null })).status).toBe(401);
  });
});

describe('GET /api/v1/stats/hourly', () => {
  it('counts runs and failures per hour of the slot, and the fire lag of scheduled instances', async () => {
    await built.call('POST', '/api/v1/tasks', { body: taskDef('hourly_a') });
    await insertInstance(built.pool, { task: 'hourly_a', expected: '2026-03-04T05:10:00.000Z', bizDate: '2026-03-04', state: 'SUCCESS' });
    await insertInstance(built.pool, { task: 'hourly_a', expected: '2026-03-04T05:20:00.000Z', bizDate: '2026-03-04', state: 'FAILED' });
    const late = await insertInstance(built.pool, { task: 'hourly_a', expected: '2026-03-04T23:59:59.000Z', bizDate: '2026-03-04', state: 'FAILED' });
    await insertInstance(built.pool, { task: 'hourly_a', expected: '2026-03-05T00:00:00.000Z', bizDate: '2026-03-05', state: 'SUCCESS' });
    // Committed 1.5 s after its slot; its execution started 2.5 s after it (#20: the delay is
    // the current execution's start, not the instance row's started_at).
    await built.pool.query('UPDATE task_instance SET created_at = ?, started_at = ?, current_execution_id = ? WHERE id = ?', [
      new Date('2026-03-05T00:00:00.500Z'),
      new Date('2026-03-05T00:00:09.000Z'),
      '00000000-0000-7000-8000-000000000001',
      late,
    ]);
    await built.pool.query(
      `INSERT INTO task_execution (execution_id, instance_id, attempt, run_no, worker_id, state, acked_at, started_at, ended_at)
       VALUES ('00000000-0000-7000-8000-000000000001', ?, 1, 1, 'w1', 'FAILED', ?, ?, ?)`,
      [late, new Date('2026-03-05T00:00:01.400Z'), new Date('2026-03-05T00:00:01.500Z'), new Date('2026-03-05T00:00:02.000Z')],
    );

    const res = await built.call('GET', '/api/v1/stats/hourly?day=2026-03-04', { token: built.tokens.viewer });
    expect(res.status).toBe(200);
    expect(res.body.day).toBe('2026-03-04');
    expect(res.body.hours).toHaveLength(24);
    expect(res.body.hours[0]).toEqual({ hour: '2026-03-04T00:00:00.000Z', runs: 0, succeeded: 0, failed: 0, avgFireLagMs: null, avgTriggerDelayMs: null });
    expect(res.body.hours[5]).toMatchObject({ hour: '2026-03-04T05:00:00.000Z', runs: 2, succeeded: 1, failed: 1 });
    expect(res.body.hours[23]).toEqual({ hour: '2026-03-04T23:00:00.000Z', runs: 1, succeeded: 0, failed: 1, avgFireLagMs: 1500, avgTriggerDelayMs: 2500 });
  });

  it('defaults to today (UTC) and refuses a malformed day with 400', async () => {
    const today = await built.call('GET', '/api/v1/stats/hourly');
    expect(today.body.day).toBe(new Date().toISOString().slice(0, 10));
    const bad = await built.call('GET', '/api/v1/stats/hourly?day=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues[0].path).toBe('day');
  });
});
