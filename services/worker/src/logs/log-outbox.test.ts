// Job output through the outbox to RabbitMQ (real SQLite file, real RabbitMQ): nothing is lost
// across a failed publish or a worker restart, and the table is emptied once RabbitMQ confirmed.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBus, type Bus } from '@ax/bus';
import { OUTPUT_IN_RESULT_MAX_BYTES, OUTPUT_IN_RESULT_MAX_CHUNKS, parseMessage, resultOutputSchema, type LogItem } from '@ax/core';
import { silentLogger } from '@ax/kit';
import { createTestAmqp, testAmqpUrl, uniqueNamespace, waitFor, type TestAmqp } from '@ax/testing';
import { Outbox } from '../outbox.js';
import type { EventPublisher } from '../publisher.js';
import { allOffsetProblems, reassemble } from '../testing/log-items.js';
import { LogPublisher } from './log-publisher.js';
import { LogShipper } from './log-shipper.js';

const namespace = uniqueNamespace('axwl');
const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-log-outbox-'));
let bus: Bus;
let amqp: TestAmqp;
const received: LogItem[] = [];
let messages = 0;
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  bus = createBus({ url: testAmqpUrl(), namespace, logger: silentLogger(), name: `test-logs-${namespace}` });
  await bus.start();
  amqp = await createTestAmqp(namespace);
  await amqp.channel.consume(bus.topology.logsQueue, (msg) => {
    if (msg === null) return;
    const parsed = parseMessage(msg.content);
    if (parsed.ok && parsed.message.kind === 'log') {
      messages += 1;
      received.push(...parsed.message.items);
    }
    amqp.channel.ack(msg);
  });
});
afterAll(async () => {
  await bus.close();
  await amqp.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function ship(outbox: Outbox, publishVia: EventPublisher) {
  const publisher = new LogPublisher({ outbox, bus: publishVia, exchange: bus.topology.logsExchange, workerId: 'w-logs', logger: silentLogger() });
  const shipper = new LogShipper({ outbox, publisher, logger: silentLogger(), maxBytes: 16 * 1_048_576, flushMs: 50, outboxMaxBytes: 256 * 1_048_576 });
  publisher.start();
  return { publisher, shipper };
}

/** Prints `n` random pieces to both streams of an attempt, flushing now and then; returns what was printed. */
function printInto(shipper: LogShipper, executionId: string, n: number): { stdout: Buffer; stderr: Buffer } {
  const log = shipper.open({ executionId, instanceId: '7' });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const o = randomBytes(5_000 + i);
    out.push(o);
    log.write('stdout', o);
    if (i % 4 === 0) {
      const e = randomBytes(300);
      err.push(e);
      log.write('stderr', e);
    }
    if (i % 10 === 9) shipper.flushNow();
  }
  // As under a broker that does not store output from results: the end is an item.
  shipper.end(log, 'emptyInResult');
  shipper.flushNow();
  return { stdout: Buffer.concat(out), stderr: Buffer.concat(err) };
}

function expectComplete(executionId: string, printed: { stdout: Buffer; stderr: Buffer }): void {
  const back = reassemble(received, executionId);
  expect(sha(back.streams.stdout)).toBe(sha(printed.stdout));
  expect(sha(back.streams.stderr)).toBe(sha(printed.stderr));
  expect(back.gaps).toEqual({ stdout: [], stderr: [] });
  expect(allOffsetProblems(back.chunks)).toEqual([]);
  expect(back.ends[0]).toMatchObject({ stdoutBytes: printed.stdout.length, stderrBytes: printed.stderr.length, truncated: false });
}

describe('job output through the outbox', () => {
  it('publishes failed twice: the rows stay in the outbox, are resent after the backoff, and are deleted once confirmed', async () => {
    const outbox = new Outbox({ file: path.join(dir, 'fail.db') });
    let failures = 2;
    const flaky: EventPublisher = {
      publish: (exchange, key, body) => (failures-- > 0 ? Promise.reject(new Error('nacked')) : bus.publish(exchange, key, body)),
    };
    const { publisher, shipper } = ship(outbox, flaky);
    const printed = printInto(shipper, 'exec-flaky', 40);
    await waitFor(() => failures < 0, { description: 'the two failures and a retry', timeoutMs: 10_000 });
    expect(await publisher.flush(10_000)).toBe(true);
    await waitFor(() => received.some((i) => i.executionId === 'exec-flaky' && i.part === 'end'), { description: 'the end item' });
    expectComplete('exec-flaky', printed);
    expect(outbox.logBacklog()).toEqual({ rows: 0, bytes: 0 });
    shipper.stop();
    publisher.stop();
    outbox.close();
  });

  it('a worker restart with output unshipped (RabbitMQ never confirmed): the next start ships all of it', async () => {
    const file = path.join(dir, 'restart.db');
    const first = new Outbox({ file });
    const never: EventPublisher = { publish: () => new Promise<void>(() => undefined) };
    const one = ship(first, never);
    const printed = printInto(one.shipper, 'exec-restart', 60);
    const backlog = first.logBacklog();
    expect(backlog.rows).toBeGreaterThan(0);
    expect(backlog.bytes).toBe(printed.stdout.length + printed.stderr.length);
    one.shipper.stop();
    one.publisher.stop();
    first.close(); // the process is gone

    const before = messages;
    const second = new Outbox({ file });
    const two = ship(second, bus);
    expect(two.publisher.backlogBytes).toBe(backlog.bytes);
    expect(await two.publisher.flush(10_000)).toBe(true);
    await waitFor(() => received.some((i) => i.executionId === 'exec-restart' && i.part === 'end'), { description: 'the end item' });
    expectComplete('exec-restart', printed);
    // Several rows travel in one message.
    expect(messages - before).toBeLessThan(backlog.rows);
    expect(second.logBacklog()).toEqual({ rows: 0, bytes: 0 });
    two.shipper.stop();
    two.publisher.stop();
    second.close();
  });

  it('an outbox backed up past AX_LOG_OUTBOX_MAX_BYTES (RabbitMQ away): jobs keep printing, only their tails are kept, the end says truncated', async () => {
    const outbox = new Outbox({ file: path.join(dir, 'backed-up.db') });
    const never: EventPublisher = { publish: () => new Promise<void>(() => undefined) };
    const publisher = new LogPublisher({ outbox, bus: never, exchange: bus.topology.logsExchange, workerId: 'w-logs', logger: silentLogger() });
    const shipper = new LogShipper({ outbox, publisher, logger: silentLogger(), maxBytes: 16 * 1_048_576, flushMs: 50, outboxMaxBytes: 1_048_576 });
    publisher.start();
    const log = shipper.open({ executionId: 'exec-backed-up', instanceId: '1' });
    for (let i = 0; i < 100; i++) {
      log.write('stdout', randomBytes(50_000)); // 5 MB, far past the bound
      if (i % 5 === 0) shipper.flushNow();
    }
    shipper.end(log, 'inResult');
    shipper.flushNow();
    const { bytes } = outbox.logBacklog();
    // The bound, plus at most one flush's worth (1 MiB) and the kept tail.
    expect(bytes).toBeLessThan(1_048_576 + 1_048_576 + 65_536);
    const items = outbox
      .logsAfter(0, 1_000)
      .flatMap((r) => JSON.parse(`[${r.itemsJson}]`) as LogItem[])
      .filter((i) => i.part === 'end');
    expect(items).toEqual([{ part: 'end', executionId: 'exec-backed-up', instanceId: '1', stdoutBytes: 5_000_000, stderrBytes: 0, truncated: true }]);
    shipper.stop();
    publisher.stop();
    outbox.close();
  });

  it('executions that print nothing ship nothing (their end goes in the result); without a result to carry it, their end items share one row and one message', async () => {
    const outbox = new Outbox({ file: path.join(dir, 'quiet.db') });
    // Messages that carry the refused executions' ends. Not every publish: the shipper's 50 ms
    // timer may ship 'exec-spoke' (below) in between, whenever this test yields.
    let publishes = 0;
    const counting: EventPublisher = { publish: (e, k, b) => ((publishes += b.includes('exec-quiet-') ? 1 : 0), bus.publish(e, k, b)) };
    const { publisher, shipper } = ship(outbox, counting);
    const silent = Array.from({ length: 300 }, (_, i) => `exec-silent-${i}`);
    for (const id of silent) {
      const log = shipper.open({ executionId: id, instanceId: '1' });
      expect(shipper.end(log, 'emptyInResult')).toEqual({ printedNothing: true });
      expect(shipper.end(log, 'items')).toEqual({ printedNothing: true }); // asked again (the worker's last guard): the same answer
    }
    expect(shipper.takeEnded(silent)).toBeNull();
    shipper.flushNow();
    expect(outbox.logBacklog().rows).toBe(0);
    // One that printed a byte is not silent.
    const spoke = shipper.open({ executionId: 'exec-spoke', instanceId: '1' });
    spoke.write('stdout', 'x');
    expect(shipper.end(spoke, 'emptyInResult')).toBeUndefined();

    // A refusal (the job never started) carries no result: its end is an item as before.
    const refused = Array.from({ length: 300 }, (_, i) => `exec-quiet-${i}`);
    for (const id of refused) expect(shipper.end(shipper.open({ executionId: id, instanceId: '1' }), 'items')).toBeUndefined();
    const taken = shipper.takeEnded(refused);
    expect(taken?.executionIds).toHaveLength(300);
    const rows = outbox.transaction(() => (taken === null ? [] : shipper.write(taken)));
    expect(rows).toHaveLength(1);
    publisher.push(rows);
    expect(await publisher.flush(5_000)).toBe(true);
    expect(publishes).toBe(1);
    await waitFor(() => refused.every((id) => received.some((i) => i.executionId === id)), { description: '300 end items' });
    expect(received.filter((i) => refused.includes(i.executionId)).every((i) => i.part === 'end' && i.stdoutBytes === 0 && !i.truncated)).toBe(true);
    expect(received.some((i) => silent.includes(i.executionId))).toBe(false);
    shipper.stop();
    publisher.stop();
    outbox.close();
  });

  it('a short output goes in the result when the dispatch allows it (outputInResult): nothing in the outbox; past 8 KiB or 64 chunks it ships as items', async () => {
    const outbox = new Outbox({ file: path.join(dir, 'in-result.db') });
    const { publisher, shipper } = ship(outbox, bus);
    const short = shipper.open({ executionId: 'exec-short', instanceId: '1' });
    short.write('stdout', 'GET http://sink/job\n');
    short.write('stderr', 'warn\n');
    short.write('stdout', '200 OK\n');
    const end = shipper.end(short, 'inResult');
    expect(end).toEqual({
      output: {
        chunks: [
          { stream: 'stdout', offset: 0, allOffset: 0, data: Buffer.from('GET http://sink/job\n').toString('base64') },
          { stream: 'stderr', offset: 0, allOffset: 20, data: Buffer.from('warn\n').toString('base64') },
          { stream: 'stdout', offset: 20, allOffset: 25, data: Buffer.from('200 OK\n').toString('base64') },
        ],
        stdoutBytes: 27,
        stderrBytes: 5,
        truncated: false,
      },
    });
    expect(resultOutputSchema.safeParse(end !== undefined && 'output' in end ? end.output : null).success).toBe(true);
    expect(shipper.takeEnded(['exec-short'])).toBeNull();
    // What was shipped while it ran stays shipped; only the rest travels in the result.
    const half = shipper.open({ executionId: 'exec-half', instanceId: '1' });
    half.write('stdout', 'x'.repeat(100));
    shipper.flushNow();
    half.write('stdout', 'y'.repeat(10));
    expect(shipper.end(half, 'inResult')).toEqual({
      output: { chunks: [{ stream: 'stdout', offset: 100, allOffset: 100, data: Buffer.from('y'.repeat(10)).toString('base64') }], stdoutBytes: 110, stderrBytes: 0, truncated: false },
    });
    // Without the dispatch's word (an older broker), the same output ships as items.
    const older = shipper.open({ executionId: 'exec-older', instanceId: '1' });
    older.write('stdout', 'hello\n');
    expect(shipper.end(older, 'emptyInResult')).toBeUndefined();
    // Exactly 8 KiB goes in the result; a byte more does not.
    const fits = shipper.open({ executionId: 'exec-fits', instanceId: '1' });
    fits.write('stdout', 'f'.repeat(OUTPUT_IN_RESULT_MAX_BYTES));
    expect(shipper.end(fits, 'inResult')).toHaveProperty('output');
    const long = shipper.open({ executionId: 'exec-long', instanceId: '1' });
    long.write('stdout', 'l'.repeat(OUTPUT_IN_RESULT_MAX_BYTES + 1));
    expect(shipper.end(long, 'inResult')).toBeUndefined();
    // 65 switches of stream: 65 chunks, more than a result carries.
    const chatty = shipper.open({ executionId: 'exec-chatty', instanceId: '1' });
    for (let i = 0; i <= OUTPUT_IN_RESULT_MAX_CHUNKS; i++) chatty.write(i % 2 === 0 ? 'stdout' : 'stderr', 'c');
    expect(shipper.end(chatty, 'inResult')).toBeUndefined();
    const taken = shipper.takeEnded(['exec-older', 'exec-long', 'exec-chatty']);
    expect(taken?.executionIds).toEqual(['exec-older', 'exec-long', 'exec-chatty']);
    const rows = outbox.transaction(() => (taken === null ? [] : shipper.write(taken)));
    publisher.push(rows);
    expect(await publisher.flush(5_000)).toBe(true);
    await waitFor(() => ['exec-older', 'exec-long', 'exec-chatty'].every((id) => received.some((i) => i.executionId === id && i.part === 'end')), { description: 'the ends as items' });
    expect(received.some((i) => i.executionId === 'exec-short' || i.executionId === 'exec-fits')).toBe(false);
    expect(reassemble(received, 'exec-chatty').streams.stdout.toString()).toBe('c'.repeat(33));
    shipper.stop();
    publisher.stop();
    outbox.close();
  });
});
