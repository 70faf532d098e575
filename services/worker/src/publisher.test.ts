import { describe, expect, it, vi } from 'vitest';
import { MAX_MESSAGE_BYTES, parseMessage } from '@ax/core';
import { silentLogger } from '@ax/kit';
import { waitFor } from '@ax/testing';
import { HELD_IN_MEMORY, Outbox } from './outbox.js';
import { OutboxPublisher, retryDelayMs } from './publisher.js';

const at = '2026-12-01T02:00:00.000Z';

function fakeBus(failFirst = 0) {
  const sent: Array<{ key: string; kind: string; count: number }> = [];
  let failures = failFirst;
  return {
    sent,
    publish(_exchange: string, key: string, body: Buffer): Promise<void> {
      const parsed = parseMessage(body);
      if (!parsed.ok || !('items' in parsed.message)) return Promise.reject(new Error('invalid'));
      if (failures > 0) {
        failures -= 1;
        return Promise.reject(new Error('nacked'));
      }
      sent.push({ key, kind: parsed.message.kind, count: parsed.message.items.length });
      return Promise.resolve();
    },
  };
}

describe('OutboxPublisher', () => {
  it('R10 batches what was written together: one message per kind, at most batchSize items', async () => {
    const outbox = new Outbox({ file: ':memory:' });
    const bus = fakeBus();
    const publisher = new OutboxPublisher({ outbox, bus, exchange: 'ns.events', workerId: 'w1', logger: silentLogger(), batchSize: 500 });
    for (let i = 0; i < 1200; i++) outbox.enqueue('ack', `e${i}`, { executionId: `e${i}`, instanceId: String(i), at }, 1);
    outbox.enqueue('result', 'e0', { executionId: 'e0', instanceId: '0', outcome: 'SUCCESS', endedAt: at }, 1);
    publisher.wake();
    await waitFor(() => outbox.unconfirmedCount() === 0, { description: 'all confirmed' });
    expect(bus.sent.filter((m) => m.kind === 'ack').map((m) => m.count)).toEqual([500, 500, 200]);
    expect(bus.sent.filter((m) => m.kind === 'result')).toEqual([{ key: 'result', kind: 'result', count: 1 }]);
    expect(outbox.confirmedCounts()).toEqual({ ack: 1200, refusal: 0, result: 1 });
    publisher.stop();
    outbox.close();
  });

  it('a batch over the brokers\' message limit (500 results with 64 KiB output tails) is cut until each message fits; none is refused', async () => {
    const outbox = new Outbox({ file: ':memory:' });
    const bus = fakeBus();
    const sizes: number[] = [];
    const measuring = { publish: (e: string, k: string, body: Buffer) => (sizes.push(body.length), bus.publish(e, k, body)) };
    const publisher = new OutboxPublisher({ outbox, bus: measuring, exchange: 'ns.events', workerId: 'w1', logger: silentLogger(), batchSize: 500 });
    const tail = '€'.repeat(21_845); // 65,535 bytes of UTF-8
    const rows = Array.from({ length: 500 }, (_, i) =>
      outbox.enqueueRow('result', `e${i}`, { executionId: `e${i}`, instanceId: String(i), outcome: 'FAILED', outputTail: tail, endedAt: at }, 1, HELD_IN_MEMORY),
    );
    publisher.push(rows.flatMap((r) => (r === null ? [] : [r])));
    await waitFor(() => outbox.unconfirmedCount() === 0, { description: 'all confirmed', timeoutMs: 20_000 });
    expect(bus.sent.reduce((n, m) => n + m.count, 0)).toBe(500);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(bus.sent.length).toBeLessThanOrEqual(4);
    publisher.stop();
    outbox.close();
  });

  it('a failed publish stays unconfirmed, backs off and is resent; flush forces it', async () => {
    const outbox = new Outbox({ file: ':memory:' });
    const bus = fakeBus(1);
    const publisher = new OutboxPublisher({ outbox, bus, exchange: 'ns.events', workerId: 'w1', logger: silentLogger() });
    outbox.enqueue('result', 'e1', { executionId: 'e1', instanceId: '1', outcome: 'FAILED', endedAt: at }, 1);
    publisher.wake();
    await waitFor(() => outbox.due(Number.MAX_SAFE_INTEGER, 1)[0]?.attempts === 1, { description: 'first attempt failed' });
    expect(outbox.unconfirmedCount()).toBe(1);
    expect(outbox.nextDueMs()).toBeGreaterThan(Date.now());
    expect(await publisher.flush(2_000)).toBe(true);
    expect(bus.sent).toEqual([{ key: 'result', kind: 'result', count: 1 }]);
    expect(retryDelayMs(0)).toBe(1_000);
    expect(retryDelayMs(20)).toBe(60_000);
    publisher.stop();
    outbox.close();
  });

  it('R16 an ACK waits its linger in memory; when the result is pushed meanwhile, only the result is sent', async () => {
    const outbox = new Outbox({ file: ':memory:' });
    const bus = fakeBus();
    const publisher = new OutboxPublisher({ outbox, bus, exchange: 'ns.events', workerId: 'w1', logger: silentLogger(), ackLingerMs: 300 });
    publisher.ack({ executionId: 'short', instanceId: '1', at }, Date.now());
    publisher.ack({ executionId: 'long', instanceId: '2', at }, Date.now());
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(bus.sent).toEqual([]); // both ACKs still lingering
    const now = Date.now();
    const row = outbox.enqueueRow('result', 'short', { executionId: 'short', instanceId: '1', outcome: 'SUCCESS', endedAt: at }, now, HELD_IN_MEMORY);
    expect(row).not.toBeNull();
    expect(outbox.due(now, 10)).toEqual([]); // held: sent from memory, not read back
    publisher.push(row === null ? [] : [row]);
    await waitFor(() => bus.sent.length === 2, { description: 'result and the long ACK sent' });
    expect(bus.sent).toEqual([
      { key: 'result', kind: 'result', count: 1 },
      { key: 'ack', kind: 'ack', count: 1 }, // the long job's ACK, after its linger
    ]);
    await waitFor(() => outbox.unconfirmedCount() === 0, { description: 'result confirmed' });
    expect(outbox.confirmedCounts()).toEqual({ ack: 0, refusal: 0, result: 1 });
    publisher.stop();
    outbox.close();
  });

  it('R16 an ACK row an older build left in the outbox is folded into its result there', async () => {
    const outbox = new Outbox({ file: ':memory:' });
    const bus = fakeBus();
    outbox.enqueue('ack', 'e1', { executionId: 'e1', instanceId: '1', at }, 1);
    outbox.enqueue('result', 'e1', { executionId: 'e1', instanceId: '1', outcome: 'SUCCESS', endedAt: at }, 1);
    const publisher = new OutboxPublisher({ outbox, bus, exchange: 'ns.events', workerId: 'w1', logger: silentLogger() });
    publisher.wake();
    await waitFor(() => outbox.unconfirmedCount() === 0, { description: 'all confirmed' });
    expect(bus.sent).toEqual([{ key: 'result', kind: 'result', count: 1 }]);
    expect(outbox.confirmedCounts()).toEqual({ ack: 1, refusal: 0, result: 1 });
    publisher.stop();
    outbox.close();
  });

  it('a held item pushed in memory and never sent (a crash) is replayed after a restart', () => {
    const outbox = new Outbox({ file: ':memory:' });
    const now = Date.now();
    outbox.enqueueRow('result', 'e1', { executionId: 'e1', instanceId: '1', outcome: 'SUCCESS', endedAt: at }, now, now + 30_000);
    expect(outbox.due(now, 10)).toEqual([]);
    const publisher = new OutboxPublisher({ outbox, bus: fakeBus(), exchange: 'ns.events', workerId: 'w1', logger: silentLogger() });
    expect(outbox.due(now, 10).map((r) => r.executionId)).toEqual(['e1']);
    publisher.stop();
    outbox.close();
  });

  it('reads the outbox only when something may be there: at start, after a failed publish, on replay()', async () => {
    const outbox = new Outbox({ file: ':memory:' });
    const bus = fakeBus();
    const due = vi.spyOn(outbox, 'due');
    const publisher = new OutboxPublisher({ outbox, bus, exchange: 'ns.events', workerId: 'w1', logger: silentLogger() });
    publisher.wake();
    await waitFor(() => due.mock.calls.length === 1, { description: 'the start-up read' });
    const rows = ['e1', 'e2'].flatMap(
      (id) => outbox.enqueueRow('result', id, { executionId: id, instanceId: '1', outcome: 'SUCCESS', endedAt: at }, 1, HELD_IN_MEMORY) ?? [],
    );
    publisher.push(rows);
    await waitFor(() => outbox.unconfirmedCount() === 0, { description: 'pushed items confirmed' });
    expect(due.mock.calls.length).toBe(1); // sent from memory, never read back
    outbox.enqueue('result', 'e3', { executionId: 'e3', instanceId: '1', outcome: 'SUCCESS', endedAt: at }, 1);
    publisher.wake();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(outbox.unconfirmedCount()).toBe(1); // written without push: waits for replay()
    publisher.replay();
    await waitFor(() => outbox.unconfirmedCount() === 0, { description: 'replayed' });
    expect(bus.sent.map((m) => m.count)).toEqual([2, 1]);
    publisher.stop();
    outbox.close();
  });

  it('#23 an outbox read that fails (SQLITE_BUSY) in the publish loop is logged and retried, never thrown out of a timer', async () => {
    class BusyOutbox extends Outbox {
      busyReads = 0;
      override due(...args: Parameters<Outbox['due']>): ReturnType<Outbox['due']> {
        if (this.busyReads > 0) {
          this.busyReads -= 1;
          throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
        }
        return super.due(...args);
      }
    }
    const errors: unknown[] = [];
    const onError = (error: unknown): void => void errors.push(error);
    process.on('uncaughtException', onError);
    const outbox = new BusyOutbox({ file: ':memory:' });
    const bus = fakeBus();
    const publisher = new OutboxPublisher({ outbox, bus, exchange: 'ns.events', workerId: 'w1', logger: silentLogger() });
    try {
      outbox.enqueue('result', 'e1', { executionId: 'e1', instanceId: '1', outcome: 'SUCCESS', endedAt: at }, 1);
      outbox.busyReads = 2;
      publisher.replay();
      await waitFor(() => outbox.unconfirmedCount() === 0, { description: 'sent once the outbox reads again', timeoutMs: 8_000 });
      expect(bus.sent).toEqual([{ key: 'result', kind: 'result', count: 1 }]);
      expect(errors).toEqual([]);
    } finally {
      process.off('uncaughtException', onError);
      publisher.stop();
      outbox.close();
    }
  });

  it('#23 a confirm the outbox could not record (disk full) is recorded again once it can, not left until a restart', async () => {
    class FullOutbox extends Outbox {
      fullWrites = 0;
      override confirm(...args: Parameters<Outbox['confirm']>): ReturnType<Outbox['confirm']> {
        if (this.fullWrites > 0) {
          this.fullWrites -= 1;
          throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
        }
        return super.confirm(...args);
      }
    }
    const outbox = new FullOutbox({ file: ':memory:' });
    const bus = fakeBus();
    const publisher = new OutboxPublisher({ outbox, bus, exchange: 'ns.events', workerId: 'w1', logger: silentLogger() });
    try {
      outbox.fullWrites = 2; // the confirm and its first retry fail
      const row = outbox.enqueueRow('result', 'e1', { executionId: 'e1', instanceId: '1', outcome: 'SUCCESS', endedAt: at }, 1, HELD_IN_MEMORY);
      publisher.push(row === null ? [] : [row]);
      await waitFor(() => bus.sent.length === 1 && outbox.fullWrites === 0, { description: 'published; the confirm failed twice' });
      expect(outbox.unconfirmedCount()).toBe(1);
      await waitFor(() => outbox.unconfirmedCount() === 0, { description: 'the confirm recorded once the disk has room', timeoutMs: 8_000 });
      expect(bus.sent).toEqual([{ key: 'result', kind: 'result', count: 1 }]); // confirmed, never sent twice
      expect(outbox.unconfirmedResultIds()).toEqual([]); // out of the lease again
    } finally {
      publisher.stop();
      outbox.close();
    }
  });
});
