/**
 * Upgrading from the shared queues of earlier builds — the competing-consumer `<ns>.events`
 * (before 2026-11-30) and the classic `<ns>.events.single`, `<ns>.logs`, `<ns>.dead`,
 * `<ns>.dead.parked` (before the quorum queues, #23) — to the quorum queues of this build:
 * a bus of this build starts while they exist (no PRECONDITION_FAILED), what they hold is
 * applied (events, dead letters) or moved (parked dead letters, headers kept), and they are
 * unbound, then deleted once empty and unused.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBus, DEAD_REASON_HEADER, DEAD_SOURCE_HEADER, PARKED_REASON_HEADER } from '@ax/bus';
import { encodeMessage, MESSAGE_VERSION } from '@ax/core';
import { silentLogger } from '@ax/kit';
import { waitFor } from '@ax/testing';
import type { RowDataPacket } from 'mysql2';
import { LegacyQueues } from './legacy-events.js';
import { createDeadLetterHandler } from './dead-letters.js';
import { createEventsHandler } from './replies.js';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness();
});

afterAll(async () => {
  await h?.close();
});

function legacyQueues(): LegacyQueues {
  return new LegacyQueues(
    h.bus,
    { events: { handler: createEventsHandler(h.broker.context), prefetch: 10 }, dead: { handler: createDeadLetterHandler(h.broker.context), prefetch: 10 } },
    silentLogger(),
  );
}

describe('the shared queues of an older build', () => {
  it('applies the replies left in <ns>.events, then unbinds and deletes it', async () => {
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

    const legacy = legacyQueues();
    try {
      expect((await legacy.retireOnce()).get(t.legacyEventsQueue)).toBe('draining');
      await h.waitState(instanceId, 'SUCCESS');
      // Unbound: a reply published now reaches only the new queue.
      await peer.ack([item]);
      expect((await h.bus.queueDepth(t.legacyEventsQueue))?.messageCount).toBe(0);
      expect((await legacy.retireOnce()).get(t.legacyEventsQueue)).toBe('drained');
      expect((await legacy.retireOnce()).get(t.legacyEventsQueue)).toBe('deleted');
      expect(await h.bus.queueDepth(t.legacyEventsQueue)).toBeNull();
      expect((await legacy.retireOnce()).get(t.legacyEventsQueue)).toBe('absent');
    } finally {
      await legacy.stopConsuming();
    }
  });

  it('leaves an empty old queue alone while an older broker still consumes it', async () => {
    const t = h.bus.topology;
    await h.amqp.channel.assertQueue(t.legacyEventsQueue, { durable: true, arguments: { 'x-dead-letter-exchange': t.dlx } });
    const { consumerTag } = await h.amqp.channel.consume(t.legacyEventsQueue, () => undefined);
    const legacy = legacyQueues();
    expect((await legacy.retireOnce()).get(t.legacyEventsQueue)).toBe('in-use');
    await h.amqp.channel.cancel(consumerTag);
    expect((await legacy.retireOnce()).get(t.legacyEventsQueue)).toBe('deleted');
  });

  it('#23 moves an existing deployment from the classic shared queues to quorum queues: nothing refused, lost or left behind', async () => {
    const t = h.bus.topology;
    const old = { events: `${t.namespace}.events.single`, logs: `${t.namespace}.logs`, dead: `${t.namespace}.dead`, parked: `${t.namespace}.dead.parked` };
    const ch = h.amqp.channel;
    // The classic queues exactly as the previous build declared and bound them.
    await ch.assertQueue(old.dead, { durable: true });
    await ch.bindQueue(old.dead, t.dlx, '');
    await ch.assertQueue(old.parked, { durable: true });
    await ch.assertQueue(old.events, { durable: true, arguments: { 'x-dead-letter-exchange': t.dlx, 'x-single-active-consumer': true } });
    await ch.bindQueue(old.events, t.eventsExchange, '');
    await ch.assertQueue(old.logs, { durable: true, arguments: { 'x-dead-letter-exchange': t.dlx } });
    await ch.bindQueue(old.logs, t.logsExchange, '');
    // The quorum queues of this build cannot take the old names: RabbitMQ refuses the type change.
    const probe = await h.amqp.connection.createChannel();
    probe.on('error', () => undefined);
    await expect(probe.assertQueue(old.events, { durable: true, arguments: { 'x-queue-type': 'quorum' } })).rejects.toThrow(/PRECONDITION_FAILED/);

    // A process of this build starts against them: its own queues are quorum queues.
    const fresh = createBus({ url: h.amqp.url, namespace: t.namespace, logger: silentLogger(), name: 'legacy-fresh' });
    await fresh.start();
    await fresh.close();
    const types = await queueTypes(t.namespace);
    for (const q of [t.eventsQueue, t.logsQueue, t.deadQueue, t.parkedQueue]) expect(types.get(q)).toBe('quorum');
    for (const q of Object.values(old)) expect(types.get(q)).toBe('classic');

    // What the old queues still hold: a result, a dead letter, a parked dead letter.
    // Its own tag: the first test's peer (no tags) is still registered, and a tie in load is broken at random.
    const task = await h.task('legacy_classic', { tags: ['legacy-classic'] });
    const peer = await h.peer('w-legacy-classic', ['legacy-classic']);
    const instanceId = await h.instance(task);
    const [item] = await peer.waitDispatches(1);
    if (item === undefined) throw new Error('no dispatch');
    await peer.ack([item]);
    const result = encodeMessage({
      v: MESSAGE_VERSION,
      kind: 'result',
      workerId: peer.workerId,
      items: [{ executionId: item.executionId, instanceId: item.instanceId, outcome: 'SUCCESS', exitCode: 0, endedAt: new Date().toISOString() }],
    });
    ch.sendToQueue(old.events, result, { persistent: true });
    ch.sendToQueue(old.dead, Buffer.from('old dead letter: not json'), {
      persistent: true,
      headers: { [DEAD_REASON_HEADER]: 'invalid JSON', [DEAD_SOURCE_HEADER]: old.events },
    });
    ch.sendToQueue(old.parked, Buffer.from('old parked letter'), { persistent: true, messageId: 'parked-1', headers: { [PARKED_REASON_HEADER]: 'table gone', 'x-custom': 'kept' } });
    await ch.checkQueue(old.parked);

    const legacy = legacyQueues();
    try {
      const first = await legacy.retireOnce();
      expect(first.get(old.events)).toBe('draining');
      expect(first.get(old.dead)).toBe('draining');
      expect(first.get(old.parked)).toBe('draining');
      expect(first.get(old.logs)).toBeUndefined(); // no logs handler given: left to a broker that has one
      await h.waitState(instanceId, 'SUCCESS');
      const stored = await waitFor(async () => {
        const [rows] = await h.db.pool.query<RowDataPacket[]>('SELECT source_queue, reason FROM dead_letter WHERE source_queue = ?', [old.events]);
        return rows.length > 0 ? rows : null;
      }, { description: 'the old dead letter stored' });
      expect(stored).toHaveLength(1);
      const moved = await waitFor(() => ch.get(t.parkedQueue, { noAck: true }), { description: 'the parked dead letter moved' });
      expect(moved.content.toString()).toBe('old parked letter');
      expect(moved.properties.messageId).toBe('parked-1');
      expect(moved.properties.headers).toMatchObject({ [PARKED_REASON_HEADER]: 'table gone', 'x-custom': 'kept' });

      // Unbound: an event now reaches only the quorum queue.
      await h.peerBus.publish(t.eventsExchange, 'heartbeat', Buffer.from('{}'));
      await waitFor(async () => {
        const states = await legacy.retireOnce();
        return [old.events, old.dead, old.parked].every((q) => states.get(q) === 'deleted' || states.get(q) === 'absent') ? states : null;
      }, { description: 'the old queues deleted', timeoutMs: 10_000 });
      const after = await queueTypes(t.namespace);
      for (const q of [old.events, old.dead, old.parked]) expect(after.has(q)).toBe(false);
      expect(await ch.checkQueue(t.parkedQueue)).toMatchObject({ messageCount: 0 });
    } finally {
      await legacy.stopConsuming();
      await ch.deleteQueue(old.logs);
    }
  });
});

/** `name → type` of the namespace's queues (rabbitmqctl, as the namespace cleanup lists them). */
async function queueTypes(namespace: string): Promise<Map<string, string>> {
  const { stdout } = await promisify(execFile)('rabbitmqctl', ['list_queues', '-q', '--no-table-headers', 'name', 'type'], {
    env: { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin` },
    timeout: 30_000,
  });
  const types = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const [name, type] = line.trim().split(/\s+/);
    if (name !== undefined && type !== undefined && name.startsWith(`${namespace}.`)) types.set(name, type);
  }
  return types;
}
