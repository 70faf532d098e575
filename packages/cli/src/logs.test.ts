/**
 * `axctl logs` against the real admin API (in-process, test database) with log rows stored
 * through the store's `appendLogItems`: a multi-page log comes out byte for byte (the built
 * binary's stdout, both streams and each alone); `-f` prints what is appended after it started,
 * survives a dropped connection (resumed with Last-Event-ID: no gap, nothing twice) and ends
 * at the end event; `--attempt` picks an attempt; errors are one line with exit 1 or 2.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendLogItems, insertExecutions, type NewLogChunk } from '@ax/store';
import { startTcpProxy, waitFor } from '@ax/testing';
import { axctl, axctlIn, insertInstance, killLeftovers, requestCount, startApp, taskDef, type TestApp } from './axctl.test-helper.js';

let t: TestApp;
let seq = 0;
const day = '2026-11-21';
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  t = await startApp({ logStream: { pollMs: 100, pingMs: 1_000, incompleteGraceMs: 2_000 } });
  expect((await t.call('POST', '/api/v1/tasks', { body: taskDef('logs_job', { schedule: { type: 'none' } }) })).status).toBe(201);
});
afterAll(async () => {
  expect(killLeftovers()).toBe(0);
  await t?.close();
});

const executionIdOf = (n: number): string => `0190c000-0000-7000-8000-${String(n).padStart(12, '0')}`;

/** An instance with one execution per entry of `states` (attempts 1, 2, …); the last is current. */
async function instanceWith(instanceState: string, states: readonly string[]): Promise<{ instanceId: string; executionIds: string[] }> {
  seq += 1;
  const executionIds = states.map(() => executionIdOf(++seq));
  const instanceId = await insertInstance(t.pool, {
    task: 'logs_job',
    expected: `${day}T00:${String(seq % 60).padStart(2, '0')}:${String(seq % 60).padStart(2, '0')}.000Z`,
    runNo: seq,
    bizDate: day,
    state: instanceState,
    executionId: executionIds.at(-1) ?? null,
    workerId: executionIds.length === 0 ? null : 'w1',
  });
  for (const [i, executionId] of executionIds.entries()) {
    await insertExecutions(t.pool, [{ executionId, instanceId, attempt: i + 1, runNo: 1, workerId: 'w1' }]);
    await t.pool.query('UPDATE task_execution SET state = ? WHERE execution_id = ?', [states[i], executionId]);
  }
  return { instanceId, executionIds };
}

/** Appends pieces in capture order; answers the offsets after them. */
class Writer {
  readonly all: Buffer[] = [];
  readonly out: Buffer[] = [];
  readonly err: Buffer[] = [];
  private pos = { stdout: 0, stderr: 0, all: 0 };
  constructor(private readonly executionId: string) {}

  chunks(stream: 'stdout' | 'stderr', data: Buffer): NewLogChunk[] {
    const out: NewLogChunk[] = [];
    for (let o = 0; o < data.length; o += 200_000) {
      const part = data.subarray(o, o + 200_000);
      out.push({ executionId: this.executionId, stream, offset: this.pos[stream], allOffset: this.pos.all, data: part });
      this.pos[stream] += part.length;
      this.pos.all += part.length;
    }
    this.all.push(data);
    (stream === 'stdout' ? this.out : this.err).push(data);
    return out;
  }

  async write(stream: 'stdout' | 'stderr', data: Buffer | string): Promise<void> {
    await appendLogItems(t.pool, this.chunks(stream, Buffer.isBuffer(data) ? data : Buffer.from(data)));
  }

  async end(): Promise<void> {
    await appendLogItems(t.pool, [], [{ executionId: this.executionId, stdoutBytes: this.pos.stdout, stderrBytes: this.pos.stderr, truncated: false }]);
  }
}

/** Bytes that are not all UTF-8 (a job may print anything). */
function noise(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    b[i] = i % 97 === 96 ? 0x0a : x >> 16;
  }
  return b;
}

describe('logs: paging', () => {
  it('a multi-page log (≈5 MB stdout, some stderr) comes out byte for byte; --stdout and --stderr give one stream', async () => {
    const { instanceId, executionIds } = await instanceWith('SUCCESS', ['SUCCESS']);
    const executionId = executionIds[0] as string;
    const w = new Writer(executionId);
    const chunks = [
      ...w.chunks('stdout', noise(2_500_000, 1)),
      ...w.chunks('stderr', Buffer.from('warning: something on stderr\n')),
      ...w.chunks('stdout', noise(2_700_000, 2)),
      ...w.chunks('stderr', noise(70_000, 3)),
    ];
    await appendLogItems(t.pool, chunks);
    await w.end();
    const before = await requestCount(t, 'GET', '/api/v1/executions/{executionId}/log');

    const all = await axctl(t, ['logs', instanceId], { killAfterMs: 60_000 });
    expect(all.stderr).toBe('');
    expect(all.code).toBe(0);
    expect(all.stdoutBytes.length).toBe(Buffer.concat(w.all).length);
    expect(sha(all.stdoutBytes)).toBe(sha(Buffer.concat(w.all)));
    // the first page through the instance, the rest through its execution
    expect(await requestCount(t, 'GET', '/api/v1/executions/{executionId}/log')).toBeGreaterThan(before);

    const [out, err] = await Promise.all([axctl(t, ['logs', executionId, '--stdout'], { killAfterMs: 60_000 }), axctl(t, ['logs', executionId, '--stderr'])]);
    expect([out.code, err.code, out.stderr, err.stderr]).toEqual([0, 0, '', '']);
    expect(sha(out.stdoutBytes)).toBe(sha(Buffer.concat(w.out)));
    expect(sha(err.stdoutBytes)).toBe(sha(Buffer.concat(w.err)));
  }, 90_000);

  it('an instance not dispatched yet prints nothing and says so on stderr', async () => {
    const { instanceId } = await instanceWith('PENDING', []);
    const r = await axctlIn(t, ['logs', instanceId]);
    expect(r).toMatchObject({ code: 0, stdout: '', errLines: [`(instance ${instanceId} has not been dispatched yet: no output)`] });
  });
});

describe('logs --attempt', () => {
  it('picks the attempt; without it the current one; a missing attempt is one error line', async () => {
    const { instanceId, executionIds } = await instanceWith('SUCCESS', ['FAILED', 'SUCCESS']);
    const first = new Writer(executionIds[0] as string);
    await first.write('stdout', 'attempt one\n');
    await first.write('stderr', 'boom\n');
    await first.end();
    const second = new Writer(executionIds[1] as string);
    await second.write('stdout', 'attempt two\n');
    await second.end();

    expect(await axctlIn(t, ['logs', instanceId])).toMatchObject({ code: 0, stdout: 'attempt two\n', stderr: '' });
    expect(await axctlIn(t, ['logs', instanceId, '--attempt', '1'])).toMatchObject({ code: 0, stdout: 'attempt one\nboom\n', stderr: '' });
    expect(await axctlIn(t, ['logs', instanceId, '--attempt', '1', '--stderr'])).toMatchObject({ code: 0, stdout: 'boom\n' });
    // a final instance: -f prints the current attempt and ends
    expect(await axctlIn(t, ['logs', instanceId, '-f'])).toMatchObject({ code: 0, stdout: 'attempt two\n', stderr: '' });
    expect(await axctlIn(t, ['logs', instanceId, '--attempt', '3'])).toMatchObject({ code: 1, stdout: '', errLines: [`axctl: logs: instance ${instanceId} has no attempt 3 (it has attempts 1, 2)`] });
  });
});

describe('logs: errors', () => {
  it('404, a malformed id and conflicting flags are one line each', async () => {
    const missing = executionIdOf(999_999);
    expect(await axctlIn(t, ['logs', missing])).toMatchObject({ code: 1, stdout: '', errLines: [`axctl: logs: execution ${missing} not found (404 NOT_FOUND)`] });
    expect(await axctlIn(t, ['logs', '999999', '-f'])).toMatchObject({ code: 1, errLines: ['axctl: logs: instance 999999 not found (404 NOT_FOUND)'] });
    expect(await axctlIn(t, ['logs', '999999', '--attempt', '1'])).toMatchObject({ code: 1, errLines: ['axctl: logs: instance 999999 not found (404 NOT_FOUND)'] });
    expect(await axctlIn(t, ['logs', 'abc'])).toMatchObject({ code: 2, errLines: ['axctl: logs: expected an instance id (digits) or an execution id (a UUID), got "abc"'] });
    expect(await axctlIn(t, ['logs', '1', '--stdout', '--stderr'])).toMatchObject({ code: 2, errLines: ['axctl: logs: give --stdout or --stderr, not both (neither = both streams)'] });
    expect(await axctlIn(t, ['logs', missing, '--attempt', '1'])).toMatchObject({ code: 2 });
    expect(await axctlIn(t, ['logs', '1', '--attempt', '0'])).toMatchObject({ code: 2, errLines: ['axctl: --attempt: expected an integer from 1 to 1000, got "0"'] });
  });
});

describe('logs -f', () => {
  it('prints what is appended after it started and stops at the end event (exit 0)', async () => {
    const { executionIds } = await instanceWith('RUNNING', ['RUNNING']);
    const executionId = executionIds[0] as string;
    const w = new Writer(executionId);
    await w.write('stdout', 'line 1\n');
    const streams = await requestCount(t, 'GET', '/api/v1/executions/{executionId}/log/stream');
    let text = '';
    const done = axctl(t, ['logs', executionId, '-f'], { onStdout: (d) => (text += d), killAfterMs: 30_000 });
    await waitFor(() => text.includes('line 1\n'), { timeoutMs: 10_000, description: 'what was there' });
    await w.write('stdout', 'line 2 — ünïcödé\n');
    await w.write('stderr', 'oops on stderr\n');
    await waitFor(() => text.includes('oops on stderr\n'), { timeoutMs: 5_000, description: 'appended chunks' });
    await w.write('stdout', 'last line\n');
    await t.pool.query("UPDATE task_execution SET state = 'SUCCESS' WHERE execution_id = ?", [executionId]);
    await w.end();
    const r = await done;
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdoutBytes.equals(Buffer.concat(w.all))).toBe(true);
    // what came after the start came through the SSE stream
    expect(await requestCount(t, 'GET', '/api/v1/executions/{executionId}/log/stream')).toBe(streams + 1);
  });

  it('a dropped connection is resumed (Last-Event-ID): nothing lost, nothing twice', async () => {
    const { executionIds } = await instanceWith('RUNNING', ['RUNNING']);
    const executionId = executionIds[0] as string;
    const w = new Writer(executionId);
    await w.write('stdout', 'before\n');
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(t.url).port) });
    try {
      let text = '';
      const done = axctl(t, ['logs', executionId, '--follow'], { url: `http://127.0.0.1:${proxy.port}`, onStdout: (d) => (text += d), killAfterMs: 30_000 });
      await waitFor(() => text.includes('before\n'), { timeoutMs: 10_000, description: 'history' });
      await w.write('stdout', 'streamed\n');
      await waitFor(() => text.includes('streamed\n'), { timeoutMs: 5_000, description: 'a streamed chunk' });
      await proxy.cut();
      await w.write('stdout', 'while cut\n');
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await proxy.restore();
      await waitFor(() => text.includes('while cut\n'), { timeoutMs: 10_000, description: 'resumed' });
      await w.write('stderr', 'after\n');
      await t.pool.query("UPDATE task_execution SET state = 'FAILED' WHERE execution_id = ?", [executionId]);
      await w.end();
      const r = await done;
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('before\nstreamed\nwhile cut\nafter\n');
      expect(r.errLines[0]).toMatch(/^axctl: logs: .*; reconnecting$/);
      expect(r.errLines.at(-1)).toMatch(/^axctl: logs: the log stream is back; resuming at byte \d+$/);
    } finally {
      await proxy.close();
    }
  });
});
