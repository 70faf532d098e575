// An enrolled worker with real processes (ADMIN-API.md "Workers", DESIGN R24/R25, issue #44):
// admin-api answers its credential at GET /api/v1/workers/self; the worker, given only the
// credential file and AX_ADMIN_URL (no AX_EXECUTOR_SECRET, no service login), registers as
// `<enrollment id>.<AX_WORKER_ID>`, connects to RabbitMQ as the enrollment's own user and runs a
// beta job dispatched by a real broker; a worker asking for a team outside its enrollment does
// not start. Needs `pnpm build` (the services run their dist/).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { defaultManagementUrl, deleteEnrollmentBusUser, vhostOfAmqpUrl, type BusAdminOptions } from '@ax/bus';
import { busUserOf } from '@ax/core';
import { redisKeys } from '@ax/kit';
import { deleteEnrollmentRedisUser, readRegistration } from '@ax/redis';
import {
  assertNoLeftoverProcesses,
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  dumpAllProcessOutput,
  serviceEntry,
  startProcess,
  startService,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
  type ManagedProcess,
} from '@ax/testing';

const ns = uniqueNamespace('axe2eenr');
const keys = redisKeys(ns);
const dataDir = mkdtempSync(join(tmpdir(), 'ax-e2e-enroll-'));
const ADMIN_TOKEN = `axt_e2e_enroll_admin_${Math.random().toString(36).slice(2)}`;
const EXECUTOR_SECRET = 'e2e-enroll-executor-secret-0123456789';
const WAIT_MS = 30_000;

let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
let busAdmin: BusAdminOptions;
let adminUrl = '';
let enrollment: { id: string; credential: string } | undefined;
let credentialFile = '';

async function api<T = Record<string, unknown>>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, json: (text === '' ? {} : JSON.parse(text)) as T };
}

/** An enrollment for `teams`, created through the API (admin-api makes its RabbitMQ and Redis users). */
async function createEnrollment(name: string, teams: string[]): Promise<{ id: string; credential: string }> {
  const created = await api<{ id: string; teams: string[]; credential: string }>('POST', '/api/v1/workers/enrollments', { name, teams });
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  expect(created.json.teams).toEqual(teams);
  return created.json;
}

async function managementGet(path: string): Promise<unknown> {
  const base = new URL(busAdmin.managementUrl);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`).toString('base64')}`;
  const res = await fetch(`${base.protocol}//${base.host}/api${path}`, { headers: { authorization: auth } });
  return res.json();
}

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(ns);
  amqp = await createTestAmqp(ns);
  busAdmin = { managementUrl: process.env['AX_AMQP_MANAGEMENT_URL'] ?? defaultManagementUrl(amqp.url), vhost: vhostOfAmqpUrl(amqp.url) };
  const env = { AX_MYSQL_URL: db.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'warn', AX_EXECUTOR_SECRET: EXECUTOR_SECRET };
  const admin = await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } });
  adminUrl = admin.baseUrl;
  await startService('broker', { env });
  for (const team of ['alpha', 'beta']) expect((await api('POST', '/api/v1/teams', { name: team })).status).toBe(201);
  enrollment = await createEnrollment('beta-pool', ['beta']);
  credentialFile = join(dataDir, 'worker-credential');
  writeFileSync(credentialFile, `${enrollment.credential}\n`, { mode: 0o400 });
});

afterAll(async () => {
  await stopAllProcesses();
  assertNoLeftoverProcesses();
  if (enrollment !== undefined) {
    await deleteEnrollmentBusUser(busAdmin, ns, enrollment.id).catch(() => undefined);
    if (redis !== undefined) await deleteEnrollmentRedisUser(redis.redis, keys, enrollment.id).catch(() => undefined);
  }
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The environment of an enrolled worker: where things are, its credential file, nothing else of ax's. */
function workerEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    AX_NAMESPACE: ns,
    AX_LOG_LEVEL: 'info',
    AX_WORKER_CREDENTIAL_FILE: credentialFile,
    AX_ADMIN_URL: adminUrl,
    AX_WORKER_DATA_DIR: join(dataDir, 'data'),
    AX_WORKER_SLOTS: '2',
    AX_EXECUTOR_SECRET: undefined,
    AX_MYSQL_URL: undefined,
    ...extra,
  };
}

describe('an enrolled worker against a real admin-api and broker', () => {
  let worker: ManagedProcess;

  it('starts from the credential file and AX_ADMIN_URL alone: registered as <eid>.<local>, connected as the enrollment user', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const { id } = enrollment!;
    worker = await startService('worker', { name: 'enrolled-worker', env: workerEnv({ AX_WORKER_ID: 'e2e-1' }) });
    const workerId = `${id}.e2e-1`;
    const entry = await waitFor(() => readRegistration(redis!.redis, keys, workerId), { description: 'registry entry', timeoutMs: WAIT_MS });
    expect(entry.teams).toEqual(['beta']);
    expect(await redis!.redis.smembers(keys.enrollmentWorkers(id))).toEqual([workerId]);
    const users = await waitFor(
      async () => {
        const all = (await managementGet('/connections')) as Array<{ user: string; client_properties?: { connection_name?: string } }>;
        const mine = all.filter((c) => c.client_properties?.connection_name === `ax-worker-${workerId}`).map((c) => c.user);
        return mine.length > 0 ? mine : undefined;
      },
      { description: "the worker's connection", timeoutMs: WAIT_MS },
    );
    expect(users).toEqual([busUserOf(ns, id)]);
  });

  it('runs a beta job dispatched by the broker end to end', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const task = await api('POST', '/api/v1/tasks', {
      name: 'beta_echo',
      team: 'beta',
      schedule: { type: 'none' },
      exec: { type: 'shell', command: ['/bin/sh', '-c', 'echo enrolled-ok'], shell: false },
      timeoutSeconds: 30,
      retry: { max: 0 },
    });
    expect(task.status, JSON.stringify(task.json)).toBe(201);
    const triggered = await api<{ id: string }>('POST', '/api/v1/tasks/beta_echo/trigger', { params: {} });
    expect(triggered.status).toBe(202);
    const final = await waitFor(
      async () => {
        const detail = (await api<{ state: string; executions: Array<{ workerId: string | null }> }>('GET', `/api/v1/instances/${triggered.json.id}`)).json;
        return ['SUCCESS', 'FAILED', 'CANCELED'].includes(detail.state) ? detail : undefined;
      },
      { description: 'the beta instance final', timeoutMs: WAIT_MS, intervalMs: 200 },
    );
    expect(final.state).toBe('SUCCESS');
    expect(final.executions.map((e) => e.workerId)).toEqual([`${enrollment!.id}.e2e-1`]);
  });

  it('a worker of the beta enrollment asking for alpha (AX_WORKER_TEAMS=alpha) does not start: one line, exit 2', async () => {
    const bad = await startProcess({ name: 'enrolled-alpha', command: process.execPath, args: [serviceEntry('worker')], env: workerEnv({ AX_WORKER_ID: 'e2e-alpha', AX_WORKER_TEAMS: 'alpha', AX_JOB_ISOLATION: 'off' }) });
    expect(await bad.waitExit(15_000)).toEqual({ code: 2, signal: null });
    const lines = bad.lines().filter((l) => l.stream === 'stderr').map((l) => l.text);
    expect(lines).toEqual([`ax: AX_WORKER_TEAMS="alpha" is invalid: team alpha is not among the enrollment's (beta): AX_WORKER_TEAMS may only narrow them`]);
    expect(await readRegistration(redis!.redis, keys, `${enrollment!.id}.e2e-alpha`)).toBeNull();
  });

  it('stops taking work and exits 3 once the enrollment is revoked', async () => {
    onTestFailed(() => dumpAllProcessOutput());
    const revoked = await api('DELETE', `/api/v1/workers/enrollments/${enrollment!.id}`);
    expect(revoked.status, JSON.stringify(revoked.json)).toBe(204);
    expect(await worker.waitExit(WAIT_MS)).toEqual({ code: 3, signal: null });
    expect(worker.output()).toContain(`enrollment ${enrollment!.id} was revoked`);
  });
});
