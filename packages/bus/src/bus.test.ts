import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { connect, type ChannelModel } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@ax/kit';
import { createTestAmqp, startTcpProxy, throughProxy, uniqueNamespace, waitFor, type CuttableProxy, type TestAmqp } from '@ax/testing';
import {
  DEAD_REASON_HEADER,
  DEAD_SOURCE_HEADER,
  PARKED_REASON_HEADER,
  REQUEUE_COUNT_HEADER,
  SENDER_HEADER,
  amqpUserOf,
  busTopology,
  createBus,
  type AmqpConnectFn,
  type Bus,
  type BusMessage,
  type ReturnedMessage,
} from './index.js';

const namespace = uniqueNamespace('axbus');
const topology = busTopology(namespace);
let amqp: TestAmqp;
const buses: Bus[] = [];

function newBus(extra: { connect?: AmqpConnectFn; maxRequeues?: number; url?: string | readonly string[]; userId?: string } = {}): Bus {
  const bus = createBus({ url: amqp.url, namespace, logger: silentLogger(), name: `test-${namespace}`, reconnectInitialDelayMs: 50, ...extra });
  buses.push(bus);
  return bus;
}

/** Reads every message of the dead queue (test peer, not the bus). */
async function drainDead(): Promise<Array<{ body: string; headers: Record<string, unknown> }>> {
  const out: Array<{ body: string; headers: Record<string, unknown> }> = [];
  for (;;) {
    const msg = await amqp.channel.get(topology.deadQueue, { noAck: true });
    if (msg === false) return out;
    out.push({ body: msg.content.toString(), headers: (msg.properties.headers ?? {}) });
  }
}

beforeAll(async () => {
  amqp = await createTestAmqp(namespace);
});

afterAll(async () => {
  for (const bus of buses) await bus.close();
  await amqp.cleanup();
});

describe('@ax/bus against RabbitMQ', () => {
  it('names every exchange and queue under the namespace', () => {
    expect(topology.dispatchExchange).toBe(`${namespace}.dispatch`);
    expect(topology.workerQueue('w-1')).toBe(`${namespace}.worker.w-1`);
    expect(topology.controlQueue('w-1')).toBe(`${namespace}.worker.w-1.control`);
    expect(topology.controlRoutingKey('w-1')).toBe('w-1.control');
    expect(() => topology.workerQueue('bad id')).toThrow(RangeError);
  });

  it('publishes with confirms and delivers to a consumer that acks', async () => {
    const bus = newBus();
    await bus.start();
    expect(bus.connected).toBe(true);
    await bus.assertWorkerQueues('w-ack');
    const got: BusMessage[] = [];
    const consumer = await bus.consume(topology.workerQueue('w-ack'), async (m) => {
      got.push(m);
      return 'ack';
    });
    await bus.publish(topology.dispatchExchange, 'w-ack', Buffer.from('{"n":1}'), { messageId: 'm1', mandatory: true });
    await bus.publish(topology.dispatchExchange, 'w-ack.control', Buffer.from('{"cancel":1}'));
    await waitFor(() => got.length === 1, { description: 'one delivery' });
    expect(got[0]?.body.toString()).toBe('{"n":1}');
    expect(got[0]?.messageId).toBe('m1');
    await consumer.cancel();
    const control = await amqp.channel.get(topology.controlQueue('w-ack'), { noAck: true });
    expect(control !== false && control.content.toString()).toBe('{"cancel":1}');
    expect(await bus.queueDepth(topology.workerQueue('w-ack'))).toEqual({ messageCount: 0, consumerCount: 0 });
    expect(await bus.queueDepth(`${namespace}.missing`)).toBeNull();
  });

  it('reads consumer counts again and again past missing queues (a refusal closes the channel; the rest are read on a new one)', async () => {
    const bus = newBus();
    await bus.start();
    await bus.assertWorkerQueues('w-cc1');
    await bus.assertWorkerQueues('w-cc2');
    const consumer = await bus.consume(topology.controlQueue('w-cc2'), async () => 'ack');
    const queues = [topology.controlQueue('w-cc1'), `${namespace}.missing-a`, topology.controlQueue('w-cc2'), `${namespace}.missing-b`];
    const expected = new Map<string, number | null>([
      [queues[0] as string, 0],
      [queues[1] as string, null],
      [queues[2] as string, 1],
      [queues[3] as string, null],
    ]);
    for (let round = 0; round < 3; round++) {
      expect(await bus.consumerCounts(queues)).toEqual(expected);
      expect(await bus.queueDepth(topology.controlQueue('w-cc2'))).toEqual({ messageCount: 0, consumerCount: 1 });
    }
    await consumer.cancel();
    expect((await bus.consumerCounts(queues)).get(queues[2] as string)).toBe(0);
  });

  it('dead-letters a message whose handler throws, with the reason in a header, and keeps consuming', async () => {
    const bus = newBus();
    await bus.start();
    const seen: string[] = [];
    const consumer = await bus.consume(topology.eventsQueue, async (m) => {
      const text = m.body.toString();
      seen.push(text);
      if (text === 'poison') throw new Error('cannot read this');
      return 'ack';
    });
    await bus.publish(topology.eventsExchange, 'result', Buffer.from('poison'));
    await bus.publish(topology.eventsExchange, 'result', Buffer.from('fine'));
    await waitFor(() => seen.includes('fine'), { description: 'the next message' });
    await consumer.cancel();
    const dead = await waitFor(async () => {
      const d = await drainDead();
      return d.length > 0 ? d : null;
    }, { description: 'dead letter' });
    expect(dead).toHaveLength(1);
    expect(dead[0]?.body).toBe('poison');
    expect(dead[0]?.headers[DEAD_REASON_HEADER]).toBe('handler threw: cannot read this');
    expect(dead[0]?.headers[DEAD_SOURCE_HEADER]).toBe(topology.eventsQueue);
  });

  it('allows requeue a bounded number of times, then dead-letters', async () => {
    const bus = newBus({ maxRequeues: 3 });
    await bus.start();
    const counts: unknown[] = [];
    const consumer = await bus.consume(topology.eventsQueue, async (m) => {
      counts.push(m.headers[REQUEUE_COUNT_HEADER] ?? 0);
      return 'requeue';
    });
    await bus.publish(topology.eventsExchange, 'x', Buffer.from('again'));
    const dead = await waitFor(async () => {
      const d = await drainDead();
      return d.length > 0 ? d : null;
    }, { description: 'requeue limit dead letter' });
    await consumer.cancel();
    expect(counts).toEqual([0, 1, 2, 3]);
    expect(dead[0]?.headers[DEAD_REASON_HEADER]).toBe('requeued 3 times (limit 3)');
  });

  it('resolves an unroutable mandatory publish and reports it to onReturned (R8)', async () => {
    const bus = newBus();
    const returned: ReturnedMessage[] = [];
    bus.onReturned((m) => returned.push(m));
    await bus.start();
    await bus.publish(topology.dispatchExchange, 'no-such-worker', Buffer.from('{}'), { mandatory: true, messageId: 'lost-1' });
    await waitFor(() => returned.length === 1, { description: 'returned message' });
    expect(returned[0]).toMatchObject({ routingKey: 'no-such-worker', messageId: 'lost-1', exchange: topology.dispatchExchange });
  });

  it('R24: an enrolled worker queue is not bound to the dispatch exchange, yet gets dispatches and cancels by queue name; a missing queue returns them', async () => {
    const bus = newBus();
    const returned: ReturnedMessage[] = [];
    bus.onReturned((m) => returned.push(m));
    await bus.start();
    const enrolled = 'enr-abcdefabcdef.host-1';
    await bus.assertWorkerQueues(enrolled);
    // nothing bound: a publish on the dispatch exchange does not reach it
    await bus.publish(topology.dispatchExchange, topology.workerRoutingKey(enrolled), Buffer.from('old way'), { mandatory: true, messageId: 'old' });
    await waitFor(() => returned.some((r) => r.messageId === 'old'), { description: 'the dispatch-exchange publish returned' });
    await bus.publish('', topology.workerQueue(enrolled), Buffer.from('by name'), { mandatory: true });
    await bus.publish('', topology.controlQueue(enrolled), Buffer.from('cancel by name'));
    const got = await waitFor(async () => (await amqp.channel.get(topology.workerQueue(enrolled), { noAck: true })) || undefined, { description: 'the dispatch' });
    expect(got.content.toString()).toBe('by name');
    const cancel = await waitFor(async () => (await amqp.channel.get(topology.controlQueue(enrolled), { noAck: true })) || undefined, { description: 'the cancel' });
    expect(cancel.content.toString()).toBe('cancel by name');
    await bus.publish('', topology.workerQueue('enr-abcdefabcdef.gone'), Buffer.from('{}'), { mandatory: true, messageId: 'gone-1' });
    await waitFor(() => returned.some((r) => r.messageId === 'gone-1'), { description: 'the publish to a missing queue returned' });
  });

  it("R24: handlers see the publisher's validated user; a requeue keeps it, and a sender header written by the publisher is ignored", async () => {
    const user = amqpUserOf(amqp.url) as string;
    const bus = newBus({ userId: user });
    await bus.start();
    const queue = `${namespace}.sender-test`;
    await amqp.channel.assertQueue(queue, { durable: false });
    const seen: Array<{ userId: string | undefined; requeues: unknown }> = [];
    const consumer = await bus.consume(queue, async (m) => {
      seen.push({ userId: m.userId, requeues: m.headers[REQUEUE_COUNT_HEADER] });
      return seen.length === 1 || seen.length === 3 ? 'requeue' : 'ack';
    });
    // published by a peer under its own user, claiming to relay for someone else
    amqp.channel.sendToQueue(queue, Buffer.from('a'), { userId: user, headers: {} });
    await waitFor(() => seen.length === 2, { description: 'delivered, requeued, delivered again' });
    expect(seen.map((s) => s.userId)).toEqual([user, user]);
    amqp.channel.sendToQueue(queue, Buffer.from('b'), { headers: { [SENDER_HEADER]: 'ns.enr-forgedforged' } });
    await waitFor(() => seen.length === 4, { description: 'the second message twice' });
    // no user_id of its own: its header is not believed, before or after the requeue (which
    // this bus re-published under its own user, naming no sender)
    expect(seen[2]?.userId).toBeUndefined();
    expect(seen[3]?.userId).toBe(user);
    expect(seen[3]?.requeues).toBe(1);
    await consumer.cancel();
    expect(amqpUserOf(['amqp://a:x@h1', 'amqp://b:x@h2'])).toBeUndefined();
    expect(amqpUserOf('amqp://h1')).toBe('guest');
  });

  it('declares worker queues as priority queues with a DLX and x-expires, delivering higher priority first', async () => {
    const bus = newBus();
    await bus.start();
    await bus.assertWorkerQueues('w-prio');
    for (const p of [1, 9, 5]) await bus.publish(topology.dispatchExchange, 'w-prio', Buffer.from(String(p)), { priority: p });
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      const m = await amqp.channel.get(topology.workerQueue('w-prio'), { noAck: true });
      if (m !== false) order.push(m.content.toString());
    }
    expect(order).toEqual(['9', '5', '1']);
    const { stdout } = await promisify(execFile)('rabbitmqctl', ['list_queues', '-q', '--no-table-headers', 'name', 'arguments'], { timeout: 30_000 });
    const line = stdout.split('\n').find((l) => l.startsWith(`${topology.workerQueue('w-prio')}\t`));
    expect(line).toContain('x-max-priority');
    expect(line).toContain('x-expires');
    expect(line).toContain(`x-dead-letter-exchange`);
    expect(line).toContain(topology.dlx);
  });

  it('reconnects after the socket is destroyed: held publishes are re-sent and consumers re-attached', async () => {
    const models: ChannelModel[] = [];
    const bus = newBus({
      connect: async (url, opts) => {
        const model = await connect(url, opts);
        models.push(model);
        return model;
      },
    });
    const events: string[] = [];
    bus.on('connected', () => events.push('connected'));
    bus.on('disconnected', () => events.push('disconnected'));
    await bus.start();
    await bus.assertWorkerQueues('w-drop');
    const got: string[] = [];
    const consumer = await bus.consume(topology.workerQueue('w-drop'), async (m) => {
      got.push(m.body.toString());
      return 'ack';
    });
    await bus.publish(topology.dispatchExchange, 'w-drop', Buffer.from('before'));
    await waitFor(() => got.includes('before'), { description: 'delivery before the drop' });

    const socket = (models[0] as unknown as { connection: { stream: { destroy(error?: Error): void } } }).connection.stream;
    const droppedAt = performance.now();
    socket.destroy(new Error('simulated network drop'));
    // The 'disconnected' event, not `bus.connected`: with TCP_NODELAY the bus may reconnect
    // between two polls.
    await waitFor(() => events.includes('disconnected'), { description: 'disconnected' });
    // Published while down: held, then sent once the bus is back.
    const held = bus.publish(topology.dispatchExchange, 'w-drop', Buffer.from('while-down'));
    await held;
    const resentMs = Math.round(performance.now() - droppedAt);
    await waitFor(() => got.includes('while-down'), { description: 'delivery after the reconnect', timeoutMs: 10_000 });
    const reattachedMs = Math.round(performance.now() - droppedAt);
    console.log(`bus reconnect: held publish confirmed ${resentMs} ms after the drop; consumer got it after ${reattachedMs} ms`);
    expect(models.length).toBeGreaterThanOrEqual(2);
    expect(events).toEqual(['connected', 'disconnected', 'connected']);
    await consumer.cancel();
  });

  it('rejects held publishes on close()', async () => {
    const bus = createBus({ url: 'amqp://guest:guest@127.0.0.1:1', namespace, logger: silentLogger(), name: 'nowhere', reconnectInitialDelayMs: 50 });
    const started = bus.start();
    const held = bus.publish(topology.eventsExchange, '', Buffer.from('x'));
    await bus.close();
    await expect(held).rejects.toMatchObject({ code: 'BUS_CLOSED' });
    await expect(started).rejects.toMatchObject({ code: 'BUS_CLOSED' });
  });
});

describe('@ax/bus consumer of the dead-letter queue (#23)', () => {
  const original = { [DEAD_REASON_HEADER]: 'invalid JSON at the source', [DEAD_SOURCE_HEADER]: `${namespace}.events.single`, 'x-custom': 'kept' };

  it('#23 parks a dead letter whose handler throws in <ns>.dead.parked with its original headers, instead of looping it through <ns>.dlx', async () => {
    const bus = newBus();
    await bus.start();
    let calls = 0;
    const consumer = await bus.consume(topology.deadQueue, async () => {
      calls += 1;
      throw new Error('store is broken');
    });
    await bus.publish(topology.dlx, 'result', Buffer.from('dead once'), { headers: original });
    const parked = await waitFor(() => amqp.channel.get(topology.parkedQueue, { noAck: true }), { description: 'the parked dead letter' });
    await new Promise((resolve) => setTimeout(resolve, 300)); // a loop would call the handler again meanwhile
    await consumer.cancel();
    expect(calls).toBe(1);
    expect(parked.content.toString()).toBe('dead once');
    expect(parked.properties.headers).toMatchObject({ ...original, [PARKED_REASON_HEADER]: 'handler threw: store is broken' });
    expect(await drainDead()).toEqual([]);
  });

  it('#23 gives a held delivery back to its queue unchanged when its consumer is cancelled (signal, then release)', async () => {
    const bus = newBus();
    await bus.start();
    const held: BusMessage[] = [];
    const consumer = await bus.consume(topology.deadQueue, async (m) => {
      held.push(m);
      await new Promise((resolve) => m.signal.addEventListener('abort', resolve, { once: true }));
      return 'release';
    });
    await bus.publish(topology.dlx, 'result', Buffer.from('held'), { headers: original });
    await waitFor(() => held.length === 1, { description: 'the delivery held by the handler' });
    expect(held[0]?.signal.aborted).toBe(false);
    const cancelStarted = Date.now();
    await consumer.cancel();
    expect(Date.now() - cancelStarted, 'cancel waits for no timeout').toBeLessThan(2_000);
    const back = await waitFor(() => amqp.channel.get(topology.deadQueue, { noAck: true }), { description: 'the released delivery' });
    expect(back.content.toString()).toBe('held');
    expect(back.fields.redelivered).toBe(true);
    // A quorum queue counts deliveries (`x-delivery-count`); the message itself is unchanged.
    expect(back.properties.headers).toEqual({ ...original, 'x-delivery-count': 1 });
    expect(await amqp.channel.get(topology.parkedQueue, { noAck: true })).toBe(false);
  });
});

describe('@ax/bus events queue: one broker at a time, and the queue of older builds', () => {
  const ns = uniqueNamespace('axsac');
  const t = busTopology(ns);
  let peer: TestAmqp;
  const own: Bus[] = [];
  const bus = (): Bus => {
    const b = createBus({ url: peer.url, namespace: ns, logger: silentLogger(), name: `test-${ns}`, reconnectInitialDelayMs: 50 });
    own.push(b);
    return b;
  };
  const event = (n: number): Buffer => Buffer.from(JSON.stringify({ n }));

  beforeAll(async () => {
    peer = await createTestAmqp(ns);
  });
  afterAll(async () => {
    for (const b of own) await b.close();
    await peer.cleanup();
  });

  it('delivers events to a single active consumer, and to the next one when it stops', async () => {
    const [a, b] = [bus(), bus()];
    await a.start();
    await b.start();
    const got: Record<'a' | 'b', number[]> = { a: [], b: [] };
    const handler = (who: 'a' | 'b') => async (m: BusMessage) => {
      got[who].push((JSON.parse(m.body.toString()) as { n: number }).n);
      return 'ack' as const;
    };
    const consumerA = await a.consume(t.eventsQueue, handler('a'), { prefetch: 5 });
    const consumerB = await b.consume(t.eventsQueue, handler('b'), { prefetch: 5 });
    for (let n = 1; n <= 20; n++) await a.publish(t.eventsExchange, 'result', event(n));
    await waitFor(() => got.a.length + got.b.length === 20, { description: '20 events delivered' });
    expect(got.a).toEqual(Array.from({ length: 20 }, (_, i) => i + 1)); // the first consumer is the active one
    expect(got.b).toEqual([]);
    await consumerA.cancel();
    for (let n = 21; n <= 25; n++) await a.publish(t.eventsExchange, 'result', event(n));
    await waitFor(() => got.b.length === 5, { description: 'the second consumer took over' });
    expect(got.b).toEqual([21, 22, 23, 24, 25]);
    await consumerB.cancel();
  });

  it('unbinds the queue of an older build, and deletes it only when empty and unused', async () => {
    const b = bus();
    await b.start();
    // What a build before 2026-11-30 declared: `<ns>.events`, competing consumers.
    await peer.channel.assertQueue(t.legacyEventsQueue, { durable: true, arguments: { 'x-dead-letter-exchange': t.dlx } });
    await peer.channel.bindQueue(t.legacyEventsQueue, t.eventsExchange, '');
    await b.publish(t.eventsExchange, 'result', event(1));
    await waitFor(async () => (await b.queueDepth(t.legacyEventsQueue))?.messageCount === 1, { description: 'the old queue got the event' });
    expect(await b.unbindQueue(t.legacyEventsQueue, t.eventsExchange)).toEqual({ messageCount: 1, consumerCount: 0 });
    await b.publish(t.eventsExchange, 'result', event(2));
    expect(await b.queueDepth(t.legacyEventsQueue)).toEqual({ messageCount: 1, consumerCount: 0 }); // nothing new
    expect(await b.deleteQueueIfIdle(t.legacyEventsQueue)).toBe(false); // not empty
    await peer.channel.get(t.legacyEventsQueue, { noAck: true });
    const tag = (await peer.channel.consume(t.legacyEventsQueue, () => undefined)).consumerTag;
    expect(await b.deleteQueueIfIdle(t.legacyEventsQueue)).toBe(false); // consumed by someone
    await peer.channel.cancel(tag);
    expect(await b.deleteQueueIfIdle(t.legacyEventsQueue)).toBe(true);
    expect(await b.queueDepth(t.legacyEventsQueue)).toBeNull();
    expect(await b.unbindQueue(t.legacyEventsQueue, t.eventsExchange)).toBeNull();
    expect(b.connected).toBe(true); // refusals closed only scratch channels
  });
});

/** `name → [type, durable]` of this file's queues (rabbitmqctl). */
async function queueKinds(): Promise<Map<string, { type: string; durable: string }>> {
  const { stdout } = await promisify(execFile)('rabbitmqctl', ['list_queues', '-q', '--no-table-headers', 'name', 'type', 'durable'], { timeout: 30_000 });
  const kinds = new Map<string, { type: string; durable: string }>();
  for (const line of stdout.split('\n')) {
    const [name, type, durable] = line.trim().split(/\s+/);
    if (name?.startsWith(`${namespace}.`) && type !== undefined && durable !== undefined) kinds.set(name, { type, durable });
  }
  return kinds;
}

describe('@ax/bus with the nodes of a cluster (#23)', () => {
  const proxies: CuttableProxy[] = [];
  afterAll(async () => {
    for (const proxy of proxies) await proxy.close();
  });

  it('#23 R12 declares the shared queues as quorum queues, worker queues as classic', async () => {
    const bus = newBus();
    await bus.start();
    await bus.assertWorkerQueues('w-kinds');
    const kinds = await queueKinds();
    for (const queue of [topology.eventsQueue, topology.logsQueue, topology.deadQueue, topology.parkedQueue]) {
      expect(kinds.get(queue), queue).toEqual({ type: 'quorum', durable: 'true' });
    }
    expect(kinds.get(topology.workerQueue('w-kinds'))).toEqual({ type: 'classic', durable: 'true' });
    expect(kinds.get(topology.controlQueue('w-kinds'))).toEqual({ type: 'classic', durable: 'true' });
  });

  it('#23 a worker moving from one node to a cluster replaces its durable queues of the earlier run by transient ones', async () => {
    const single = newBus();
    await single.start();
    await single.assertWorkerQueues('w-moves');
    await single.publish(topology.dispatchExchange, 'w-moves', Buffer.from('left behind'));
    expect((await queueKinds()).get(topology.workerQueue('w-moves'))).toEqual({ type: 'classic', durable: 'true' });
    await single.close();

    const clustered = newBus({ url: [amqp.url, 'amqp://guest:guest@127.0.0.1:1'] });
    await clustered.start();
    await clustered.assertWorkerQueues('w-moves'); // PRECONDITION_FAILED on the old queue: replaced
    const kinds = await queueKinds();
    expect(kinds.get(topology.workerQueue('w-moves'))).toEqual({ type: 'classic', durable: 'false' });
    expect(kinds.get(topology.controlQueue('w-moves'))).toEqual({ type: 'classic', durable: 'false' });
    expect(clustered.connected).toBe(true);
    // The bus keeps working on the same connection (the refusal closed only a scratch channel).
    await clustered.publish(topology.dispatchExchange, 'w-moves', Buffer.from('new'));
    expect(await clustered.queueDepth(topology.workerQueue('w-moves'))).toEqual({ messageCount: 1, consumerCount: 0 });
  });

  it('#23 connects to the next node when the first refuses, and moves to another node when its node goes, by itself', async () => {
    const target = new URL(amqp.url);
    const port = Number(target.port || 5672);
    // Three "nodes": proxies to the one RabbitMQ; the first refuses from the start.
    for (let i = 0; i < 3; i++) proxies.push(await startTcpProxy({ host: target.hostname, port }));
    const [n0, n1, n2] = proxies as [CuttableProxy, CuttableProxy, CuttableProxy];
    await n0.cut();
    const urls = [throughProxy(amqp.url, n0), throughProxy(amqp.url, n1), throughProxy(amqp.url, n2)];
    const connectedTo: string[] = [];
    const bus = newBus({
      url: urls,
      connect: async (url, opts) => {
        const model = await connect(url, opts);
        connectedTo.push(url);
        return model;
      },
    });
    const events: string[] = [];
    bus.on('connected', () => events.push('connected'));
    bus.on('disconnected', () => events.push('disconnected'));
    await bus.start();
    expect(connectedTo).toEqual([urls[1]]);
    await bus.assertWorkerQueues('w-nodes');
    // Several URLs: the worker's queues are transient, so it can declare them on any node.
    expect((await queueKinds()).get(topology.workerQueue('w-nodes'))).toEqual({ type: 'classic', durable: 'false' });
    const got: string[] = [];
    const consumer = await bus.consume(topology.workerQueue('w-nodes'), async (m) => {
      got.push(m.body.toString());
      return 'ack';
    });
    await bus.publish(topology.dispatchExchange, 'w-nodes', Buffer.from('on node 1'));
    await waitFor(() => got.includes('on node 1'), { description: 'delivery through node 1' });

    const lostAt = performance.now();
    await n1.cut(); // node 1 goes: the bus goes on with node 2 (not back to the refusing node 0 first)
    await waitFor(() => events.includes('disconnected'), { description: 'disconnected' });
    await bus.publish(topology.dispatchExchange, 'w-nodes', Buffer.from('on node 2'));
    await waitFor(() => got.includes('on node 2'), { description: 'delivery through node 2', timeoutMs: 10_000 });
    console.log(`bus node change: consumer back on the next node ${Math.round(performance.now() - lostAt)} ms after its node went`);
    expect(connectedTo).toEqual([urls[1], urls[2]]);
    expect(events).toEqual(['connected', 'disconnected', 'connected']);

    // Node 2 goes too, node 0 is back: round-robin reaches it.
    await n0.restore();
    await n2.cut();
    await bus.publish(topology.dispatchExchange, 'w-nodes', Buffer.from('on node 0'));
    await waitFor(() => got.includes('on node 0'), { description: 'delivery through node 0', timeoutMs: 10_000 });
    expect(connectedTo).toEqual([urls[1], urls[2], urls[0]]);
    await consumer.cancel();
  });
});
