import { afterEach, describe, expect, it } from 'vitest';
import { parseMessage } from '@ax/core';
import { silentLogger } from '@ax/kit';
import { waitFor } from '@ax/testing';
import { Outbox, type OutgoingRow } from './outbox.js';
import { resultItem } from './result-items.js';
import { dispatchItem } from './testing/fixtures.js';
import { UnwrittenResults } from './unwritten-results.js';

/** An outbox whose result writes fail while `broken`. */
class BrokenOutbox extends Outbox {
  broken = true;
  override finishRow(...args: Parameters<Outbox['finishRow']>): ReturnType<Outbox['finishRow']> {
    if (this.broken) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    return super.finishRow(...args);
  }
}

/** A bus whose publishes the test settles one by one. */
function manualBus(): {
  bus: { publish: (exchange: string, key: string, body: Buffer) => Promise<void> };
  sent: Array<{ ids: string[]; confirm: () => void; fail: (error: Error) => void }>;
} {
  const sent: Array<{ ids: string[]; confirm: () => void; fail: (error: Error) => void }> = [];
  return {
    sent,
    bus: {
      publish: (_exchange, _key, body) =>
        new Promise<void>((resolve, reject) => {
          const parsed = parseMessage(body);
          const ids = parsed.ok && parsed.message.kind === 'result' ? parsed.message.items.map((i) => i.executionId) : [];
          sent.push({ ids, confirm: resolve, fail: reject });
        }),
    },
  };
}

const opened: Outbox[] = [];
const keepers: UnwrittenResults[] = [];
afterEach(() => {
  for (const k of keepers.splice(0)) k.stop();
  for (const o of opened.splice(0)) o.close();
});

function setUp(): { outbox: BrokenOutbox; keeper: UnwrittenResults; sent: ReturnType<typeof manualBus>['sent']; handedOver: OutgoingRow[]; executionId: string; result: Record<string, unknown> } {
  const outbox = new BrokenOutbox({ file: ':memory:' });
  opened.push(outbox);
  const { bus, sent } = manualBus();
  const handedOver: OutgoingRow[] = [];
  const keeper = new UnwrittenResults({ outbox, bus, exchange: 'ax.events', workerId: 'w-1', logger: silentLogger(), handOver: (rows) => handedOver.push(...rows), writeRetryMs: 20, maxWriteRetryMs: 40 });
  keepers.push(keeper);
  const item = dispatchItem();
  outbox.recordDispatch(item, Date.now(), 'running');
  const result = resultItem(item, { outcome: 'SUCCESS', exitCode: 0 }, Date.now() - 10, Date.now());
  keeper.keep([{ executionId: item.executionId, item: result, atMs: Date.now() }], new Error('database or disk is full'));
  return { outbox, keeper, sent, handedOver, executionId: item.executionId, result };
}

describe('#23 UnwrittenResults', () => {
  it('#23 publishes a result the outbox refused, leases it until confirmed, then writes it confirmed (not resent)', async () => {
    const { outbox, keeper, sent, handedOver, executionId } = setUp();
    expect(keeper.leaseIds()).toEqual([executionId]);
    await waitFor(() => sent.length === 1, { description: 'published from memory' });
    expect(sent[0]?.ids).toEqual([executionId]);
    sent[0]?.confirm();
    await waitFor(() => keeper.leaseIds().length === 0, { description: 'lease released on confirm' });
    outbox.broken = false;
    await waitFor(() => keeper.size === 0, { description: 'written after the outbox healed' });
    expect(outbox.dispatch(executionId)?.state).toBe('done');
    expect(outbox.unconfirmedCount()).toBe(0);
    expect(outbox.confirmedCounts().result).toBe(1);
    expect(handedOver).toEqual([]);
    expect(sent).toHaveLength(1);
  });

  it('#23 a write that succeeds while the memory copy is in flight is confirmed with it, or handed to the publisher once if that publish fails', async () => {
    const { outbox, keeper, sent, handedOver, executionId } = setUp();
    await waitFor(() => sent.length === 1, { description: 'published from memory' });
    outbox.broken = false;
    await waitFor(() => outbox.dispatch(executionId)?.state === 'done', { description: 'written while in flight' });
    expect(outbox.unconfirmedResultIds()).toEqual([executionId]);
    expect(keeper.leaseIds()).toEqual([executionId]);
    sent[0]?.fail(new Error('channel closed'));
    await waitFor(() => keeper.size === 0, { description: 'handed over' });
    expect(handedOver.map((r) => r.executionId)).toEqual([executionId]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sent).toHaveLength(1); // the memory copy is not sent again: the publisher owns the row
  });

  it('#23 a write that succeeds before any publish confirmed goes to the publisher; a failed publish is retried from memory meanwhile', async () => {
    const { outbox, keeper, sent, handedOver, executionId } = setUp();
    await waitFor(() => sent.length === 1, { description: 'published from memory' });
    sent[0]?.fail(new Error('nacked'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(keeper.leaseIds()).toEqual([executionId]);
    outbox.broken = false;
    await waitFor(() => keeper.size === 0, { description: 'written and handed over' });
    expect(handedOver.map((r) => r.executionId)).toEqual([executionId]);
    expect(outbox.unconfirmedResultIds()).toEqual([executionId]); // the publisher confirms it from here
    expect(sent).toHaveLength(1);
  });

  it('#23 flush publishes at once and reports whether everything was confirmed', async () => {
    const { keeper, sent } = setUp();
    const flushing = keeper.flush(2_000);
    await waitFor(() => sent.length >= 1, { description: 'published' });
    sent[0]?.confirm();
    expect(await flushing).toBe(true);
    const second = setUp();
    expect(await second.keeper.flush(50)).toBe(false);
  });
});
