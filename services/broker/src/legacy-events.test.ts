/**
 * Upgrading from the competing-consumer events queue (`<ns>.events`, builds before 2026-11-30)
 * to the single-active-consumer one (`<ns>.events.single`): replies left in the old queue are
 * applied, and the old queue is unbound, then deleted once empty and unused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeMessage, MESSAGE_VERSION } from '@ax/core';
import { silentLogger } from '@ax/kit';
import { LegacyEventsQueue } from './legacy-events.js';
import { createEventsHandler } from './replies.js';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness();
});

afterAll(async () => {
  await h?.close();
});

describe('the events queue of an older build', () => {
  it('applies the replies left in it, then unbinds and deletes it', async () => {
    const t = h.bus.topology;
    const task = await h.task('legacy_events');
    const peer = await h.peer('w-legacy', []);
    const instanceId = await h.instance(task);
    const [item] = await peer.waitDispatches(1);
    if (item === undefined) throw new Error('no dispatch');

    // What an older build left behind: its events queue, bound, holding this execution's result.
    await h.amqp.channel.assertQueue(t.legacyEventsQueue, { durable: true, arguments: { 'x-dead-letter-exchange': t.dlx } });
    await h.amqp.channel.bindQueue(t.legacyEventsQueue, t.eventsExchange, '');
    const result = encodeMessage({
      v: MESSAGE_VERSION,
      kind: 'result',
      workerId: peer.workerId,
      items: [{ executionId: item.executionId, instanceId: item.instanceId, outcome: 'SUCCESS', exitCode: 0, endedAt: new Date().toISOString() }],
    });
    h.amqp.channel.sendToQueue(t.legacyEventsQueue, result, { persistent: true });
    await h.amqp.channel.checkQueue(t.legacyEventsQueue); // the publish above has reached the server

    const legacy = new LegacyEventsQueue(h.bus, createEventsHandler(h.broker.context), 10, silentLogger());
    try {
      expect(await legacy.retireOnce()).toBe('draining');
      await h.waitState(instanceId, 'SUCCESS');
      // Unbound: a reply published now reaches only the new queue.
      await peer.ack([item]);
      expect((await h.bus.queueDepth(t.legacyEventsQueue))?.messageCount).toBe(0);
      expect(await legacy.retireOnce()).toBe('drained');
      expect(await legacy.retireOnce()).toBe('deleted');
      expect(await h.bus.queueDepth(t.legacyEventsQueue)).toBeNull();
      expect(await legacy.retireOnce()).toBe('absent');
    } finally {
      await legacy.stopConsuming();
    }
  });

  it('leaves an empty old queue alone while an older broker still consumes it', async () => {
    const t = h.bus.topology;
    await h.amqp.channel.assertQueue(t.legacyEventsQueue, { durable: true, arguments: { 'x-dead-letter-exchange': t.dlx } });
    const { consumerTag } = await h.amqp.channel.consume(t.legacyEventsQueue, () => undefined);
    const legacy = new LegacyEventsQueue(h.bus, createEventsHandler(h.broker.context), 10, silentLogger());
    expect(await legacy.retireOnce()).toBe('in-use');
    await h.amqp.channel.cancel(consumerTag);
    expect(await legacy.retireOnce()).toBe('deleted');
  });
});
