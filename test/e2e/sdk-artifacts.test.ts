// #48 "a test installs each packed artifact into an empty folder/venv outside the workspace and
// runs an executor with it against a real ax". A real stack (admin-api, broker and worker
// processes on MySQL, Redis and RabbitMQ) calls:
//   - Node: `pnpm pack` of packages/sdk (ax-scheduler-sdk) → `npm install <tarball>` into an
//     empty folder under the system temp dir (its dependencies come from the npm registry, or the
//     npm cache) → an executor script there importing `ax-scheduler-sdk` (sync answer, and 202 then
//     a signed report) → both runs end SUCCESS;
//   - Python: packages/sdk-python/scripts/build.py (setuptools' PEP 517 hooks, offline) → sdist and
//     wheel → `python3 -m venv` → `pip install --no-index <wheel>` → the SDK's unittest suite
//     passes against the installed copy, and examples/executor.py run by the venv's python (from
//     a folder without the sources) gets a run to SUCCESS.
// Needs `pnpm build` (the services run their dist/; the tarball packs packages/sdk/dist), npm,
// and a python3 with setuptools and wheel (python3-setuptools, python3-wheel): under CI=true a
// missing one fails (missingRequirement).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  assertNoLeftoverProcesses,
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  dumpAllProcessOutput,
  missingRequirement,
  repoRoot,
  startProcess,
  startService,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
  type ManagedProcess,
} from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';

const ROOT = repoRoot();
const NODE_SDK_DIR = join(ROOT, 'packages', 'sdk');
const PYTHON_SDK_DIR = join(ROOT, 'packages', 'sdk-python');
const NODE_SDK = JSON.parse(readFileSync(join(NODE_SDK_DIR, 'package.json'), 'utf8')) as { name: string; version: string };
const PYTHON_ENV = { PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' };

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[], options: { cwd?: string; env?: Record<string, string> } = {}): Run {
  const result = spawnSync(command, [...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, encoding: 'utf8', timeout: 45_000 });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function ok(command: string, args: readonly string[], options: { cwd?: string; env?: Record<string, string> } = {}): string {
  const result = run(command, args, options);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status}):\n${result.stderr}\n${result.stdout}`);
  return result.stdout;
}

const hasNpm = spawnSync('npm', ['--version'], { encoding: 'utf8' }).status === 0;
/** The first interpreter that can build the wheel offline (setuptools, plus wheel when setuptools < 70.1). */
const builderPython = [process.env.AX_TEST_PYTHON, 'python3', '/usr/bin/python3']
  .filter((p): p is string => p !== undefined && p !== '')
  .find((python) => {
    const probe = spawnSync(python, ['-c', 'import setuptools, sys; v = tuple(int(p) for p in setuptools.__version__.split(".")[:2]); (v >= (70, 1)) or __import__("wheel"); import venv, ensurepip'], {
      encoding: 'utf8',
    });
    return probe.status === 0;
  });

const ns = uniqueNamespace('axartifacts');
const ADMIN_TOKEN = `axt_e2e_artifacts_admin_${Math.random().toString(36).slice(2)}`;
const EXECUTOR_SECRET = 'e2e-artifacts-executor-secret-0123456789';
const TEAM = 'artifacts';
const WORKER_ID = 'e2e-artifacts-w1';
const WAIT_MS = 30_000;
/** Everything this file writes outside the repository: the tarball, the app, the wheel, the venv. */
const scratch = mkdtempSync(join(tmpdir(), 'ax-sdk-artifacts-'));

let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
let adminUrl = '';
let teamKey = '';

interface InstanceDetail {
  state: string;
  reason: string | null;
  executions: Array<{ executionId: string; workerId: string | null; error: string | null }>;
}

async function api<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text === '' ? {} : JSON.parse(text)) as T;
}

/** Registers an http task at `url`, triggers it and waits for its final state. */
async function runTask(name: string, url: string): Promise<InstanceDetail> {
  await api('POST', '/api/v1/tasks', { name, team: TEAM, schedule: { type: 'none' }, exec: { type: 'http', url }, timeoutSeconds: 60, retry: { max: 0 } });
  const { id } = await api<{ id: string }>('POST', `/api/v1/tasks/${name}/trigger`, { params: {} });
  return waitFor(
    async () => {
      const detail = await api<InstanceDetail>('GET', `/api/v1/instances/${id}`);
      return ['SUCCESS', 'FAILED', 'CANCELED'].includes(detail.state) ? detail : null;
    },
    { description: `instance ${id} of ${name} final`, timeoutMs: WAIT_MS, intervalMs: 200 },
  );
}

async function listeningUrl(executor: ManagedProcess): Promise<string> {
  const line = await executor.waitForLine(/listening on http:\/\/\S+/);
  return /listening on (http:\/\/\S+)/.exec(line)?.[1] ?? '';
}

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(ns);
  amqp = await createTestAmqp(ns);
  const env = { AX_MYSQL_URL: db.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'warn', AX_EXECUTOR_SECRET: EXECUTOR_SECRET, AX_WORKER_DATA_DIR: join(scratch, 'worker-data') };
  adminUrl = (await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } })).baseUrl;
  await startService('broker', { env });
  await startService('worker', { env: { ...env, AX_WORKER_ID: WORKER_ID, AX_WORKER_SLOTS: '2', AX_HTTP_EXECUTOR_ALLOW: '127.0.0.1' } });
  await api('POST', '/api/v1/teams', { name: TEAM, description: 'the packed SDKs e2e team' });
  teamKey = (await api<{ key: string }>('GET', `/api/v1/teams/${TEAM}/executor-key`)).key;
  await waitFor(async () => (await api<{ items: Array<{ id: string }> }>('GET', '/api/v1/workers')).items.some((w) => w.id === WORKER_ID), {
    description: `worker ${WORKER_ID} registered`,
    timeoutMs: WAIT_MS,
    intervalMs: 200,
  });
}, 120_000);

afterAll(async () => {
  await stopAllProcesses();
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(scratch, { recursive: true, force: true });
  assertNoLeftoverProcesses();
}, 60_000);

describe.skipIf(missingRequirement(it, { name: 'npm', present: hasNpm, install: 'npm ships with Node.js' }))('the Node SDK tarball (pnpm pack)', () => {
  it('#48 installs with npm into an empty folder outside the workspace, with types, README, LICENSE and no workspace: range, and serves a real ax: sync and async runs end SUCCESS', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    expect(existsSync(join(NODE_SDK_DIR, 'dist', 'index.js')), 'packages/sdk/dist is missing: run `pnpm build` first').toBe(true);
    const packDir = join(scratch, 'pack');
    mkdirSync(packDir);
    // the dist/ of `pnpm build` as is: prepack would delete it under the other test files' feet
    ok('pnpm', ['pack', '--config.ignore-scripts=true', '--pack-destination', packDir], { cwd: NODE_SDK_DIR });
    const tarball = join(packDir, `${NODE_SDK.name}-${NODE_SDK.version}.tgz`);
    expect(existsSync(tarball)).toBe(true);

    const app = join(scratch, 'node-app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'artifact-check', private: true, type: 'module' }));
    ok('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball], { cwd: app });
    const installed = join(app, 'node_modules', NODE_SDK.name);
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ name: NODE_SDK.name, version: NODE_SDK.version, license: 'Apache-2.0', types: './dist/index.d.ts' });
    expect(JSON.stringify(manifest)).not.toContain('workspace:');
    for (const file of ['README.md', 'LICENSE', 'CHANGELOG.md', 'dist/index.d.ts', 'dist/express.d.ts']) expect(existsSync(join(installed, file)), file).toBe(true);
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toBe(readFileSync(join(ROOT, 'LICENSE'), 'utf8'));

    writeFileSync(
      join(app, 'executor.mjs'),
      `import { createServer } from 'node:http';
import { axExecutorApp, createAxClient } from '${NODE_SDK.name}';
const keys = { team: process.env.AX_TEAM, keys: { 1: process.env.AX_KEY } };
const client = createAxClient({ baseUrl: process.env.AX_ADMIN_URL, keys });
const server = createServer(axExecutorApp({
  '/ax/sync': { keys, client, handler: async (ctx) => ({ success: true, message: 'node sdk from ' + import.meta.resolve('${NODE_SDK.name}') }) },
  '/ax/later': { keys, client, handler: async (ctx) => {
    setTimeout(() => ctx.report({ success: true }).then(() => console.log('reported ' + ctx.executionId), (e) => console.log('report failed ' + e.message)), 100);
    return ctx.accepted();
  } },
}));
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`,
    );
    const executor = await startProcess({
      name: 'node-sdk-tarball-executor',
      command: process.execPath,
      args: ['executor.mjs'],
      cwd: app,
      env: { AX_TEAM: TEAM, AX_KEY: teamKey, AX_ADMIN_URL: adminUrl, NODE_OPTIONS: undefined },
      readyLine: /listening on/,
    });
    const base = await listeningUrl(executor);

    const sync = await runTask('artifact_node_sync', `${base}/ax/sync`);
    expect({ state: sync.state, reason: sync.reason }).toEqual({ state: 'SUCCESS', reason: null });
    const later = await runTask('artifact_node_later', `${base}/ax/later`);
    expect({ state: later.state, reason: later.reason }).toEqual({ state: 'SUCCESS', reason: null });
    expect(await executor.waitForLine(`reported ${later.executions[0]?.executionId ?? '?'}`, 10_000)).toBeTruthy();
    // the SDK the executor ran is the installed copy, not the workspace's
    const resolved = run(process.execPath, ['--input-type=module', '-e', `console.log(import.meta.resolve('${NODE_SDK.name}'))`], { cwd: app }).stdout.trim();
    expect(resolved).toBe(`file://${join(installed, 'dist', 'index.js')}`);
  }, 60_000);
});

describe.skipIf(
  missingRequirement(it, { name: 'python3 with setuptools and wheel', present: builderPython !== undefined, install: 'apt-get install python3 python3-venv python3-setuptools python3-wheel' }),
)('the Python SDK wheel (scripts/build.py)', () => {
  it('#48 builds an sdist and a wheel offline, installs the wheel with pip --no-index into a fresh venv, passes its tests there, and serves a real ax: the run ends SUCCESS', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const python = builderPython ?? 'python3';
    const dist = join(scratch, 'python-dist');
    const [sdist, wheel] = ok(python, [join(PYTHON_SDK_DIR, 'scripts', 'build.py'), dist], { env: PYTHON_ENV }).trim().split('\n');
    expect(sdist).toMatch(/ax[-_]scheduler[-_]sdk-0\.\d+\.\d+\.tar\.gz$/);
    expect(wheel).toMatch(/ax_scheduler_sdk-0\.\d+\.\d+-py3-none-any\.whl$/);
    expect(readdirSync(dist).sort()).toHaveLength(2);
    // nothing written into the work tree
    expect(readdirSync(PYTHON_SDK_DIR).filter((f) => f === 'build' || f === 'dist' || f.endsWith('.egg-info'))).toEqual([]);

    const venv = join(scratch, 'venv');
    ok(python, ['-m', 'venv', venv]);
    const venvPython = join(venv, 'bin', 'python');
    ok(venvPython, ['-m', 'pip', 'install', '--no-index', '--no-deps', '--disable-pip-version-check', wheel ?? '']);

    // a folder with the tests and the example only: `ax_sdk` can come from the venv alone
    const work = join(scratch, 'python-work');
    cpSync(join(PYTHON_SDK_DIR, 'tests'), join(work, 'tests'), { recursive: true, filter: (src) => !src.includes('__pycache__') });
    cpSync(join(PYTHON_SDK_DIR, 'examples', 'executor.py'), join(work, 'executor.py'));
    const where = ok(venvPython, ['-c', 'import ax_sdk, importlib.metadata as m; d = m.distribution("ax-scheduler-sdk"); print(ax_sdk.__file__); print(d.metadata["License"]); print(d.version); print(any(str(f).endswith("LICENSE") for f in d.files))'], {
      cwd: work,
      env: PYTHON_ENV,
    })
      .trim()
      .split('\n');
    expect(where[0]?.startsWith(venv)).toBe(true);
    expect(where.slice(1)).toEqual(['Apache-2.0', expect.stringMatching(/^0\.\d+\.\d+$/) as unknown, 'True']);

    const tests = run(venvPython, ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.'], { cwd: work, env: PYTHON_ENV });
    if (tests.status !== 0) throw new Error(`the SDK's tests failed against the installed wheel:\n${tests.stderr}`);
    expect(Number(/Ran (\d+) tests?/.exec(tests.stderr)?.[1])).toBeGreaterThanOrEqual(30);

    const executor = await startProcess({
      name: 'python-sdk-wheel-executor',
      command: venvPython,
      args: ['executor.py'],
      cwd: work,
      env: { ...PYTHON_ENV, AX_TEAM: TEAM, AX_EXECUTOR_KEYS: `1:${teamKey}`, AX_ADMIN_URL: adminUrl, HOST: '127.0.0.1', PORT: '0', AX_REPORT_DELAY_S: '0.2' },
      readyLine: /listening on http:\/\/\S+/,
    });
    const url = await listeningUrl(executor);
    const done = await runTask('artifact_python_wheel', url);
    expect({ state: done.state, reason: done.reason }).toEqual({ state: 'SUCCESS', reason: null });
    expect(await executor.waitForLine(`reported ${done.executions[0]?.executionId ?? '?'} `, 10_000)).toMatch(/success=True/);
  }, 60_000);
});
