// What each image contains, run without Docker: the same `pnpm --filter <pkg> deploy --prod <dir>`
// the Dockerfile runs, into a temporary folder outside the repository (so nothing resolves from
// the workspace's node_modules), then started the way the image starts it — `node dist/main.js`
// in that folder with NODE_ENV=production and only the environment given here — against a
// database migrated by the deployed migrate folder, in a namespace of its own.
// Needs the built dist/ of the workspace (`pnpm build`, as the root test script does first).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  assertNoLeftoverProcesses,
  createTestDatabase,
  createTestRedis,
  deleteNamespaceAmqp,
  dumpAllProcessOutput,
  freePort,
  startProcess,
  stopAllProcesses,
  testAmqpUrl,
  testRedisUrl,
  uniqueNamespace,
  waitFor,
  type ManagedProcess,
  type TestDatabase,
} from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { repo, SERVICES } from './support.js';

const run = promisify(execFile);

/** What each image copies: target → workspace package. */
const FOLDERS = [
  ...SERVICES.map((s) => ({ target: s.name, pkg: s.pkg })),
  { target: 'migrate', pkg: '@ax/store' },
  { target: 'example-business-service', pkg: '@ax/example-business-service' },
];

const ADMIN_TOKEN = 'deploy-test-admin-token-0001-Qm7Xv4';
const EXECUTOR_SECRET = 'deploy-test-executor-secret-0001';

describe('the pnpm deploy folders the images copy', () => {
  let tmp = '';
  let db: TestDatabase | undefined;
  const namespace = uniqueNamespace('axdeploy');
  const started = new Map<string, ManagedProcess & { baseUrl: string }>();
  const metricsText = new Map<string, string>();

  beforeAll(async () => {
    for (const s of SERVICES) {
      const entry = path.join(repo, 'services', s.name, 'dist', 'main.js');
      if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`pnpm build\` first`);
    }
    tmp = await mkdtemp(path.join(os.tmpdir(), 'ax-deploy-'));
    // One at a time: pnpm deploy copies from the shared store and is quick (~3 s each).
    for (const { target, pkg } of FOLDERS) {
      await run('pnpm', ['--filter', pkg, 'deploy', '--prod', path.join(tmp, target)], { cwd: repo, timeout: 120_000 });
    }
    db = await createTestDatabase({ migrate: false });
  }, 240_000);

  afterAll(async () => {
    await stopAllProcesses({ graceMs: 15_000 });
    assertNoLeftoverProcesses();
    await db?.drop();
    const redis = await createTestRedis(namespace);
    await redis.cleanup();
    await deleteNamespaceAmqp(namespace);
    if (tmp !== '') await rm(tmp, { recursive: true, force: true });
  }, 60_000);

  it('each folder holds its package.json, built code and production dependencies only', async () => {
    for (const { target } of FOLDERS) {
      const dir = path.join(tmp, target);
      expect(existsSync(path.join(dir, 'node_modules')), `${target}/node_modules`).toBe(true);
      const manifest = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
      expect(manifest, target).toBeDefined();
      // devDependencies are not installed (@ax/testing is a devDependency of every service).
      expect(existsSync(path.join(dir, 'node_modules', '@ax', 'testing')), `${target} has @ax/testing`).toBe(false);
    }
    for (const s of SERVICES) expect(existsSync(path.join(tmp, s.name, 'dist', 'main.js')), s.name).toBe(true);
    expect(existsSync(path.join(tmp, 'migrate', 'migrations', '0001_init.sql'))).toBe(true);
  });

  it('migrate: `node dist/cli.js migrate` applies the migrations (the migrate image)', async () => {
    const { stdout } = await run(process.execPath, ['dist/cli.js', 'migrate'], {
      cwd: path.join(tmp, 'migrate'),
      env: { PATH: process.env.PATH ?? '', AX_MYSQL_URL: db?.url ?? '' },
      timeout: 60_000,
    });
    expect(stdout).toMatch(/applied 0001_init/);
  });

  it('every service starts from its folder with NODE_ENV=production and answers /healthz, then /readyz', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const common = {
      PATH: process.env.PATH ?? '',
      HOME: tmp,
      NODE_ENV: 'production',
      AX_NAMESPACE: namespace,
      AX_LOG_LEVEL: 'warn',
      AX_MYSQL_URL: db?.url ?? '',
      AX_REDIS_URL: testRedisUrl(),
      AX_AMQP_URL: testAmqpUrl(),
      AX_EXECUTOR_SECRET: EXECUTOR_SECRET,
      AX_SHUTDOWN_GRACE_S: '5',
      // Required with NODE_ENV=production (by the worker and the admin API).
      AX_HTTP_EXECUTOR_ALLOW: '127.0.0.1:9',
    };
    const own: Record<string, Record<string, string>> = {
      'scheduler': {},
      'broker': {},
      'admin-api': { AX_ADMIN_TOKEN: ADMIN_TOKEN },
    };
    const start = async (name: string, env: Record<string, string>): Promise<void> => {
      const port = await freePort();
      const baseUrl = `http://127.0.0.1:${port}`;
      const proc = await startProcess({
        name: `deployed-${name}`,
        command: process.execPath,
        args: ['dist/main.js'],
        cwd: path.join(tmp, name),
        inheritEnv: false,
        env: { ...env, AX_HTTP_PORT: String(port) },
        readyUrl: `${baseUrl}/healthz`,
        readyTimeoutMs: 45_000,
      });
      started.set(name, Object.assign(proc, { baseUrl }));
    };
    await Promise.all(SERVICES.filter((s) => s.name !== 'worker').map((s) => start(s.name, { ...common, ...own[s.name] })));
    // #44: a production worker is enrolled (it refuses to start otherwise), as the images do it:
    // deploy/enroll-workers.mjs (in the admin-api image) writes its credential, and the worker
    // gets that file and AX_ADMIN_URL, neither the master secret nor MySQL.
    const credentials = path.join(tmp, 'worker-credentials');
    await run(process.execPath, [path.join(repo, 'deploy', 'enroll-workers.mjs'), credentials, 'deployed:*:'], {
      env: { PATH: process.env.PATH ?? '', AX_ADMIN_URL: started.get('admin-api')?.baseUrl ?? '', AX_ADMIN_TOKEN: ADMIN_TOKEN },
      timeout: 60_000,
    });
    const { AX_MYSQL_URL: _mysql, AX_EXECUTOR_SECRET: _secret, ...workerCommon } = common;
    await start('worker', {
      ...workerCommon,
      AX_WORKER_CREDENTIAL_FILE: path.join(credentials, 'deployed.credential'),
      AX_ADMIN_URL: started.get('admin-api')?.baseUrl ?? '',
      AX_WORKER_ID: `${namespace}-worker`,
      AX_WORKER_DATA_DIR: path.join(tmp, 'worker-data'),
      // R25 (#44): production jobs run under their team's uid (the tests run as root).
      AX_JOB_UIDS: 'default=47140',
      AX_PLUGIN_DIR: path.join(tmp, 'plugins'),
    });
    for (const s of SERVICES) {
      const baseUrl = started.get(s.name)?.baseUrl ?? '';
      const health = await fetch(`${baseUrl}/healthz`);
      expect(health.status, `${s.name} /healthz`).toBe(200);
      await health.arrayBuffer();
      await waitFor(
        async () => {
          const res = await fetch(`${baseUrl}/readyz`);
          await res.arrayBuffer();
          return res.status === 200;
        },
        { description: `${s.name} /readyz 200`, timeoutMs: 30_000, intervalMs: 250 },
      );
      const metrics = await fetch(`${baseUrl}/metrics`);
      expect(metrics.status, `${s.name} /metrics`).toBe(200);
      metricsText.set(s.name, await metrics.text());
    }
    // an enrolled worker's id is <enrollment id>.<AX_WORKER_ID>
    const outboxes = (await readdir(path.join(tmp, 'worker-data'))).filter((id) => id.endsWith(`.${namespace}-worker`));
    expect(outboxes).toHaveLength(1);
    expect(existsSync(path.join(tmp, 'worker-data', outboxes[0] ?? '', 'outbox.db'))).toBe(true);
  }, 120_000);

  it('the admin API from its folder accepts the bootstrap token', async () => {
    const baseUrl = started.get('admin-api')?.baseUrl;
    expect(baseUrl, 'admin-api started').toBeDefined();
    const res = await fetch(`${baseUrl}/api/v1/tasks`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });

  it('the example business service starts from its folder and checks signatures', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const port = await freePort();
    await startProcess({
      name: 'deployed-example-business-service',
      command: process.execPath,
      args: ['server.mjs'],
      cwd: path.join(tmp, 'example-business-service'),
      inheritEnv: false,
      env: { PATH: process.env.PATH ?? '', PORT: String(port), AX_EXECUTOR_SECRET: EXECUTOR_SECRET, AX_ADMIN_API_URL: 'http://127.0.0.1:9' },
      readyLine: /listening on/,
      readyTimeoutMs: 20_000,
    });
    const res = await fetch(`http://127.0.0.1:${port}/ax/order-stat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    await res.arrayBuffer();
  });

  it('the Grafana dashboard only queries metrics the running services expose', async () => {
    expect(metricsText.size, 'services started by the test above').toBe(SERVICES.length);
    const exposed = new Set<string>();
    for (const text of metricsText.values()) {
      for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
        const [, name, type] = m;
        exposed.add(name ?? '');
        if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exposed.add(`${name}${suffix}`);
      }
    }
    const dashboard = await readFile(path.join(repo, 'deploy', 'grafana', 'ax-dashboard.json'), 'utf8');
    const queried = new Set([...dashboard.matchAll(/\b(ax_[a-z0-9_]+)\b/g)].map((m) => m[1] ?? ''));
    expect(queried.size).toBeGreaterThan(20);
    expect([...queried].filter((name) => !exposed.has(name))).toEqual([]);
  });
});
