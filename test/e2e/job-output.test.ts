// Job output through the whole system, with real processes (#19, ADMIN-API.md "Job output"):
// worker (captures each stream, masks secrets, ships chunks through its outbox) → RabbitMQ
// <ns>.logs → broker (appends by offset) → MySQL → admin-api (paged GET, SSE). What an operator
// relies on: a large log reads back byte for byte, a running job's lines are readable while it
// runs, each attempt's log holds only its own output, a secret shows as ***, and a worker cut
// off from RabbitMQ for 30 s while its job prints loses and doubles nothing.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  startService,
  startTcpProxy,
  stopAllProcesses,
  throughProxy,
  uniqueNamespace,
  waitFor,
  type CuttableProxy,
} from '@ax/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ns = uniqueNamespace('axe2elog');
const dataDir = mkdtempSync(join(tmpdir(), 'ax-e2e-log-'));
const secretsDir = mkdtempSync(join(tmpdir(), 'ax-e2e-log-secrets-'));
const ADMIN_TOKEN = `axt_e2e_log_admin_${Math.random().toString(36).slice(2)}`;
const SECRET = 'tok-5ecret-value-42';

let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
let redis: Awaited<ReturnType<typeof createTestRedis>> | undefined;
let amqp: Awaited<ReturnType<typeof createTestAmqp>> | undefined;
let proxy: CuttableProxy | undefined;
let adminUrl = '';

async function api(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> {
  return fetch(`${adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(15_000),
  });
}

async function json<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const res = await api(method, path, body);
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

interface Detail {
  state: string;
  executions: Array<{ executionId: string; attempt: number; state: string }>;
}

async function createTask(name: string, exec: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<void> {
  await json('POST', '/api/v1/tasks', { name, schedule: { type: 'none' }, exec, tags: ['log'], timeoutSeconds: 120, ...extra });
}

async function trigger(name: string): Promise<string> {
  return (await json<{ id: string }>('POST', `/api/v1/tasks/${name}/trigger`, {})).id;
}

async function final(id: string, timeoutMs = 90_000): Promise<Detail> {
  return waitFor(async () => {
    const d = await json<Detail>('GET', `/api/v1/instances/${id}`);
    return ['SUCCESS', 'FAILED', 'CANCELED'].includes(d.state) ? d : null;
  }, { description: `instance ${id} final`, timeoutMs, intervalMs: 250 });
}

/** Every byte of one stream of an execution, by paging the GET; with the last page's headers. */
async function readLog(executionId: string, stream: 'all' | 'stdout' | 'stderr', limit = 1_048_576): Promise<{ bytes: Buffer; complete: boolean; truncated: boolean; pages: number }> {
  const parts: Buffer[] = [];
  let offset = 0;
  let pages = 0;
  for (;;) {
    const res = await api('GET', `/api/v1/executions/${executionId}/log?stream=${stream}&offset=${offset}&limit=${limit}`);
    expect(res.status).toBe(200);
    parts.push(Buffer.from(await res.arrayBuffer()));
    pages++;
    const size = Number(res.headers.get('x-ax-log-size'));
    const next = Number(res.headers.get('x-ax-log-next-offset'));
    if (next >= size || next === offset) {
      return { bytes: Buffer.concat(parts), complete: res.headers.get('x-ax-log-complete') === 'true', truncated: res.headers.get('x-ax-log-truncated') === 'true', pages };
    }
    offset = next;
  }
}

/** The complete log, once the store has all of it. */
async function completeLog(executionId: string, stream: 'all' | 'stdout' | 'stderr', limit?: number) {
  return waitFor(async () => {
    const log = await readLog(executionId, stream, limit);
    return log.complete ? log : null;
  }, { description: `the complete ${stream} log of ${executionId}`, timeoutMs: 60_000, intervalMs: 500 });
}

const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
const seq = (from: number, to: number): string => Array.from({ length: to - from + 1 }, (_, i) => `${from + i}\n`).join('');

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(ns);
  amqp = await createTestAmqp(ns);
  mkdirSync(join(secretsDir, 'default'));
  writeFileSync(join(secretsDir, 'default', 'LOG_TOKEN'), `${SECRET}\n`);
  const target = new URL(amqp.url);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5672) });
  const env = { AX_MYSQL_URL: db.url, AX_REDIS_URL: redis.url, AX_AMQP_URL: amqp.url, AX_NAMESPACE: ns, AX_LOG_LEVEL: 'warn', AX_WORKER_DATA_DIR: dataDir };
  const admin = await startService('admin-api', { env: { ...env, AX_ADMIN_TOKEN: ADMIN_TOKEN } });
  adminUrl = admin.baseUrl;
  await startService('broker', { env });
  // The worker reaches RabbitMQ through a proxy the last test cuts.
  await startService('worker', {
    name: 'log-w1',
    env: { ...env, AX_AMQP_URL: throughProxy(amqp.url, proxy), AX_WORKER_ID: 'e2e-log-w1', AX_WORKER_SLOTS: '4', AX_WORKER_TAGS: 'log', AX_SECRETS_DIR: secretsDir },
  });
}, 120_000);

afterAll(async () => {
  await stopAllProcesses({ graceMs: 5_000 });
  await proxy?.close();
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(secretsDir, { recursive: true, force: true });
});

describe('job output end to end (#19)', () => {
  it('~5 MB of stdout and some stderr read back byte for byte through paged GETs, complete and not truncated', async () => {
    await createTask('log_big', { type: 'shell', command: ['sh', '-c', 'seq 1 700000; seq 1 2000 >&2'] });
    const detail = await final(await trigger('log_big'));
    expect(detail.state).toBe('SUCCESS');
    const executionId = detail.executions[0]?.executionId ?? '';
    const stdout = await completeLog(executionId, 'stdout');
    const stderr = await completeLog(executionId, 'stderr');
    const all = await completeLog(executionId, 'all');
    console.log(`job output: stdout ${stdout.bytes.length} bytes in ${stdout.pages} pages, stderr ${stderr.bytes.length}, all ${all.bytes.length}`);
    expect(sha256(stdout.bytes)).toBe(sha256(seq(1, 700000)));
    expect(sha256(stderr.bytes)).toBe(sha256(seq(1, 2000)));
    expect(all.bytes.length).toBe(stdout.bytes.length + stderr.bytes.length);
    expect([stdout.truncated, stderr.truncated]).toEqual([false, false]);
  }, 180_000);

  it('a line printed every second is readable while the job runs, at most about 2 s behind', async () => {
    // Each line carries the time it was printed (same machine, same clock as this test).
    await createTask('log_ticker', { type: 'shell', command: ['sh', '-c', 'for i in 1 2 3 4 5 6 7 8; do echo "tick $i $(date +%s%3N)"; sleep 1; done'] });
    const id = await trigger('log_ticker');
    const lagMs = new Map<number, number>();
    let whileRunning = 0;
    for (const until = Date.now() + 60_000; Date.now() < until; ) {
      const d = await json<Detail>('GET', `/api/v1/instances/${id}`);
      const text = await (await api('GET', `/api/v1/instances/${id}/log`)).text();
      const now = Date.now();
      for (const m of text.matchAll(/tick (\d) (\d+)/g)) if (!lagMs.has(Number(m[1]))) lagMs.set(Number(m[1]), now - Number(m[2]));
      if (d.state === 'RUNNING') whileRunning = lagMs.size;
      if (['SUCCESS', 'FAILED'].includes(d.state)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const lags = [...lagMs.values()].sort((x, y) => x - y);
    console.log(`job output: ${whileRunning} of 8 lines read while RUNNING; printed → readable through GET (polled every ~100 ms): ${lags.join(', ')} ms`);
    expect(whileRunning).toBeGreaterThanOrEqual(5);
    expect(lagMs.size).toBe(8);
  }, 90_000);

  it('an attempt that fails and its retry that succeeds: each log holds only its own output', async () => {
    const marker = join(dataDir, 'log-retry-marker');
    await createTask(
      'log_retry',
      { type: 'shell', command: ['sh', '-c', `if [ -f ${marker} ]; then echo "second attempt"; else touch ${marker}; echo "first attempt"; echo "failing" >&2; exit 3; fi`] },
      { retry: { max: 1, backoffSeconds: 0 } },
    );
    const detail = await final(await trigger('log_retry'));
    expect(detail.state).toBe('SUCCESS');
    const byAttempt = [...detail.executions].sort((a, b) => a.attempt - b.attempt);
    expect(byAttempt).toHaveLength(2);
    const first = await completeLog(byAttempt[0]?.executionId ?? '', 'all');
    const second = await completeLog(byAttempt[1]?.executionId ?? '', 'all');
    expect(first.bytes.toString()).toBe('first attempt\nfailing\n');
    expect(second.bytes.toString()).toBe('second attempt\n');
  }, 120_000);

  it('a job that prints nothing: its log is complete and empty (its end came with the result, DESIGN §11)', async () => {
    await createTask('log_silent', { type: 'shell', command: ['true'] });
    const detail = await final(await trigger('log_silent'));
    expect(detail.state).toBe('SUCCESS');
    const executionId = detail.executions[0]?.executionId ?? '';
    // Complete at once with the result: no log message to wait for.
    const log = await readLog(executionId, 'all');
    expect(log).toMatchObject({ complete: true, truncated: false });
    expect(log.bytes.length).toBe(0);
    const res = await api('GET', `/api/v1/executions/${executionId}/log?stream=stderr`);
    expect(res.headers.get('x-ax-log-complete')).toBe('true');
    expect(res.headers.get('x-ax-log-size')).toBe('0');
  }, 60_000);

  it('a secret resolved into the job environment and printed shows as *** in the log', async () => {
    await createTask('log_secret', { type: 'shell', command: ['sh', '-c', 'echo "token=$LOG_TOKEN"; echo "half=$(echo $LOG_TOKEN | cut -c1-8)"'], env: { LOG_TOKEN: { secretRef: 'LOG_TOKEN' } } });
    const detail = await final(await trigger('log_secret'));
    expect(detail.state).toBe('SUCCESS');
    const log = await completeLog(detail.executions[0]?.executionId ?? '', 'all');
    expect(log.bytes.toString()).toContain('token=***');
    expect(log.bytes.toString()).not.toContain(SECRET);
  }, 90_000);

  it('the worker cut off from RabbitMQ for 30 s while its job prints: the log is complete afterwards, without gaps or doubled lines', async () => {
    await createTask('log_outage', { type: 'shell', command: ['sh', '-c', 'i=1; while [ $i -le 45 ]; do echo "line $i"; i=$((i+1)); sleep 1; done'] });
    const id = await trigger('log_outage');
    await waitFor(async () => (await (await api('GET', `/api/v1/instances/${id}/log`)).text()).includes('line 3'), { description: 'line 3 stored', timeoutMs: 30_000, intervalMs: 250 });
    await proxy?.cut();
    await new Promise((resolve) => setTimeout(resolve, 30_000));
    await proxy?.restore();
    const detail = await final(id, 120_000);
    expect(detail.state).toBe('SUCCESS');
    const log = await completeLog(detail.executions[0]?.executionId ?? '', 'stdout');
    expect(log.bytes.toString()).toBe(Array.from({ length: 45 }, (_, i) => `line ${i + 1}\n`).join(''));
  }, 180_000);
});
