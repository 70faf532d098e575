// The Python SDK (packages/sdk-python, standard library only) against the Node SDK and a real
// stack. (1) Its unittest suite passes. (2) Signatures agree both ways: tests/vectors.json (read
// by the Python tests) is recomputed here with ax-scheduler-sdk's signV2, and headers signed by Python
// verify with ax-scheduler-sdk's verifySignature. (3) End to end with real processes, as
// team-http-executor.test.ts: admin-api → broker → worker → (signed v2 POST) →
// examples/executor.py (a child python3 process) → 202 → signed report → admin-api → broker →
// MySQL: the instance ends SUCCESS; a call with a bad signature sent to the example directly
// is refused with 401. Needs python3: under CI=true its absence fails (missingRequirement).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signedHeaders, signV2, verifySignature, type TeamKeys } from 'ax-scheduler-sdk';
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

const PYTHON = process.env.AX_TEST_PYTHON ?? 'python3';
const SDK_DIR = join(repoRoot(), 'packages', 'sdk-python');
/** No __pycache__ left in the work tree; output as it is printed. */
const PYTHON_ENV = { PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' };
const hasPython = spawnSync(PYTHON, ['--version'], { encoding: 'utf8' }).status === 0;

/** Runs python3 in packages/sdk-python (so `ax_sdk` imports) and returns what it printed. */
function python(args: readonly string[], input?: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(PYTHON, [...args], { cwd: SDK_DIR, env: { ...process.env, ...PYTHON_ENV }, input, encoding: 'utf8', timeout: 60_000 });
  if (run.error) throw run.error;
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

interface Vectors {
  signatures: Array<{ name: string; key: string; timestamp: string; method: string; path: string; body: string; signature: string }>;
  rotation: { team: string; previousKey: string; currentKey: string; method: string; path: string; body: string; headers: Record<string, string> };
}

describe.skipIf(missingRequirement(it, { name: PYTHON, present: hasPython, install: 'apt-get install python3' }))('Python SDK (packages/sdk-python)', () => {
  describe('unit tests and signature vectors', () => {
    it('#21 the Python unittest suite passes', () => {
      const run = python(['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.', '-v']);
      if (run.status !== 0) throw new Error(`python3 -m unittest failed (exit ${run.status}):\n${run.stderr}\n${run.stdout}`);
      // unittest reports on stderr: "Ran N tests … OK"
      const ran = /Ran (\d+) tests?/.exec(run.stderr);
      expect(Number(ran?.[1])).toBeGreaterThanOrEqual(30);
      expect(run.stderr).toMatch(/\nOK\b/);
    });

    it('#21 tests/vectors.json holds what the Node SDK computes (the Python tests verify these)', () => {
      const vectors = JSON.parse(readFileSync(join(SDK_DIR, 'tests', 'vectors.json'), 'utf8')) as Vectors;
      expect(vectors.signatures.length).toBeGreaterThanOrEqual(5);
      for (const v of vectors.signatures) {
        expect(signV2(v.key, { timestamp: v.timestamp, method: v.method, path: v.path, body: v.body }), v.name).toBe(v.signature);
      }
      const r = vectors.rotation;
      const timestamp = r.headers['x-ax-timestamp'] ?? '';
      expect(r.headers['x-ax-key-version']).toBe('2');
      expect(r.headers['x-ax-signature']).toBe(signV2(r.currentKey, { timestamp, method: r.method, path: r.path, body: r.body }));
      expect(r.headers['x-ax-previous-signature']).toBe(signV2(r.previousKey, { timestamp, method: r.method, path: r.path, body: r.body }));
    });

    it('#21 headers signed by the Python SDK verify with the Node SDK, and a changed body does not', () => {
      const keys: TeamKeys = { team: 'payments', keys: { 1: 'a'.repeat(64), 2: 'b'.repeat(64) } };
      const nowMs = 1_764_547_200_000;
      const cases = [
        { method: 'POST', path: '/api/v1/executions/0190a1b2/report', body: '{"success":true,"data":{"city":"Zürich"}}' },
        { method: 'POST', path: '/api/v1/executions/e%2F1/claim', body: '{}' },
        { method: 'post', path: '/ax/job?region=eu', body: '{"note":"café 😀"}' },
      ];
      const script = [
        'import json, sys',
        'from ax_sdk import TeamKeys, signed_headers',
        'cases = json.load(sys.stdin)',
        'keys = TeamKeys(cases["team"], {int(v): k for v, k in cases["keys"].items()})',
        'print(json.dumps([signed_headers(keys, method=c["method"], path=c["path"], body=c["body"].encode("utf-8"), timestamp_ms=cases["nowMs"]) for c in cases["requests"]]))',
      ].join('\n');
      const run = python(['-c', script], JSON.stringify({ team: keys.team, keys: keys.keys, nowMs, requests: cases }));
      expect(run.stderr).toBe('');
      const signed = JSON.parse(run.stdout) as Array<Record<string, string>>;
      expect(signed).toHaveLength(cases.length);
      cases.forEach((request, i) => {
        const h = signed[i] ?? {};
        // the same headers the Node SDK would send at that instant
        const node = signedHeaders(keys, request, nowMs);
        expect({ team: h['X-Ax-Team'], version: h['X-Ax-Key-Version'], timestamp: h['X-Ax-Timestamp'], signature: h['X-Ax-Signature'] }).toEqual({
          team: node['x-ax-team'],
          version: node['x-ax-key-version'],
          timestamp: node['x-ax-timestamp'],
          signature: node['x-ax-signature'],
        });
        const received = { team: h['X-Ax-Team'], keyVersion: h['X-Ax-Key-Version'], timestamp: h['X-Ax-Timestamp'], signature: h['X-Ax-Signature'] };
        expect(verifySignature({ keys, received, ...request, body: Buffer.from(request.body, 'utf8'), nowMs })).toBeNull();
        expect(verifySignature({ keys, received, ...request, body: `${request.body} `, nowMs })).toBe('BAD_SIGNATURE');
      });
    });
  });

  describe('end to end: examples/executor.py behind a real stack', () => {
    const ns = uniqueNamespace('axe2epy');
    let dataDir = '';
    const ADMIN_TOKEN = `axt_e2e_python_admin_${Math.random().toString(36).slice(2)}`;
    const EXECUTOR_SECRET = 'e2e-python-executor-secret-0123456789';
    const TEAM = 'pysdk';
    const TASK = 'pysdk_report_later';
    const WORKER_ID = 'e2e-python-w1';
    const WAIT_MS = 30_000;

    let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
    let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
    let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
    let adminUrl = '';
    let executorUrl = '';
    let executor: ManagedProcess | undefined;
    let teamKey = '';

    interface InstanceDetail {
      id: string;
      state: string;
      team: string;
      reason: string | null;
      executions: Array<{ executionId: string; state: string; workerId: string | null; error: string | null }>;
      events: Array<{ type: string }>;
    }

    async function api<T = Record<string, unknown>>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: T }> {
      const res = await fetch(`${adminUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      return { status: res.status, json: (text === '' ? {} : JSON.parse(text)) as T };
    }

    async function apiOk<T = Record<string, unknown>>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
      const { status, json } = await api<T>(method, path, body);
      if (status < 200 || status > 299) throw new Error(`${method} ${path}: ${status} ${JSON.stringify(json)}`);
      return json;
    }

    async function trigger(params: Record<string, unknown>): Promise<string> {
      const { status, json } = await api<{ id: string; team: string }>('POST', `/api/v1/tasks/${TASK}/trigger`, { params });
      expect(status).toBe(202);
      expect(json.team).toBe(TEAM);
      return json.id;
    }

    async function final(id: string): Promise<InstanceDetail> {
      return waitFor(
        async () => {
          const detail = await apiOk<InstanceDetail>('GET', `/api/v1/instances/${id}`);
          return ['SUCCESS', 'FAILED', 'CANCELED'].includes(detail.state) ? detail : null;
        },
        { description: `instance ${id} final`, timeoutMs: WAIT_MS, intervalMs: 200 },
      );
    }

    /** The example's output lines (stdout). */
    const printed = (): string[] => (executor?.lines() ?? []).filter((l) => l.stream === 'stdout').map((l) => l.text);

    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'ax-e2e-python-'));
      db = await createTestDatabase();
      redis = await createTestRedis(ns);
      amqp = await createTestAmqp(ns);
      const env = { AX_MYSQL_URL: db.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'warn', AX_EXECUTOR_SECRET: EXECUTOR_SECRET, AX_WORKER_DATA_DIR: dataDir };
      const admin = await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } });
      adminUrl = admin.baseUrl;
      await startService('broker', { env });
      await startService('worker', { env: { ...env, AX_WORKER_ID: WORKER_ID, AX_WORKER_SLOTS: '2', AX_HTTP_EXECUTOR_ALLOW: '127.0.0.1' } });

      const created = await api('POST', '/api/v1/teams', { name: TEAM, description: 'the Python SDK e2e team' });
      expect(created.status).toBe(201);
      const key = await apiOk<{ team: string; keyVersion: number; key: string }>('GET', `/api/v1/teams/${TEAM}/executor-key`);
      expect(key).toMatchObject({ team: TEAM, keyVersion: 1, key: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown });
      teamKey = key.key;

      executor = await startProcess({
        name: 'python-executor',
        command: PYTHON,
        args: ['examples/executor.py'],
        cwd: SDK_DIR,
        env: { ...PYTHON_ENV, AX_TEAM: TEAM, AX_EXECUTOR_KEYS: `1:${teamKey}`, AX_ADMIN_URL: adminUrl, HOST: '127.0.0.1', PORT: '0', AX_REPORT_DELAY_S: '0.5' },
        readyLine: /listening on http:\/\/\S+/,
      });
      const line = await executor.waitForLine(/listening on http:\/\/\S+/);
      executorUrl = /listening on (http:\/\/\S+)/.exec(line)?.[1] ?? '';
      expect(executorUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ax\/report-later$/);

      const task = await api('POST', '/api/v1/tasks', {
        name: TASK,
        team: TEAM,
        description: 'e2e: the Python SDK example executor (202, then a signed report)',
        schedule: { type: 'none' },
        exec: { type: 'http', url: executorUrl },
        timeoutSeconds: 60,
        retry: { max: 0 },
      });
      expect(task.status).toBe(201);
      await waitFor(
        async () => (await apiOk<{ items: Array<{ id: string }> }>('GET', '/api/v1/workers')).items.some((w) => w.id === WORKER_ID),
        { description: `worker ${WORKER_ID} registered`, timeoutMs: WAIT_MS, intervalMs: 200 },
      );
    }, 120_000);

    afterAll(async () => {
      await stopAllProcesses();
      await amqp?.cleanup();
      await redis?.cleanup();
      await db?.drop();
      if (dataDir !== '') rmSync(dataDir, { recursive: true, force: true });
      assertNoLeftoverProcesses();
    }, 60_000);

    it('#21 e2e: a run reaches the Python executor signed v2, it answers 202 and reports SUCCESS; the instance ends SUCCESS', async () => {
      onTestFailed(() => dumpAllProcessOutput());
      const id = await trigger({ region: 'eu' });
      const done = await final(id);
      expect({ state: done.state, reason: done.reason, team: done.team }).toEqual({ state: 'SUCCESS', reason: null, team: TEAM });
      expect(done.executions).toHaveLength(1);
      const executionId = done.executions[0]?.executionId ?? '';
      expect(done.executions[0]).toMatchObject({ workerId: WORKER_ID, error: null });
      expect(done.events.map((e) => e.type)).toEqual(expect.arrayContaining(['CREATED', 'DISPATCHED', 'SUCCEEDED']));
      // the Python side saw the call (with the run's idempotency key) and its report was relayed,
      // not a duplicate (it prints that once the admin API answered, which may be after the broker stored SUCCESS)
      expect(await executor?.waitForLine(`reported ${executionId} `, 10_000)).toBe(`reported ${executionId} success=True duplicate=False`);
      expect(printed()).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^call ${executionId} task=${TASK} attempt=1 key=${TASK}:.+:1$`)) as unknown]));

      // the Python client's claim is signed as the admin API verifies it: the execution is over,
      // so the claim is refused as not live (409 → False), not as badly signed (401)
      const claim = [
        'import sys',
        'from ax_sdk import AxApiError, AxClient, TeamKeys',
        'url, team, keys, execution = sys.argv[1:5]',
        'try:',
        '    print(AxClient(url, TeamKeys.parse(team, keys)).claim(execution))',
        'except AxApiError as error:',
        '    print(f"AxApiError {error.status} {error.code}")',
      ].join('\n');
      expect(python(['-c', claim, adminUrl, TEAM, `1:${teamKey}`, executionId]).stdout.trim()).toBe('False');
      expect(python(['-c', claim, adminUrl, TEAM, `1:${'0'.repeat(64)}`, executionId]).stdout.trim()).toBe('AxApiError 401 BAD_SIGNATURE');
    }, 60_000);

    it('#21 e2e: a failure reported by the Python executor fails the attempt with its message', async () => {
      onTestFailed(() => dumpAllProcessOutput());
      const id = await trigger({ fail: 'disk full' });
      const done = await final(id);
      expect(done.state).toBe('FAILED');
      expect(done.executions[0]?.error ?? '').toContain('asked to fail: disk full');
    }, 60_000);

    it('#21 e2e: a call with a bad signature sent to the Python executor directly is refused with 401 and never handled', async () => {
      onTestFailed(() => dumpAllProcessOutput());
      const calls = (): number => printed().filter((l) => l.startsWith('call ')).length;
      const before = calls();
      const path = new URL(executorUrl).pathname;
      const body = JSON.stringify({
        executionId: 'forged-1',
        instanceId: '1',
        taskName: TASK,
        team: TEAM,
        bizDate: '2026-12-01',
        expectedTime: '2026-12-01T02:00:00.000Z',
        attempt: 1,
        params: {},
        traceId: 't',
        deadline: new Date(Date.now() + 60_000).toISOString(),
      });
      const send = async (headers: Record<string, string>): Promise<{ status: number; code: unknown }> => {
        const res = await fetch(executorUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, signal: AbortSignal.timeout(10_000) });
        const json = (await res.json()) as { error?: { code?: unknown } };
        return { status: res.status, code: json.error?.code };
      };
      const sign = (keys: TeamKeys, nowMs?: number, signedPath = path): Record<string, string> => signedHeaders(keys, { method: 'POST', path: signedPath, body }, nowMs);

      expect(await send(sign({ team: TEAM, keys: { 1: 'f'.repeat(64) } }))).toEqual({ status: 401, code: 'BAD_SIGNATURE' });
      expect(await send(sign({ team: TEAM, keys: { 1: teamKey } }, undefined, '/ax/elsewhere'))).toEqual({ status: 401, code: 'BAD_SIGNATURE' });
      expect(await send(sign({ team: TEAM, keys: { 1: teamKey } }, Date.now() - 301_000))).toEqual({ status: 401, code: 'STALE_TIMESTAMP' });
      expect(await send(sign({ team: 'orders', keys: { 1: teamKey } }))).toEqual({ status: 401, code: 'WRONG_TEAM' });
      expect(await send(sign({ team: TEAM, keys: { 3: teamKey } }))).toEqual({ status: 401, code: 'UNKNOWN_KEY_VERSION' });
      expect(await send({})).toEqual({ status: 401, code: 'MISSING_SIGNATURE' });
      // the tampered body of a correctly signed call
      const good = sign({ team: TEAM, keys: { 1: teamKey } });
      const tampered = await fetch(executorUrl, { method: 'POST', headers: good, body: body.replace('forged-1', 'forged-2'), signal: AbortSignal.timeout(10_000) });
      expect(tampered.status).toBe(401);
      await tampered.arrayBuffer();
      expect(calls()).toBe(before);
    });
  });
});
