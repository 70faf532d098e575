// Enrolled worker processes (`services/worker/dist/main.js`: run `pnpm build` first), against the
// real RabbitMQ and Redis and a stand-in for admin-api's GET /api/v1/workers/self (the real one is
// in test/e2e/worker-enrollment.test.ts). ADMIN-API.md "Workers", DESIGN R24/R25, issue #44.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Each test starts a worker process (ready within 20 s) and then waits on Redis, RabbitMQ's
 * management API (up to 15 s) and the worker's replies: more than vitest's 30 s default when CI
 * runs two files at once on two cores (stop 55's pre-check timed out at 29 s).
 */
const PROCESS_TEST_TIMEOUT_MS = 90_000;
import { amqpUserOf, defaultManagementUrl, deleteEnrollmentBusUser, putEnrollmentBusUser, vhostOfAmqpUrl, type BusAdminOptions } from '@ax/bus';
import { busUserOf, deriveExecutorKey, encodeMessage, enrollmentLoginPassword, newWorkerCredential, redisUserOf, signatureMatches, type DispatchItem } from '@ax/core';
import { redisKeys } from '@ax/kit';
import { deleteEnrollmentRedisUser, putEnrollmentRedisUser, readRegistration } from '@ax/redis';
import { assertNoLeftoverProcesses, freePort, repoRoot, startProcess, stopAllProcesses, testAmqpUrl, uniqueNamespace, waitFor, type ManagedProcess } from '@ax/testing';
import { dispatchItem } from './testing/fixtures.js';
import { startDriver, type Driver } from './testing/harness.js';

const namespace = uniqueNamespace('axwe');
const keys = redisKeys(namespace);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'ax-worker-enroll-'));
const mainJs = path.join(repoRoot(), 'services/worker/dist/main.js');
const MASTER = 'test-master-secret-0123456789';
// Unique per run: RabbitMQ's connection list (the management API) is the server's, and the
// worker names its connection by its id, which carries the enrollment's.
const E = `enr-${Math.random().toString(36).slice(2).padEnd(12, '0').slice(0, 12)}`;
const credential = newWorkerCredential(E);
let driver: Driver;
let admin: BusAdminOptions;
let server: Server;
let adminUrl: string;
/** What the stand-in admin-api answers, by credential (anything else: 401). */
const answers = new Map<string, { status: number; body: unknown }>();
let asked = 0;

function bootstrap(eid: string, teams: string[], keyVersions: Record<string, number[]> = {}): { status: number; body: unknown } {
  return {
    status: 200,
    body: {
      enrollment: { id: eid, name: `pool-${eid.slice(-4)}`, teams, tags: [] },
      workerIdPrefix: `${eid}.`,
      amqp: { username: busUserOf(namespace, eid), password: enrollmentLoginPassword(MASTER, 'amqp', namespace, eid) },
      redis: { username: redisUserOf(namespace, eid), password: enrollmentLoginPassword(MASTER, 'redis', namespace, eid) },
      keys: Object.entries(keyVersions).flatMap(([team, versions]) => versions.map((version) => ({ team, version, key: deriveExecutorKey(MASTER, team, version) }))),
    },
  };
}

function credentialFile(name: string, content: string): string {
  const file = path.join(tmp, name);
  writeFileSync(file, content, { mode: 0o600 });
  return file;
}

function baseEnv(extra: Record<string, string | undefined>): Record<string, string | undefined> {
  return {
    AX_NAMESPACE: namespace,
    AX_WORKER_DATA_DIR: path.join(tmp, 'data'),
    AX_HEARTBEAT_INTERVAL_MS: '500',
    AX_LEASE_TTL_MS: '2000',
    AX_WORKER_SLOTS: '4',
    AX_PLUGIN_DIR: path.join(tmp, 'plugins'),
    AX_JOB_ISOLATION: 'off',
    AX_EXECUTOR_SECRET: undefined,
    AX_WORKER_TEAMS: undefined,
    AX_WORKER_ID: undefined,
    ...extra,
  };
}

/** Starts a worker that must refuse to start; resolves with its stderr lines. */
async function refusedStart(name: string, env: Record<string, string | undefined>): Promise<string[]> {
  const proc = await startProcess({ name, command: process.execPath, args: [mainJs], env: baseEnv({ AX_HTTP_PORT: String(await freePort()), ...env }), cwd: tmp });
  expect(await proc.waitExit(15_000), proc.output()).toEqual({ code: 2, signal: null });
  return proc.lines().filter((l) => l.stream === 'stderr').map((l) => l.text);
}

async function managementGet(pathname: string): Promise<unknown> {
  const base = new URL(admin.managementUrl);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`).toString('base64')}`;
  const response = await fetch(`${base.protocol}//${base.host}/api${pathname}`, { headers: { authorization: auth } });
  return response.json();
}

/** A dispatch the way brokers send it: by queue name on the default exchange (ENROLLMENT-CONTRACT point 2). */
function dispatchByQueue(workerId: string, items: DispatchItem[]): Promise<void> {
  return driver.bus.publish('', driver.bus.topology.workerQueue(workerId), encodeMessage({ v: 1, kind: 'dispatch', workerId, items }));
}

beforeAll(async () => {
  driver = await startDriver(namespace);
  mkdirSync(path.join(tmp, 'plugins'));
  admin = { managementUrl: process.env['AX_AMQP_MANAGEMENT_URL'] ?? defaultManagementUrl(testAmqpUrl()), vhost: vhostOfAmqpUrl(testAmqpUrl()) };
  server = createServer((req: IncomingMessage, res) => {
    asked += 1;
    if (req.url !== '/api/v1/workers/self') return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"NOT_FOUND"}}');
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const answer = token !== undefined ? answers.get(token) : undefined;
    const { status, body } = answer ?? { status: 401, body: { error: { code: 'UNAUTHENTICATED', message: 'unknown credential' } } };
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  adminUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await stopAllProcesses();
  assertNoLeftoverProcesses();
  await deleteEnrollmentBusUser(admin, namespace, E).catch(() => undefined);
  await deleteEnrollmentRedisUser(driver.redis.redis, keys, E).catch(() => undefined);
  await driver.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(tmp, { recursive: true, force: true });
});

describe('an enrolled worker that must not start: one line naming the thing, exit 2, nothing connected', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('credential file missing, unreadable or not a credential', async () => {
    const missing = await refusedStart('enr-missing', { AX_WORKER_CREDENTIAL_FILE: path.join(tmp, 'nope'), AX_ADMIN_URL: adminUrl });
    expect(missing).toHaveLength(1);
    expect(missing[0]).toMatch(/^ax: AX_WORKER_CREDENTIAL_FILE=".*nope" is invalid: expected a readable file holding a worker credential .*\(ENOENT\)/);
    const folder = await refusedStart('enr-folder', { AX_WORKER_CREDENTIAL_FILE: tmp, AX_ADMIN_URL: adminUrl });
    expect(folder).toHaveLength(1);
    expect(folder[0]).toMatch(/^ax: AX_WORKER_CREDENTIAL_FILE=.* is invalid: .*\(EISDIR\)/);
    const garbage = await refusedStart('enr-garbage', { AX_WORKER_CREDENTIAL_FILE: credentialFile('garbage', 'axw_not-a-credential-at-all\n'), AX_ADMIN_URL: adminUrl });
    expect(garbage).toHaveLength(1);
    expect(garbage[0]).toMatch(/^ax: AX_WORKER_CREDENTIAL_FILE=.* is invalid: .*\(its content is not a credential\)/);
    expect(garbage[0]).not.toContain('axw_not-a');
    // Jobs run under other uids: a credential file every user may read would be theirs too (R25).
    const open = credentialFile('world-readable', `${credential}\n`);
    chmodSync(open, 0o644);
    const readable = await refusedStart('enr-readable', { AX_WORKER_CREDENTIAL_FILE: open, AX_ADMIN_URL: adminUrl, AX_JOB_ISOLATION: 'uid', AX_JOB_UIDS: 'beta=47201' });
    expect(readable).toHaveLength(1);
    expect(readable[0]).toMatch(/^ax: AX_WORKER_CREDENTIAL_FILE=.* is invalid: the file is readable by every user \(mode 0644\): a job could read the credential/);
  });

  it('AX_ADMIN_URL missing with a credential; AX_EXECUTOR_SECRET given together with one (R25)', async () => {
    const file = credentialFile('good', `${credential}\n`);
    const noAdmin = await refusedStart('enr-noadmin', { AX_WORKER_CREDENTIAL_FILE: file });
    expect(noAdmin).toEqual(['ax: AX_ADMIN_URL is not set: required with AX_WORKER_CREDENTIAL_FILE: the worker asks admin-api there for its enrollment; expected a http:// or https:// URL']);
    const withSecret = await refusedStart('enr-secret', { AX_WORKER_CREDENTIAL_FILE: file, AX_ADMIN_URL: adminUrl, AX_EXECUTOR_SECRET: MASTER });
    expect(withSecret).toHaveLength(1);
    expect(withSecret[0]).toMatch(/^ax: AX_EXECUTOR_SECRET=<redacted> is invalid: a worker with AX_WORKER_CREDENTIAL_FILE is never given the master secret/);
    expect(withSecret[0]).not.toContain(MASTER);
  });

  it('a credential admin-api does not accept (401), an enrollment with no teams, AX_WORKER_TEAMS outside the enrollment, an AX_ADMIN_URL that is not admin-api', async () => {
    const unknown = newWorkerCredential('enr-unknownxxxxx');
    const refused = await refusedStart('enr-401', { AX_WORKER_CREDENTIAL_FILE: credentialFile('unknown', unknown), AX_ADMIN_URL: adminUrl });
    expect(refused).toEqual([`ax: AX_WORKER_CREDENTIAL_FILE="${path.join(tmp, 'unknown')}": admin-api (${adminUrl}) does not accept the credential of enrollment enr-unknownxxxxx: unknown or revoked`]);

    const empty = newWorkerCredential('enr-noteamsxxxxx');
    answers.set(empty, bootstrap('enr-noteamsxxxxx', []));
    const noTeams = await refusedStart('enr-noteams', { AX_WORKER_CREDENTIAL_FILE: credentialFile('noteams', empty), AX_ADMIN_URL: adminUrl });
    expect(noTeams).toEqual(['ax: enrollment enr-noteamsxxxxx (pool-xxxx) has no teams: a worker of it could run nothing']);

    const beta = newWorkerCredential('enr-betaonlyxxxx');
    answers.set(beta, bootstrap('enr-betaonlyxxxx', ['beta']));
    const wider = await refusedStart('enr-wider', { AX_WORKER_CREDENTIAL_FILE: credentialFile('beta', beta), AX_ADMIN_URL: adminUrl, AX_WORKER_TEAMS: 'alpha,beta' });
    expect(wider).toEqual([
      `ax: AX_WORKER_TEAMS="alpha,beta" is invalid: team alpha is not among the enrollment's (beta): AX_WORKER_TEAMS may only narrow them`,
    ]);

    const gpu = newWorkerCredential('enr-gpuonlyxxxxx');
    const gpuAnswer = bootstrap('enr-gpuonlyxxxxx', ['beta']);
    answers.set(gpu, { status: 200, body: { ...(gpuAnswer.body as object), enrollment: { id: 'enr-gpuonlyxxxxx', name: 'gpu-pool', teams: ['beta'], tags: ['gpu'] } } });
    const tagged = await refusedStart('enr-tags', { AX_WORKER_CREDENTIAL_FILE: credentialFile('gpu', gpu), AX_ADMIN_URL: adminUrl, AX_WORKER_TAGS: 'gpu,pci' });
    expect(tagged).toEqual([`ax: AX_WORKER_TAGS="gpu,pci" is invalid: tag pci is not among the enrollment's (gpu)`]);

    const elsewhere = await refusedStart('enr-elsewhere', { AX_WORKER_CREDENTIAL_FILE: credentialFile('beta2', beta), AX_ADMIN_URL: `${adminUrl}/somewhere-else` });
    expect(elsewhere).toHaveLength(1);
    expect(elsewhere).toEqual([`ax: AX_ADMIN_URL="${adminUrl}/somewhere-else": GET ${adminUrl}/somewhere-else/api/v1/workers/self answered 404, not a worker's enrollment`]);
    // Nothing of theirs reached the registry.
    expect(await driver.redis.redis.keys(`${namespace}:worker:enr-*`)).toEqual([]);
  });

  it('#44 NODE_ENV=production without a credential file (the legacy mode: master secret and service logins) is refused: it must be enrolled', async () => {
    const workerId = `${namespace}-unenrolled`;
    const legacy = await refusedStart('unenrolled-production', {
      NODE_ENV: 'production',
      AX_EXECUTOR_SECRET: 'a-real-looking-master-secret-0123456789',
      AX_HTTP_EXECUTOR_ALLOW: 'orders.internal',
      AX_JOB_ISOLATION: 'uid',
      AX_JOB_UIDS: 'default=47202',
      AX_WORKER_ID: workerId,
    });
    expect(legacy).toEqual([
      `ax: AX_WORKER_CREDENTIAL_FILE is not set: required when NODE_ENV=production: a worker must be enrolled (ADMIN-API.md "Workers"), never run with AX_EXECUTOR_SECRET and the services' logins; see docs/deploy.md "An enrolled worker"`,
    ]);
    // it stopped before connecting: no registry entry, no queue of its own
    expect(await driver.redis.redis.exists(keys.worker(workerId))).toBe(0);
  });
});

describe('without a credential file (ENROLLMENT-CONTRACT point 6)', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('the worker runs unenrolled as before: service login, bound queues, AX_EXECUTOR_SECRET; its publishes carry its login as user_id', async () => {
    const proc = await startProcess({
      name: 'worker-unenrolled',
      command: process.execPath,
      args: [mainJs],
      env: baseEnv({ AX_HTTP_PORT: String(await freePort()), AX_WORKER_ID: 'w-plain', AX_EXECUTOR_SECRET: MASTER }),
      cwd: tmp,
      readyLine: 'worker consuming',
      readyTimeoutMs: 20_000,
    });
    const events = `${namespace}.test-plain-events`;
    await driver.amqp.channel.assertQueue(events, { durable: false });
    await driver.amqp.channel.bindQueue(events, driver.bus.topology.eventsExchange, '');
    const item = dispatchItem({ exec: { type: 'shell', command: ['/bin/sh', '-c', 'echo plain'], shell: false } });
    await driver.dispatch('w-plain', [item]); // by the binding to <ns>.dispatch, as older brokers send
    expect(await waitFor(() => driver.resultOf(item.executionId), { description: 'result' })).toMatchObject({ outcome: 'SUCCESS' });
    const users = new Set<unknown>();
    for (;;) {
      const m = await driver.amqp.channel.get(events, { noAck: true });
      if (m === false) break;
      users.add(m.properties.userId);
    }
    expect([...users]).toEqual([amqpUserOf(testAmqpUrl())]);
    expect(await driver.redis.redis.smembers(keys.workers)).toContain('w-plain');
    expect(await proc.stop({ graceMs: 10_000 })).toEqual({ code: 0, signal: null });
    await driver.amqp.channel.deleteQueue(events);
  });
});

describe('an enrolled worker (R24, R25)', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let proc: ManagedProcess;
  const workerId = `${E}.host-a`;
  let calls: Array<{ headers: IncomingMessage['headers']; body: string; path: string }> = [];
  let endpoint: Server;
  let endpointUrl: string;

  beforeAll(async () => {
    await putEnrollmentBusUser(admin, namespace, E, enrollmentLoginPassword(MASTER, 'amqp', namespace, E));
    await putEnrollmentRedisUser(driver.redis.redis, keys, E, enrollmentLoginPassword(MASTER, 'redis', namespace, E));
    answers.set(credential, bootstrap(E, ['beta', 'gamma'], { beta: [1] }));
    endpoint = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        calls.push({ headers: req.headers, body, path: req.url ?? '' });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    endpointUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/run`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => endpoint.close(() => resolve()));
  });

  it('starts from the credential file alone: its id, its teams narrowed, its own RabbitMQ and Redis users, and no master secret', async () => {
    const port = await freePort();
    proc = await startProcess({
      name: 'worker-enrolled',
      command: process.execPath,
      args: [mainJs],
      env: baseEnv({
        AX_HTTP_PORT: String(port),
        AX_WORKER_CREDENTIAL_FILE: credentialFile('enrolled', `${credential}\n`),
        AX_ADMIN_URL: adminUrl,
        AX_WORKER_ID: 'host-a',
        AX_WORKER_TEAMS: 'beta',
        AX_WORKER_REFRESH_MS: '500',
      }),
      cwd: tmp,
      readyLine: 'worker consuming',
      readyTimeoutMs: 20_000,
    });
    const entry = await waitFor(() => readRegistration(driver.redis.redis, keys, workerId), { description: 'registry entry' });
    expect(entry.teams).toEqual(['beta']);
    expect(await driver.redis.redis.smembers(keys.enrollmentWorkers(E))).toEqual([workerId]);
    const connections = (await waitFor(
      async () => {
        const all = (await managementGet('/connections')) as Array<{ user: string; client_properties?: { connection_name?: string } }>;
        const mine = all.filter((c) => c.client_properties?.connection_name === `ax-worker-${workerId}`);
        return mine.length > 0 ? mine : undefined;
      },
      { description: 'the worker connection in the management API', timeoutMs: 15_000 },
    ));
    expect(connections.map((c) => c.user)).toEqual([busUserOf(namespace, E)]);
    expect(proc.output()).not.toContain('AX_EXECUTOR_SECRET is not set');
  });

  it("runs its team's items, refuses another team's alone without running it, and every reply carries its validated user", async () => {
    const events = `${namespace}.test-enrolled-events`;
    await driver.amqp.channel.assertQueue(events, { durable: false });
    await driver.amqp.channel.bindQueue(events, driver.bus.topology.eventsExchange, '');
    const marker = path.join(tmp, 'alpha-ran');
    const beta = dispatchItem({ team: 'beta', exec: { type: 'shell', command: ['/bin/sh', '-c', 'echo beta-ok'], shell: false } });
    const alpha = dispatchItem({ team: 'alpha', exec: { type: 'shell', command: ['/bin/sh', '-c', `touch ${marker}`], shell: false } });
    await dispatchByQueue(workerId, [beta, alpha]);
    const result = await waitFor(() => driver.resultOf(beta.executionId), { description: 'beta result' });
    expect(result.outcome).toBe('SUCCESS');
    const refusal = await waitFor(() => driver.collected.refusals.find((r) => r.executionId === alpha.executionId), { description: 'alpha refusal' });
    expect(refusal.reason).toBe('EXPIRED');
    expect(refusal.detail).toContain('team alpha is not one this worker serves (beta');
    expect(driver.resultOf(alpha.executionId)).toBeUndefined();
    expect(driver.collected.acks.some((a) => a.executionId === alpha.executionId)).toBe(false);
    const users = new Set<string | undefined>();
    for (;;) {
      const m = await driver.amqp.channel.get(events, { noAck: true });
      if (m === false) break;
      users.add(m.properties.userId as string | undefined);
    }
    expect([...users]).toEqual([busUserOf(namespace, E)]);
    await new Promise((r) => setTimeout(r, 200));
    expect(existsSync(marker)).toBe(false);
  });

  it('signs http calls with the key it was given, and a key rotated on the server reaches it without a restart', async () => {
    calls = [];
    const item = dispatchItem({ team: 'beta', keyVersion: 1, exec: { type: 'http', method: 'POST', url: endpointUrl } });
    await dispatchByQueue(workerId, [item]);
    expect(await waitFor(() => driver.resultOf(item.executionId), { description: 'http result' })).toMatchObject({ outcome: 'SUCCESS' });
    const first = calls[0];
    expect(first).toBeDefined();
    const signed = (c: NonNullable<typeof first>) => ({ timestamp: String(c.headers['x-ax-timestamp']), method: 'POST', path: c.path, body: c.body });
    expect(signatureMatches(deriveExecutorKey(MASTER, 'beta', 1), signed(first!), String(first!.headers['x-ax-signature']))).toBe(true);
    // Rotation: the server now gives version 2 (and 1 during the grace).
    answers.set(credential, bootstrap(E, ['beta', 'gamma'], { beta: [2, 1] }));
    calls = [];
    const rotated = dispatchItem({ team: 'beta', keyVersion: 2, previousKeyValidUntil: new Date(Date.now() + 3_600_000).toISOString(), exec: { type: 'http', method: 'POST', url: endpointUrl } });
    await dispatchByQueue(workerId, [rotated]);
    expect(await waitFor(() => driver.resultOf(rotated.executionId), { description: 'rotated http result' })).toMatchObject({ outcome: 'SUCCESS' });
    const second = calls[0]!;
    expect(signatureMatches(deriveExecutorKey(MASTER, 'beta', 2), signed(second), String(second.headers['x-ax-signature']))).toBe(true);
    expect(signatureMatches(deriveExecutorKey(MASTER, 'beta', 1), signed(second), String(second.headers['x-ax-previous-signature']))).toBe(true);
  });

  it('teams taken from the enrollment stop being served at the next refresh', async () => {
    answers.set(credential, bootstrap(E, ['gamma'], { gamma: [1] }));
    const entry = await waitFor(
      async () => {
        const e = await readRegistration(driver.redis.redis, keys, workerId);
        return e !== null && (e.teams ?? []).length === 0 && e.draining ? e : undefined;
      },
      { description: 'the registry shows no team, draining', timeoutMs: 10_000 },
    );
    expect(entry.draining).toBe(true);
    const late = dispatchItem({ team: 'beta' });
    await dispatchByQueue(workerId, [late]);
    const refusal = await waitFor(() => driver.collected.refusals.find((r) => r.executionId === late.executionId), { description: 'refusal after the change' });
    expect(refusal.detail).toContain('(no team;');
    answers.set(credential, bootstrap(E, ['beta', 'gamma'], { beta: [2, 1] }));
  });

  it('revoked (admin-api answers 401, its users are deleted): takes no more work and exits 3 with one clear line', async () => {
    const before = asked;
    answers.delete(credential);
    await deleteEnrollmentBusUser(admin, namespace, E);
    await deleteEnrollmentRedisUser(driver.redis.redis, keys, E);
    const exit = await proc.waitExit(30_000);
    expect(exit).toEqual({ code: 3, signal: null });
    expect(asked).toBeGreaterThan(before);
    expect(proc.output()).toContain(`enrollment ${E} was revoked (admin-api no longer accepts its credential)`);
  });
});
