/**
 * A bus logged in as a worker enrollment's own RabbitMQ user (`login: 'enrollment'`, R24) does
 * what a worker needs with only that user's permissions: connects without declaring the shared
 * topology, declares its queues without a binding to `<ns>.dispatch`, receives what a broker
 * sends by queue name, stamps `user_id` on every publish, and bounds requeues without writing to
 * the default exchange.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busUserOf, enrollmentLoginPassword } from '@ax/core';
import { silentLogger } from '@ax/kit';
import { createTestAmqp, uniqueNamespace, waitFor, type TestAmqp } from '@ax/testing';
import { defaultManagementUrl, deleteEnrollmentBusUser, putEnrollmentBusUser, vhostOfAmqpUrl, type BusAdminOptions } from './bus-users.js';
import { amqpUserOf, busTopology, createBus, type Bus, type BusMessage } from './index.js';

const namespace = uniqueNamespace('axbusl');
const topology = busTopology(namespace);
const E = 'enr-lllllllllll1';
const workerId = `${E}.host-1`;
let amqp: TestAmqp;
let admin: BusAdminOptions;
const buses: Bus[] = [];

function enrollmentUrl(): string {
  const url = new URL(amqp.url);
  url.username = busUserOf(namespace, E);
  url.password = enrollmentLoginPassword('test-secret', 'amqp', namespace, E);
  return url.toString();
}

function newBus(url: string, login: 'service' | 'enrollment'): Bus {
  const bus = createBus({ url, namespace, logger: silentLogger(), name: `test-${namespace}-${login}`, reconnectInitialDelayMs: 50, userId: amqpUserOf(url), login, maxRequeues: 2 });
  buses.push(bus);
  return bus;
}

async function managementJson(path: string): Promise<unknown> {
  const base = new URL(admin.managementUrl);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`).toString('base64')}`;
  const response = await fetch(`${base.protocol}//${base.host}/api${path}`, { headers: { authorization: auth } });
  expect(response.status).toBe(200);
  return response.json();
}

beforeAll(async () => {
  amqp = await createTestAmqp(namespace);
  admin = { managementUrl: process.env['AX_AMQP_MANAGEMENT_URL'] ?? defaultManagementUrl(amqp.url), vhost: vhostOfAmqpUrl(amqp.url) };
  await putEnrollmentBusUser(admin, namespace, E, enrollmentLoginPassword('test-secret', 'amqp', namespace, E));
});

afterAll(async () => {
  for (const bus of buses) await bus.close();
  await deleteEnrollmentBusUser(admin, namespace, E).catch(() => undefined);
  await amqp?.cleanup();
});

describe("@ax/bus with an enrollment's login (R24)", () => {
  it('works its own queues by name, unbound, and every publish carries its validated user_id', async () => {
    // A service declares the shared topology first (the enrollment's login cannot).
    const service = newBus(amqp.url, 'service');
    await service.start();
    const bus = newBus(enrollmentUrl(), 'enrollment');
    await bus.start();
    await bus.assertWorkerQueues(workerId);
    const got: BusMessage[] = [];
    await bus.consume(topology.workerQueue(workerId), (m) => {
      got.push(m);
      return Promise.resolve('ack');
    });
    // Nothing binds it to the dispatch exchange: only the default exchange's implicit binding.
    const bindings = (await managementJson(`/queues/${encodeURIComponent(admin.vhost)}/${encodeURIComponent(topology.workerQueue(workerId))}/bindings`)) as Array<{ source: string }>;
    expect(bindings.map((b) => b.source)).toEqual(['']);
    // A broker sends by queue name on the default exchange.
    await service.publish('', topology.workerQueue(workerId), Buffer.from('dispatch-1'), { mandatory: true });
    await waitFor(() => got.length === 1, { description: 'the dispatch delivered' });
    expect(got[0]?.body.toString()).toBe('dispatch-1');

    const events = `${namespace}.test-events`;
    await amqp.channel.assertQueue(events, { durable: false });
    await amqp.channel.bindQueue(events, topology.eventsExchange, '');
    await bus.publish(topology.eventsExchange, 'ack', Buffer.from('{"reply":1}'));
    const reply = await waitFor(async () => {
      const m = await amqp.channel.get(events, { noAck: true });
      return m === false ? undefined : m;
    }, { description: 'the reply' });
    expect(reply.properties.userId).toBe(busUserOf(namespace, E));
    // The service bus stamps its own login too.
    await service.publish(topology.eventsExchange, 'x', Buffer.from('{}'));
    const fromService = await waitFor(async () => {
      const m = await amqp.channel.get(events, { noAck: true });
      return m === false ? undefined : m;
    }, { description: 'the service publish' });
    expect(fromService.properties.userId).toBe(amqpUserOf(amqp.url));
  });

  it("a 'requeue' goes back to the queue and, past maxRequeues, to the dead-letter exchange", async () => {
    const bus = newBus(enrollmentUrl(), 'enrollment');
    await bus.start();
    const id = `${E}.host-2`;
    await bus.assertWorkerQueues(id);
    let deliveries = 0;
    await bus.consume(topology.workerQueue(id), () => {
      deliveries += 1;
      return Promise.resolve('requeue');
    });
    const service = newBus(amqp.url, 'service');
    await service.start();
    await service.publish('', topology.workerQueue(id), Buffer.from('poison'), { messageId: 'poison-1' });
    const dead = await waitFor(async () => {
      const m = await amqp.channel.get(topology.deadQueue, { noAck: true });
      return m === false ? undefined : m;
    }, { description: 'the dead letter' });
    expect(dead.content.toString()).toBe('poison');
    expect(String(dead.properties.headers?.['x-ax-dead-reason'])).toMatch(/requeued 2 times/);
    expect(dead.properties.userId).toBe(busUserOf(namespace, E));
    expect(deliveries).toBe(3);
  });
});
