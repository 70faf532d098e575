/**
 * R24 on a real RabbitMQ: an enrollment's own user, made through the management API, can run its
 * own workers' queues and publish replies, and RabbitMQ itself refuses everything else an
 * attacker holding that login would try. Each case below is an attack from issue #44.
 */
import { connect, type Channel, type ChannelModel } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busUserOf, enrollmentLoginPassword } from '@ax/core';
import { silentLogger } from '@ax/kit';
import { createTestAmqp, deleteNamespaceAmqp, uniqueNamespace, waitFor, type TestAmqp } from '@ax/testing';
import { amqpUserOf, createBus, type Bus } from './bus.js';
import { busTopology, controlQueueArguments, workerQueueArguments } from './topology.js';
import { closeConnectionsOf, defaultManagementUrl, deleteEnrollmentBusUser, putEnrollmentBusUser, vhostOfAmqpUrl, type BusAdminOptions } from './bus-users.js';

const namespace = uniqueNamespace('axbusr');
const topology = busTopology(namespace);
const X = 'enr-xxxxxxxxxxx1';
const Y = 'enr-yyyyyyyyyyy1';
let amqp: TestAmqp;
let admin: BusAdminOptions;
const open: ChannelModel[] = [];
/** Namespaces of buses a test starts besides this file's, removed in afterAll even when the test fails. */
const otherNamespaces: string[] = [];
const buses: Bus[] = [];

function loginUrl(enrollmentId: string): string {
  const url = new URL(amqp.url);
  url.username = busUserOf(namespace, enrollmentId);
  url.password = enrollmentLoginPassword('test-secret', 'amqp', namespace, enrollmentId);
  return url.toString();
}

async function connectAs(enrollmentId: string): Promise<ChannelModel> {
  const c = await connect(loginUrl(enrollmentId));
  c.on('error', () => undefined);
  open.push(c);
  return c;
}

/** Runs one operation on a fresh channel; resolves to the error RabbitMQ closed it with, or null. */
async function refusal(conn: ChannelModel, op: (ch: Channel) => Promise<unknown>): Promise<string | null> {
  const ch = await conn.createConfirmChannel();
  const closed = new Promise<string>((resolve) => ch.on('error', (err: Error) => resolve(err.message)));
  ch.on('close', () => undefined);
  try {
    await Promise.race([op(ch).then(() => (ch as unknown as { waitForConfirms(): Promise<void> }).waitForConfirms()), closed]);
  } catch (err) {
    return (err as Error).message;
  }
  const early = await Promise.race([closed, new Promise<null>((r) => setTimeout(() => r(null), 300))]);
  if (early === null) await ch.close().catch(() => undefined);
  return early;
}

beforeAll(async () => {
  amqp = await createTestAmqp(namespace);
  admin = { managementUrl: process.env['AX_AMQP_MANAGEMENT_URL'] ?? defaultManagementUrl(amqp.url), vhost: vhostOfAmqpUrl(amqp.url) };
  for (const id of [X, Y]) await putEnrollmentBusUser(admin, namespace, id, enrollmentLoginPassword('test-secret', 'amqp', namespace, id));
  // the exchanges the services declare
  await amqp.channel.assertExchange(topology.dispatchExchange, 'direct', { durable: true });
  await amqp.channel.assertExchange(topology.eventsExchange, 'fanout', { durable: true });
  await amqp.channel.assertExchange(topology.logsExchange, 'fanout', { durable: true });
  await amqp.channel.assertExchange(topology.dlx, 'fanout', { durable: true });
  await amqp.channel.assertQueue(topology.eventsQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await amqp.channel.bindQueue(topology.eventsQueue, topology.eventsExchange, '');
});

afterAll(async () => {
  for (const b of buses) await b.close();
  for (const c of open) await c.close().catch(() => undefined);
  for (const id of [X, Y]) await deleteEnrollmentBusUser(admin, namespace, id).catch(() => undefined);
  for (const ns of otherNamespaces) await deleteNamespaceAmqp(ns);
  await amqp?.cleanup();
});

describe('an enrollment RabbitMQ user (R24)', () => {
  it('declares and consumes its own workers queues and publishes replies under its validated user_id', async () => {
    const c = await connectAs(X);
    const workerId = `${X}.host-1`;
    expect(
      await refusal(c, async (ch) => {
        await ch.assertQueue(topology.workerQueue(workerId), { durable: true, arguments: workerQueueArguments(topology, 60_000) });
        await ch.assertQueue(topology.controlQueue(workerId), { durable: true, arguments: controlQueueArguments(topology, 60_000) });
        await ch.consume(topology.workerQueue(workerId), () => undefined);
        ch.publish(topology.eventsExchange, '', Buffer.from('{}'), { userId: busUserOf(namespace, X) });
        ch.publish(topology.logsExchange, '', Buffer.from('{}'), { userId: busUserOf(namespace, X) });
      }),
    ).toBeNull();
    // what a broker consumes carries the validated user
    const got = await waitFor(async () => {
      const m = await amqp.channel.get(topology.eventsQueue, { noAck: true });
      return m === false ? undefined : m;
    }, { description: 'the reply in the events queue', timeoutMs: 5_000 });
    expect(got.properties.userId).toBe(busUserOf(namespace, X));
  });

  it('refuses binding a queue to the dispatch or events exchange', async () => {
    const c = await connectAs(X);
    const own = topology.workerQueue(`${X}.spy`);
    const dispatchBind = await refusal(c, async (ch) => {
      await ch.assertQueue(own, { arguments: workerQueueArguments(topology, 60_000) });
      await ch.bindQueue(own, topology.dispatchExchange, `${Y}.host-1`);
    });
    expect(dispatchBind).toMatch(/ACCESS_REFUSED/);
    const eventsBind = await refusal(c, (ch) => ch.bindQueue(own, topology.eventsExchange, ''));
    expect(eventsBind).toMatch(/ACCESS_REFUSED/);
    const logsBind = await refusal(c, (ch) => ch.bindQueue(own, topology.logsExchange, ''));
    expect(logsBind).toMatch(/ACCESS_REFUSED/);
  });

  it("refuses consuming, declaring or purging another enrollment's queue, and the shared queues", async () => {
    const y = await connectAs(Y);
    expect(await refusal(y, (ch) => ch.assertQueue(topology.workerQueue(`${Y}.host-1`), { arguments: workerQueueArguments(topology, 60_000) }))).toBeNull();
    const x = await connectAs(X);
    expect(await refusal(x, (ch) => ch.consume(topology.workerQueue(`${Y}.host-1`), () => undefined))).toMatch(/ACCESS_REFUSED/);
    expect(await refusal(x, (ch) => ch.get(topology.workerQueue(`${Y}.host-1`)))).toMatch(/ACCESS_REFUSED/);
    expect(await refusal(x, (ch) => ch.purgeQueue(topology.workerQueue(`${Y}.host-1`)))).toMatch(/ACCESS_REFUSED/);
    expect(await refusal(x, (ch) => ch.assertQueue(topology.workerQueue(`${Y}.host-2`)))).toMatch(/ACCESS_REFUSED/);
    expect(await refusal(x, (ch) => ch.consume(topology.eventsQueue, () => undefined))).toMatch(/ACCESS_REFUSED/);
  });

  it('refuses publishing a dispatch, on the dispatch exchange or by queue name, and a forged user_id', async () => {
    const c = await connectAs(X);
    const body = Buffer.from(JSON.stringify({ v: 1, kind: 'dispatch', items: [] }));
    expect(await refusal(c, async (ch) => ch.publish(topology.dispatchExchange, `${Y}.host-1`, body))).toMatch(/ACCESS_REFUSED/);
    expect(await refusal(c, async (ch) => ch.publish('', topology.workerQueue(`${Y}.host-1`), body))).toMatch(/ACCESS_REFUSED/);
    expect(await refusal(c, async (ch) => ch.publish(topology.eventsExchange, '', Buffer.from('{}'), { userId: busUserOf(namespace, Y) }))).toMatch(
      /PRECONDITION_FAILED/,
    );
  });

  it('stops working at once when deleted: its connections close and it cannot log in again', async () => {
    const Z = 'enr-zzzzzzzzzzz1';
    await putEnrollmentBusUser(admin, namespace, Z, enrollmentLoginPassword('test-secret', 'amqp', namespace, Z));
    const c = await connectAs(Z);
    const closed = new Promise<void>((resolve) => c.on('close', () => resolve()));
    await deleteEnrollmentBusUser(admin, namespace, Z);
    await closed;
    await expect(connect(loginUrl(Z))).rejects.toThrow(/ACCESS_REFUSED|403/);
    expect(await closeConnectionsOf(admin, busUserOf(namespace, Z))).toBe(0);
  });

  it("a consumer that requeues an enrollment's reply still sees the enrollment as its sender, never a sender the enrollment claims", async () => {
    // a bus of its own namespace (this file declares the shared queues with other arguments); it consumes a queue bound to this one's events
    const consumerNamespace = uniqueNamespace('axbusq');
    otherNamespaces.push(consumerNamespace);
    const bus = createBus({ url: amqp.url, namespace: consumerNamespace, logger: silentLogger(), name: `requeue-${namespace}`, userId: amqpUserOf(amqp.url) });
    buses.push(bus);
    await bus.start();
    const queue = `${namespace}.sender-relay`;
    await amqp.channel.assertQueue(queue, { durable: false });
    await amqp.channel.bindQueue(queue, topology.eventsExchange, '');
    const seen: Array<string | undefined> = [];
    const consumer = await bus.consume(queue, async (m) => {
      seen.push(m.userId);
      return seen.length % 2 === 1 ? 'requeue' : 'ack';
    });
    const c = await connectAs(X);
    expect(
      await refusal(c, async (ch) => {
        ch.publish(topology.eventsExchange, '', Buffer.from('{}'), { userId: busUserOf(namespace, X) });
        // the sender header names Y: not believed, it is X's own message
        ch.publish(topology.eventsExchange, '', Buffer.from('{}'), { userId: busUserOf(namespace, X), headers: { 'x-ax-sender': busUserOf(namespace, Y) } });
      }),
    ).toBeNull();
    await waitFor(() => seen.length === 4, { description: 'both messages delivered, requeued and delivered again' });
    expect(seen).toEqual(Array(4).fill(busUserOf(namespace, X)));
    await consumer.cancel();
    await amqp.channel.deleteQueue(queue);
    await bus.close();
  });

  it('a bus logged in as an enrollment (no shared topology declared) runs an enrolled worker: its queues unbound, dispatches by queue name, replies under its user', async () => {
    const workerId = `${X}.bus-host`;
    const bus = createBus({ url: loginUrl(X), namespace, logger: silentLogger(), name: `enrolled-${namespace}`, userId: busUserOf(namespace, X), login: 'enrollment' });
    buses.push(bus);
    await bus.start();
    await bus.assertWorkerQueues(workerId);
    const got: string[] = [];
    const consumer = await bus.consume(topology.workerQueue(workerId), async (m) => {
      got.push(m.body.toString());
      return 'ack';
    });
    // what a broker does (guest): publish by queue name on the default exchange
    amqp.channel.publish('', topology.workerQueue(workerId), Buffer.from('dispatch'), { mandatory: true });
    await waitFor(() => got.length === 1, { description: 'the dispatch delivered' });
    while ((await amqp.channel.get(topology.eventsQueue, { noAck: true })) !== false);
    await bus.publish(topology.eventsExchange, '', Buffer.from('{"reply":1}'));
    const reply = await waitFor(async () => {
      const m = await amqp.channel.get(topology.eventsQueue, { noAck: true });
      return m === false ? undefined : m;
    }, { description: 'the reply in the events queue', timeoutMs: 5_000 });
    expect(reply.properties.userId).toBe(busUserOf(namespace, X));
    expect(got).toEqual(['dispatch']);
    await consumer.cancel();
    await bus.close();
  });
});
