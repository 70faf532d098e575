// The README's first command, `pnpm start` (scripts/start-stack.mjs after the build): it must
// bring the whole stack up, import the example jobs and run the example DAG to SUCCESS, seen
// through the admin API; and it must refuse to start, with one line naming the server, when a
// server cannot be reached.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  dumpAllProcessOutput,
  freePort,
  freePortRange,
  repoRoot,
  startProcess,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
} from '@ax/testing';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';

const script = join(repoRoot(), 'scripts/start-stack.mjs');
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  await stopAllProcesses();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('pnpm start (scripts/start-stack.mjs)', () => {
  it('exits 2 with one line naming the server it cannot reach', () => {
    const run = spawnSync(process.execPath, [script], {
      env: { ...process.env, AX_REDIS_URL: 'redis://127.0.0.1:1' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(2);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ax: cannot reach Redis at redis:\/\/127\.0\.0\.1:1 \(connection refused\); start Redis/);
  });

  it('brings the stack up and runs the example DAG to SUCCESS, seen through the API', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const ns = uniqueNamespace('axstack');
    const db = await createTestDatabase({ migrate: false });
    cleanups.push(() => db.drop());
    const adminPort = await freePort();
    const businessPort = await freePort();
    // Its own outbox folder: a developer's `pnpm start` uses .ax-dev with the same worker ids.
    const dataDir = mkdtempSync(join(tmpdir(), 'ax-stack-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const stack = await startProcess({
      name: 'pnpm-start',
      command: process.execPath,
      args: [script],
      // Moved aside as a second stack would be (#47): another business port, health ports, data dir.
      env: {
        AX_MYSQL_URL: db.url,
        AX_NAMESPACE: ns,
        AX_STACK_ADMIN_PORT: String(adminPort),
        AX_STACK_BUSINESS_PORT: String(businessPort),
        AX_STACK_HEALTH_PORT_BASE: String(await freePortRange(4)),
        AX_STACK_DATA_DIR: dataDir,
        AX_LOG_LEVEL: 'warn',
      },
      readyLine: /ax is running/,
      readyTimeoutMs: 90_000,
    });
    cleanups.push(async () => {
      const redis = await createTestRedis(ns);
      await redis.cleanup();
      const amqp = await createTestAmqp(ns);
      await amqp.cleanup();
    });
    const tokenLine = await stack.waitForLine(/admin token: /);
    const token = /admin token: (\S+)/.exec(tokenLine)?.[1] ?? '';
    const api = async (path: string): Promise<{ items: Array<{ state: string; bizDate: string }> }> => {
      const res = await fetch(`http://127.0.0.1:${adminPort}${path}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      return (await res.json()) as { items: Array<{ state: string; bizDate: string }> };
    };

    const tasks = (await api('/api/v1/tasks?limit=50')).items as unknown as Array<{ name: string }>;
    expect(tasks.map((t) => t.name)).toEqual(
      expect.arrayContaining(['hello_shell', 'order_stat', 'export_async', 'archive_inbox', 'dag_extract', 'dag_transform', 'dag_load', 'flaky_settle']),
    );
    // Its example jobs call its own business service and keep their files in its own data dir.
    const detail = async (name: string): Promise<{ exec: { url?: string; config?: { source?: string } } }> =>
      (await (await fetch(`http://127.0.0.1:${adminPort}/api/v1/tasks/${name}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { exec: { url?: string; config?: { source?: string } } };
    expect((await detail('order_stat')).exec.url).toBe(`http://127.0.0.1:${businessPort}/ax/order-stat`);
    expect((await detail('archive_inbox')).exec.config?.source).toBe(join(dataDir, 'files', 'inbox'));
    const started = Date.now();
    for (const task of ['dag_extract', 'dag_transform', 'dag_load']) {
      await waitFor(async () => (await api(`/api/v1/instances?task=${task}`)).items.some((i) => i.state === 'SUCCESS'), {
        description: `an instance of ${task} reaches SUCCESS`,
        timeoutMs: 60_000,
        intervalMs: 500,
      });
    }
    console.log(`pnpm start: example DAG succeeded ${Date.now() - started} ms after the stack was up`);

    stack.kill('SIGINT');
    const exit = await stack.waitExit(30_000);
    expect(exit.code).toBe(0);
  });
});
