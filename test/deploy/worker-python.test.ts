// #48 "a python task runs from the worker's deploy output": the folder the worker image copies
// (`pnpm --filter @ax/worker deploy --prod`, into a temporary folder outside the repository) is
// started the way the image starts it — `node dist/main.js` there, NODE_ENV=production, jobs
// under a team uid (R25), only the environment given here and the image's PATH, on which
// `python3` is the Debian interpreter /usr/bin/python3 the worker stage installs
// (deploy/Dockerfile; test/deploy/dockerfile.test.ts checks that part) — against an admin API
// and a broker of the workspace; a `python` task naming no interpreter runs to SUCCESS and its
// output shows which interpreter ran it. Needs `pnpm build` and /usr/bin/python3 (under CI=true
// its absence fails).
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  assertNoLeftoverProcesses,
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  dumpAllProcessOutput,
  freePort,
  missingRequirement,
  startProcess,
  startService,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
} from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { repo } from './support.js';

const run = promisify(execFile);
/** The PATH of the node base image (docker inspect node:24-trixie-slim): python3 is /usr/bin/python3 on it. */
const IMAGE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const DEBIAN_PYTHON = '/usr/bin/python3';
const hasDebianPython = spawnSync(DEBIAN_PYTHON, ['--version']).status === 0;

const ns = uniqueNamespace('axdeploypy');
const ADMIN_TOKEN = `axt_deploy_python_admin_${Math.random().toString(36).slice(2)}`;
const EXECUTOR_SECRET = 'deploy-python-executor-secret-0123456789';
const WORKER_ID = `${ns}-worker`;

describe.skipIf(missingRequirement(it, { name: DEBIAN_PYTHON, present: hasDebianPython, install: 'apt-get install python3' }))("a python task on the worker's pnpm deploy folder", () => {
  let tmp = '';
  let adminUrl = '';
  /** `<enrollment id>.<AX_WORKER_ID>`: the id of the enrolled worker. */
  let workerId = '';
  let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
  let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;

  async function api<T>(method: 'GET' | 'POST', route: string, body?: unknown): Promise<T> {
    const res = await fetch(`${adminUrl}${route}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
    return (text === '' ? {} : JSON.parse(text)) as T;
  }

  beforeAll(async () => {
    const entry = path.join(repo, 'services', 'worker', 'dist', 'main.js');
    if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`pnpm build\` first`);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'ax-deploy-python-'));
    await run('pnpm', ['--filter', '@ax/worker', 'deploy', '--prod', path.join(tmp, 'worker')], { cwd: repo, timeout: 120_000 });
    db = await createTestDatabase();
    redis = await createTestRedis(ns);
    amqp = await createTestAmqp(ns);
    const env = { AX_MYSQL_URL: db.url, AX_REDIS_URL: redis.url, AX_AMQP_URL: amqp.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'warn', AX_EXECUTOR_SECRET: EXECUTOR_SECRET };
    adminUrl = (await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } })).baseUrl;
    await startService('broker', { env });

    // #44: a production worker is enrolled: deploy/enroll-workers.mjs (shipped in the admin-api
    // image) writes its credential; it gets that file and AX_ADMIN_URL, never the master secret.
    const credentials = path.join(tmp, 'worker-credentials');
    const { stdout } = await run(process.execPath, [path.join(repo, 'deploy', 'enroll-workers.mjs'), credentials, 'python:*:'], {
      env: { PATH: process.env.PATH ?? '', AX_ADMIN_URL: adminUrl, AX_ADMIN_TOKEN: ADMIN_TOKEN },
      timeout: 60_000,
    });
    workerId = `${/ as (enr-[a-z0-9]+) /.exec(stdout)?.[1] ?? 'no enrollment id printed'}.${WORKER_ID}`;

    const port = await freePort();
    await startProcess({
      name: 'deployed-worker',
      command: process.execPath,
      args: ['dist/main.js'],
      cwd: path.join(tmp, 'worker'),
      inheritEnv: false,
      env: {
        PATH: IMAGE_PATH,
        HOME: tmp,
        NODE_ENV: 'production',
        AX_NAMESPACE: ns,
        AX_LOG_LEVEL: 'warn',
        AX_REDIS_URL: redis.url,
        AX_AMQP_URL: amqp.url,
        AX_WORKER_CREDENTIAL_FILE: path.join(credentials, 'python.credential'),
        AX_ADMIN_URL: adminUrl,
        AX_HTTP_PORT: String(port),
        AX_HTTP_EXECUTOR_ALLOW: '127.0.0.1:9',
        AX_WORKER_ID: WORKER_ID,
        AX_WORKER_DATA_DIR: path.join(tmp, 'worker-data'),
        AX_PLUGIN_DIR: path.join(tmp, 'plugins'),
        // R25 (#44): the job runs under team default's uid, as in the image (the tests run as root)
        AX_JOB_UIDS: 'default=47141',
        AX_SHUTDOWN_GRACE_S: '5',
      },
      readyUrl: `http://127.0.0.1:${port}/healthz`,
      readyTimeoutMs: 45_000,
    });
    await waitFor(async () => (await api<{ items: Array<{ id: string }> }>('GET', '/api/v1/workers')).items.some((w) => w.id === workerId), {
      description: `worker ${workerId} registered`,
      timeoutMs: 30_000,
      intervalMs: 200,
    });
  }, 180_000);

  afterAll(async () => {
    await stopAllProcesses({ graceMs: 10_000 });
    await amqp?.cleanup();
    await redis?.cleanup();
    await db?.drop();
    if (tmp !== '') await rm(tmp, { recursive: true, force: true });
    assertNoLeftoverProcesses();
  }, 60_000);

  it('#48 runs with the default interpreter (python3 on the PATH: /usr/bin/python3) to SUCCESS, under the team uid', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const code = 'import os, sys; print("ran by", os.path.realpath(sys.executable), "uid", os.getuid(), "ok", sum(range(10)))';
    await api('POST', '/api/v1/tasks', { name: 'deployed_python', schedule: { type: 'none' }, exec: { type: 'python', code }, timeoutSeconds: 30, retry: { max: 0 } });
    const { id } = await api<{ id: string }>('POST', '/api/v1/tasks/deployed_python/trigger', {});
    const done = await waitFor(
      async () => {
        const detail = await api<{ state: string; reason: string | null; executions: Array<{ workerId: string | null; error: string | null }> }>('GET', `/api/v1/instances/${id}`);
        return ['SUCCESS', 'FAILED', 'CANCELED'].includes(detail.state) ? detail : null;
      },
      { description: `instance ${id} final`, timeoutMs: 30_000, intervalMs: 200 },
    );
    expect({ state: done.state, worker: done.executions[0]?.workerId, error: done.executions[0]?.error ?? null }).toEqual({ state: 'SUCCESS', worker: workerId, error: null });
    const log = await waitFor(
      async () => {
        const res = await fetch(`${adminUrl}/api/v1/instances/${id}/log`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        const text = await res.text();
        return text.includes('ran by') ? text : null;
      },
      { description: 'job output stored', timeoutMs: 10_000, intervalMs: 200 },
    );
    const realPython = spawnSync(DEBIAN_PYTHON, ['-c', 'import os, sys; print(os.path.realpath(sys.executable))'], { encoding: 'utf8' }).stdout.trim();
    expect(log).toContain(`ran by ${realPython} uid 47141 ok 45`);
  }, 60_000);
});
