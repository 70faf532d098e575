/**
 * `AX_CONSOLE_DIR` across real admin-api starts (`services/admin-api/dist/main.js`: run `pnpm
 * build` first): a folder holding a console build is served at `/` (and its client routes)
 * instead of the installed `@ax/console` dist; a folder without one stops the start with a
 * line naming the variable, not a console that answers 503.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertNoLeftoverProcesses,
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  serviceEntry,
  startService,
  stopAllProcesses,
  uniqueNamespace,
  type TestAmqp,
  type TestDatabase,
  type TestRedis,
} from '@ax/testing';

const namespace = uniqueNamespace('axconsoledir');
const MARKER = `side-by-side console ${Math.random().toString(36).slice(2)}`;
let db: TestDatabase;
let redis: TestRedis;
let amqp: TestAmqp;
let folder = '';

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(namespace);
  amqp = await createTestAmqp(namespace);
  folder = mkdtempSync(join(tmpdir(), 'ax-console-dir-'));
  mkdirSync(join(folder, 'build', 'assets'), { recursive: true });
  writeFileSync(join(folder, 'build', 'index.html'), `<!doctype html><title>${MARKER}</title><div id="root"></div>`);
  writeFileSync(join(folder, 'build', 'assets', 'app.js'), 'console.log("app");');
});
afterAll(async () => {
  await stopAllProcesses({ graceMs: 5_000 });
  assertNoLeftoverProcesses();
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  if (folder !== '') rmSync(folder, { recursive: true, force: true });
});

const envOf = (consoleDir: string): Record<string, string> => ({
  AX_MYSQL_URL: db.url,
  AX_REDIS_URL: redis.url,
  AX_AMQP_URL: amqp.url,
  AX_NAMESPACE: namespace,
  AX_LOG_LEVEL: 'warn',
  AX_SHUTDOWN_GRACE_S: '2',
  AX_CONSOLE_DIR: consoleDir,
});

describe('AX_CONSOLE_DIR', () => {
  it('serves the build in that folder at / and at client routes; its assets too', async () => {
    const api = await startService('admin-api', { name: 'admin-api-console-dir', env: envOf(join(folder, 'build')), readyTimeoutMs: 30_000 });
    for (const path of ['/', '/tasks/new', '/reruns/12']) {
      const res = await fetch(`${api.baseUrl}${path}`);
      expect(res.status, path).toBe(200);
      expect(await res.text(), path).toContain(MARKER);
    }
    const asset = await fetch(`${api.baseUrl}/assets/app.js`);
    expect(asset.status).toBe(200);
    expect(await asset.text()).toBe('console.log("app");');
    await api.stop();
  }, 60_000);

  it('a folder without a console build stops the start with exit code 2 and a line naming the variable', () => {
    const empty = join(folder, 'empty');
    mkdirSync(empty);
    const run = spawnSync(process.execPath, [serviceEntry('admin-api')], {
      env: { ...process.env, ...envOf(empty), AX_HTTP_PORT: '65000' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toBe(
      `ax: AX_CONSOLE_DIR=${empty} is invalid: it holds no console build (no index.html); build one there with \`vite build --outDir\` or unset it to serve the installed console`,
    );
  }, 60_000);
});
