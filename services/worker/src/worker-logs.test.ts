// DESIGN §11 "Job output", end to end in one worker (real RabbitMQ, Redis and SQLite): what the
// brokers' consumer of `<ns>.logs` gets for shell jobs — both streams byte for byte, each
// attempt's own output only, the cap, and an end for every attempt however it ended (in the result when it printed nothing).
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOG_TAIL_KEPT_BYTES } from '@ax/core';
import { uniqueNamespace, waitFor } from '@ax/testing';
import { dispatchItem } from './testing/fixtures.js';
import { startAmqpProxy, startDriver, startTestWorker, type Driver, type TestWorker } from './testing/harness.js';
import { allOffsetProblems, reassemble } from './testing/log-items.js';

const namespace = uniqueNamespace('axwlog');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'ax-worker-logs-'));
let driver: Driver;
const workers: TestWorker[] = [];
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const shell = (script: string) => ({ type: 'shell' as const, command: ['/bin/sh', '-c', script], shell: false });

beforeAll(async () => {
  driver = await startDriver(namespace);
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await driver.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function worker(workerId: string, settings: Parameters<typeof startTestWorker>[0]['settings'] = {}): Promise<TestWorker> {
  const w = await startTestWorker({ driver, workerId, settings });
  workers.push(w);
  return w;
}

const endOf = (executionId: string) => driver.collected.logs.find((i) => i.executionId === executionId && i.part === 'end');
const waitForEnds = (ids: readonly string[]) => waitFor(() => ids.every((id) => endOf(id) !== undefined), { description: `end items of ${ids.length}`, timeoutMs: 20_000 });

describe('job output (worker → <ns>.logs)', () => {
  it('a shell job printing 3 MiB to stdout and 192 KiB to stderr, interleaved: both streams read back byte for byte; other attempts carry only their own output', async () => {
    const out = randomBytes(48 * 65_536);
    const err = randomBytes(12 * 16_384);
    writeFileSync(path.join(tmp, 'out.bin'), out);
    writeFileSync(path.join(tmp, 'err.bin'), err);
    await worker('w-logs-big');
    const script = `cd ${tmp}; i=0; while [ $i -lt 48 ]; do dd if=out.bin bs=65536 skip=$i count=1 status=none;
      if [ $((i % 4)) -eq 0 ]; then dd if=err.bin bs=16384 skip=$((i / 4)) count=1 status=none >&2; fi; i=$((i + 1)); done`;
    const big = dispatchItem({ exec: shell(script) });
    // Two attempts of one instance running alongside (a retry is a new execution id).
    const first = dispatchItem({ instanceId: '9001', attempt: 1, exec: shell('for i in 1 2 3; do echo "attempt-one $i"; echo "one-err $i" >&2; sleep 0.2; done; exit 1') });
    const second = dispatchItem({ instanceId: '9001', attempt: 2, exec: shell('for i in 1 2 3; do echo "attempt-two $i"; sleep 0.2; done') });
    await driver.dispatch('w-logs-big', [big, first, second]);
    await waitForEnds([big.executionId, first.executionId, second.executionId]);

    const back = reassemble(driver.collected.logs, big.executionId);
    expect(sha(back.streams.stdout)).toBe(sha(out));
    expect(sha(back.streams.stderr)).toBe(sha(err));
    expect(back.gaps).toEqual({ stdout: [], stderr: [] });
    expect(allOffsetProblems(back.chunks)).toEqual([]);
    // Interleaved: stderr chunks sit between stdout chunks in the both-streams numbering.
    const firstErr = back.chunks.find((c) => c.stream === 'stderr' && c.offset > 0);
    expect(firstErr?.allOffset).toBeGreaterThan(firstErr?.offset ?? 0);
    expect(back.ends).toEqual([{ part: 'end', executionId: big.executionId, instanceId: big.instanceId, stdoutBytes: out.length, stderrBytes: err.length, truncated: false }]);

    const one = reassemble(driver.collected.logs, first.executionId);
    expect(one.streams.stdout.toString()).toBe('attempt-one 1\nattempt-one 2\nattempt-one 3\n');
    expect(one.streams.stderr.toString()).toBe('one-err 1\none-err 2\none-err 3\n');
    const two = reassemble(driver.collected.logs, second.executionId);
    expect(two.streams.stdout.toString()).toBe('attempt-two 1\nattempt-two 2\nattempt-two 3\n');
    expect(two.streams.stderr.length).toBe(0);
    expect(driver.resultOf(first.executionId)).toMatchObject({ outcome: 'FAILED', exitCode: 1 });
    // Each chunk's end follows it: nothing of an execution arrives after its end (no failed publish here).
    for (const id of [big.executionId, first.executionId, second.executionId]) {
      const mine = driver.collected.logs.filter((i) => i.executionId === id);
      expect(mine.at(-1)?.part).toBe('end');
    }
  });

  it('a line printed by a running job is shipped while it runs (within AX_LOG_FLUSH_MS)', async () => {
    await worker('w-logs-live', { logFlushMs: 100 });
    const item = dispatchItem({ exec: shell('echo started; sleep 3; echo done') });
    await driver.dispatch('w-logs-live', [item]);
    await waitFor(() => reassemble(driver.collected.logs, item.executionId).streams.stdout.toString() === 'started\n', {
      description: 'the first line while the job sleeps',
      timeoutMs: 2_500,
    });
    expect(endOf(item.executionId)).toBeUndefined();
    expect(driver.resultOf(item.executionId)).toBeUndefined();
    await waitForEnds([item.executionId]);
    expect(reassemble(driver.collected.logs, item.executionId).streams.stdout.toString()).toBe('started\ndone\n');
  });

  it('past AX_LOG_MAX_BYTES: the head, a gap, the last 64 KiB at their true offsets, end.truncated', async () => {
    const out = randomBytes(1_048_576);
    writeFileSync(path.join(tmp, 'mib.bin'), out);
    await worker('w-logs-cap', { logMaxBytes: 262_144 });
    const item = dispatchItem({ exec: shell(`cat ${path.join(tmp, 'mib.bin')}; echo tail-of-stderr >&2`) });
    await driver.dispatch('w-logs-cap', [item]);
    await waitForEnds([item.executionId]);
    const back = reassemble(driver.collected.logs, item.executionId);
    expect(back.gaps.stdout).toEqual([{ from: 262_144, to: out.length - LOG_TAIL_KEPT_BYTES }]);
    expect(sha(back.streams.stdout)).toBe(sha(Buffer.concat([out.subarray(0, 262_144), out.subarray(out.length - LOG_TAIL_KEPT_BYTES)])));
    expect(back.streams.stderr.toString()).toBe('tail-of-stderr\n');
    expect(allOffsetProblems(back.chunks)).toEqual([]);
    expect(endOf(item.executionId)).toMatchObject({ stdoutBytes: out.length, stderrBytes: 15, truncated: true });
    expect(driver.resultOf(item.executionId)).toMatchObject({ outcome: 'SUCCESS' });
  });

  it('RabbitMQ unreachable for the worker while a job prints: after it returns the log is complete, without gaps or doubled lines', async () => {
    const proxy = await startAmqpProxy();
    try {
      const w = await startTestWorker({ driver, workerId: 'w-logs-outage', amqpUrl: proxy.url, settings: { logFlushMs: 50 } });
      workers.push(w);
      const item = dispatchItem({ exec: shell('i=0; while [ $i -lt 40 ]; do echo "line $i"; echo "err $i" >&2; sleep 0.05; i=$((i + 1)); done') });
      await driver.dispatch('w-logs-outage', [item]);
      await waitFor(() => reassemble(driver.collected.logs, item.executionId).streams.stdout.length > 0, { description: 'the first lines' });
      await proxy.cut();
      await waitFor(() => w.outbox.dispatch(item.executionId)?.state === 'done', { description: 'the job ended during the outage', timeoutMs: 10_000 });
      expect(endOf(item.executionId)).toBeUndefined();
      expect(w.outbox.logBacklog().rows).toBeGreaterThan(0); // waiting in the outbox
      await proxy.restore();
      await waitForEnds([item.executionId]);
      const back = reassemble(driver.collected.logs, item.executionId);
      const lines = (prefix: string) => Array.from({ length: 40 }, (_, i) => `${prefix} ${i}\n`).join('');
      expect(back.streams.stdout.toString()).toBe(lines('line'));
      expect(back.streams.stderr.toString()).toBe(lines('err'));
      expect(back.gaps).toEqual({ stdout: [], stderr: [] });
      expect(allOffsetProblems(back.chunks)).toEqual([]);
      await waitFor(() => w.outbox.logBacklog().rows === 0, { description: 'the log outbox emptied' });
    } finally {
      await Promise.all(workers.splice(0).map((w) => w.stop()));
      await proxy.close();
    }
  });

  it('an end for every attempt, however it ended: nothing printed (in its result, no log item), a timeout, a cancel', async () => {
    await worker('w-logs-ends', { slots: 4 });
    const quiet = dispatchItem({ exec: shell('true') });
    const timeout = dispatchItem({ exec: shell('echo before-timeout; sleep 30'), timeoutSeconds: 1 });
    const canceled = dispatchItem({ exec: shell('echo before-cancel >&2; sleep 30') });
    await driver.dispatch('w-logs-ends', [quiet, timeout, canceled]);
    await waitFor(() => reassemble(driver.collected.logs, canceled.executionId).streams.stderr.length > 0, { description: 'the canceled job printed' });
    await driver.cancel('w-logs-ends', [canceled.executionId]);
    await waitForEnds([timeout.executionId, canceled.executionId]);
    // DESIGN §11: a job that prints nothing sends nothing on <ns>.logs; its result says so.
    await waitFor(() => driver.resultOf(quiet.executionId) !== undefined, { description: 'the quiet job\'s result' });
    expect(driver.resultOf(quiet.executionId)).toMatchObject({ outcome: 'SUCCESS', printedNothing: true });
    expect(driver.collected.logs.filter((i) => i.executionId === quiet.executionId)).toEqual([]);
    expect(reassemble(driver.collected.logs, timeout.executionId).streams.stdout.toString()).toBe('before-timeout\n');
    expect(endOf(timeout.executionId)).toMatchObject({ stdoutBytes: 15, stderrBytes: 0 });
    expect(endOf(canceled.executionId)).toMatchObject({ stdoutBytes: 0, stderrBytes: 14 });
    await waitFor(() => driver.resultOf(timeout.executionId) !== undefined && driver.resultOf(canceled.executionId) !== undefined, { description: 'results' });
    expect(driver.resultOf(timeout.executionId)?.outcome).toBe('TIMEOUT');
    expect(driver.resultOf(canceled.executionId)?.outcome).toBe('CANCELED');
    expect(driver.resultOf(timeout.executionId)?.printedNothing).toBeUndefined();
    expect(driver.resultOf(canceled.executionId)?.printedNothing).toBeUndefined();
  });

  it('outputInResult (#24): a short job\'s output and end travel in its result, no log item; a long one\'s as items; a timeout\'s too', async () => {
    await worker('w-logs-inline', { slots: 4 });
    const short = dispatchItem({ outputInResult: true, exec: shell('echo hello; echo warn >&2; echo bye') });
    const long = dispatchItem({ outputInResult: true, exec: shell('head -c 9000 /dev/zero | tr "\\0" x') });
    const timeout = dispatchItem({ outputInResult: true, exec: shell('echo before-timeout; sleep 30'), timeoutSeconds: 1 });
    await driver.dispatch('w-logs-inline', [short, long, timeout]);
    await waitFor(() => [short, long, timeout].every((d) => driver.resultOf(d.executionId) !== undefined), { description: 'the three results', timeoutMs: 20_000 });
    const output = driver.resultOf(short.executionId)?.output;
    expect(output).toMatchObject({ stdoutBytes: 10, stderrBytes: 5, truncated: false });
    const text = (stream: string): string =>
      Buffer.concat((output?.chunks ?? []).filter((c) => c.stream === stream).map((c) => Buffer.from(c.data, 'base64'))).toString();
    expect(text('stdout')).toBe('hello\nbye\n');
    expect(text('stderr')).toBe('warn\n');
    expect(driver.resultOf(short.executionId)?.printedNothing).toBeUndefined();
    // The timeout's line was shipped while it ran (the flush timer, normally) or with the
    // result; its end came with the result either way.
    const timedOut = driver.resultOf(timeout.executionId);
    expect(timedOut).toMatchObject({ outcome: 'TIMEOUT', output: { stdoutBytes: 15, stderrBytes: 0 } });
    const inResult = (timedOut?.output?.chunks ?? []).map((c) => Buffer.from(c.data, 'base64').toString()).join('');
    expect(reassemble(driver.collected.logs, timeout.executionId).streams.stdout.toString() + inResult).toBe('before-timeout\n');
    expect(endOf(timeout.executionId)).toBeUndefined();
    // 9,000 bytes: more than a result carries; its output and end are log items, as before.
    await waitForEnds([long.executionId]);
    expect(reassemble(driver.collected.logs, long.executionId).streams.stdout.toString()).toBe('x'.repeat(9_000));
    expect(driver.resultOf(long.executionId)?.output).toBeUndefined();
    expect(driver.collected.logs.filter((i) => i.executionId === short.executionId)).toEqual([]);
  });

  it('AX_LOG_OUTPUT_IN_RESULT=false: even a short output ships as log items, though the dispatch allows the result', async () => {
    await worker('w-logs-no-inline', { logOutputInResult: false });
    const short = dispatchItem({ outputInResult: true, exec: shell('echo hello') });
    await driver.dispatch('w-logs-no-inline', [short]);
    await waitForEnds([short.executionId]);
    expect(reassemble(driver.collected.logs, short.executionId).streams.stdout.toString()).toBe('hello\n');
    await waitFor(() => driver.resultOf(short.executionId) !== undefined, { description: 'the result' });
    expect(driver.resultOf(short.executionId)?.output).toBeUndefined();
  });
});
