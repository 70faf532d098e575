import { afterAll, describe, expect, it } from 'vitest';
import { createTestAmqp, listAmqpNames, namesInNamespace, type TestAmqp } from './amqp.js';
import { uniqueNamespace } from './namespace.js';

const sorted = (names: { queues: readonly string[]; exchanges: readonly string[] }) => ({
  queues: [...names.queues].sort(),
  exchanges: [...names.exchanges].sort(),
});

describe('createTestAmqp', () => {
  const opened: TestAmqp[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((a) => a.cleanup()));
  });

  // rabbitmqctl takes 1-2 s per listing; this test lists three times.
  it('cleanup deletes the queues and exchanges of its namespace and nothing else', async () => {
    const ns = uniqueNamespace();
    const otherNs = `${ns}_other`; // starts with the same characters: must survive
    const t = await createTestAmqp(ns);
    opened.push(t);
    const other = await createTestAmqp(otherNs);
    opened.push(other);

    const ch = t.channel;
    await ch.assertExchange(`${ns}.dispatch`, 'direct', { durable: true });
    await ch.assertExchange(`${ns}.events`, 'topic', { durable: true });
    await ch.assertQueue(`${ns}.worker.w1`, { durable: true, arguments: { 'x-max-priority': 10 } });
    await ch.assertQueue(`${ns}.dead`, { durable: true });
    await ch.bindQueue(`${ns}.worker.w1`, `${ns}.dispatch`, 'w1');
    await ch.assertQueue(`${ns}.exclusive`, { exclusive: true });
    await other.channel.assertExchange(`${otherNs}.dispatch`, 'direct', { durable: true });
    await other.channel.assertQueue(`${otherNs}.q`, { durable: true });
    await other.channel.assertQueue(ns, { exclusive: true }); // the bare name is not `<ns>.*`; goes with its connection

    const deleted = await t.cleanup();
    // The exclusive queue went with the closed connection, before the listing.
    expect(sorted(deleted)).toEqual({
      queues: [`${ns}.dead`, `${ns}.worker.w1`],
      exchanges: [`${ns}.dispatch`, `${ns}.events`],
    });
    expect(await t.cleanup()).toBe(deleted); // idempotent

    const after = await listAmqpNames(t.url);
    expect(namesInNamespace(after, ns)).toEqual({ queues: [], exchanges: [] });
    expect(sorted(namesInNamespace(after, otherNs))).toEqual({ queues: [`${otherNs}.q`], exchanges: [`${otherNs}.dispatch`] });
    expect(after.queues).toContain(ns);
    expect(after.exchanges).toContain('amq.direct');

    expect(sorted(await other.cleanup())).toEqual({ queues: [`${otherNs}.q`], exchanges: [`${otherNs}.dispatch`] });
  });
});
