import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultAmqpConnect } from '@ax/bus';
import { waitFor } from '@ax/testing';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;
const models: unknown[] = [];

beforeAll(async () => {
  h = await startBrokerHarness({}, {
    connect: async (url, opts) => {
      const model = await defaultAmqpConnect(url, opts);
      models.push(model);
      return model;
    },
  });
});

afterAll(async () => {
  await h?.close();
});

describe('broker across an AMQP outage', () => {
  it('R14 results sent while the broker is cut off are applied after it reconnects, and expiry stays suspended for one lease period', async () => {
    const task = await h.task('outage_task', { tags: ['outage'], block: 'parallel' });
    const peer = await h.peer('w-outage', ['outage'], 8);
    const ids = [await h.instance(task), await h.instance(task), await h.instance(task)];
    const items = await peer.waitDispatches(3);
    await peer.ack(items);
    for (const id of ids) await h.waitState(id, 'RUNNING');

    const socket = (models.at(-1) as { connection: { stream: { destroy(error?: Error): void } } }).connection.stream;
    const cutAt = performance.now();
    // Watch the 'disconnected' event, not `bus.connected`: the bus may reconnect between polls.
    let disconnected = false;
    h.bus.on('disconnected', () => {
      disconnected = true;
    });
    socket.destroy(new Error('simulated network drop'));
    await waitFor(() => disconnected, { description: 'broker disconnected' });
    expect(h.broker.context.links.expirySuspended).toBe(true);
    // The worker finishes while the broker is away: the results wait in <ns>.events.
    await peer.result(items, 'SUCCESS');
    for (const id of ids) await h.waitState(id, 'SUCCESS', 15_000);
    const appliedMs = Math.round(performance.now() - cutAt);
    console.log(`AMQP outage: results applied ${appliedMs} ms after the broker's link was cut`);
    // Reconnected less than a lease period ago: ACK and lease expiry are still suspended (R14).
    expect(h.bus.connected).toBe(true);
    expect(h.broker.context.links.expirySuspended).toBe(true);
    await waitFor(() => !h.broker.context.links.expirySuspended, { description: 'expiry resumed after one lease period', timeoutMs: 5_000 });
    const events = await h.events(ids[0]!);
    expect(events.filter((e) => e === 'SUCCEEDED')).toHaveLength(1);
  });
});
