/**
 * Queue administration on the bus's connection: the base topology asserted after every
 * connect, a worker's two queues declared (and re-declared after a durability change), and the
 * reads and small changes made on a scratch channel (depth, consumers, basic.get, unbind,
 * delete-if-idle). The connection itself stays in bus.ts.
 */
import type { Channel, ChannelModel } from 'amqplib';
import { enrollmentOfWorkerId } from '@ax/core';
import { toError, type Logger } from '@ax/kit';
import type { BusLogin } from './bus-types.js';
import { controlQueueArguments, deadQueueArguments, eventsQueueArguments, logsQueueArguments, workerQueueArguments, type BusTopology } from './topology.js';

/** Runs `fn` on a channel of its own, closed after; null without a connection or when the server refused. */
export type ScratchChannel = <T>(fn: (channel: Channel) => Promise<T>) => Promise<T | null>;

/** Asserts the exchanges and queues every service uses (passive checks only for an enrollment login). */
export async function assertBase(ch: Channel, t: BusTopology, login: BusLogin | undefined): Promise<void> {
  if (login === 'enrollment') {
    // Declared by the services; passive checks need no permission. A missing one (no broker
    // has run yet) fails this connect, which is retried with the backoff.
    for (const exchange of [t.eventsExchange, t.logsExchange, t.dlx]) await ch.checkExchange(exchange);
    return;
  }
  await ch.assertExchange(t.dlx, 'fanout', { durable: true });
  await ch.assertQueue(t.deadQueue, { durable: true, arguments: deadQueueArguments() });
  await ch.bindQueue(t.deadQueue, t.dlx, '');
  await ch.assertQueue(t.parkedQueue, { durable: true, arguments: deadQueueArguments() });
  await ch.assertExchange(t.dispatchExchange, 'direct', { durable: true });
  await ch.assertExchange(t.eventsExchange, 'fanout', { durable: true });
  await ch.assertQueue(t.eventsQueue, { durable: true, arguments: eventsQueueArguments(t) });
  await ch.bindQueue(t.eventsQueue, t.eventsExchange, '');
  await ch.assertExchange(t.logsExchange, 'fanout', { durable: true });
  await ch.assertQueue(t.logsQueue, { durable: true, arguments: logsQueueArguments(t) });
  await ch.bindQueue(t.logsQueue, t.logsExchange, '');
}

/** How a bus declares worker queues. */
export interface WorkerQueueSettings {
  readonly topology: BusTopology;
  readonly expiresMs: number;
  readonly durable: boolean;
  readonly login: BusLogin | undefined;
  readonly logger: Logger;
}

/**
 * Declares and binds a worker's two queues on a channel of their own. The queues of an enrolled
 * worker (`<enrollment id>.<local id>`) are not bound: brokers publish to them by name on the
 * default exchange, and its RabbitMQ user may not bind to `<ns>.dispatch` (R24). A queue left by this
 * worker with the other durability (it moved from one URL to several, or back) makes RabbitMQ
 * refuse the declaration (PRECONDITION_FAILED, which closes the channel): that queue is the
 * worker's own, so it is deleted and declared again; dispatches still in it are re-routed at
 * their ACK deadline (R8).
 */
export async function assertWorker(model: ChannelModel, workerId: string, s: WorkerQueueSettings): Promise<void> {
  const t = s.topology;
  const { durable } = s;
  const enrolled = enrollmentOfWorkerId(workerId) !== null;
  const queues = [
    { queue: t.workerQueue(workerId), key: t.workerRoutingKey(workerId), arguments: workerQueueArguments(t, s.expiresMs) },
    { queue: t.controlQueue(workerId), key: t.controlRoutingKey(workerId), arguments: controlQueueArguments(t, s.expiresMs) },
  ];
  for (const q of queues) {
    const declare = async (): Promise<void> => {
      const ch = await model.createChannel();
      ch.on('error', () => undefined); // a refusal closes the channel: answered by the rejection below
      try {
        await ch.assertQueue(q.queue, { durable, arguments: q.arguments });
        // An enrollment's login cannot bind (R24): its queues get dispatches by queue name.
        if (!enrolled && s.login !== 'enrollment') await ch.bindQueue(q.queue, t.dispatchExchange, q.key);
      } finally {
        await ch.close().catch(() => undefined);
      }
    };
    try {
      await declare();
    } catch (thrown) {
      if ((thrown as { code?: unknown }).code !== 406) throw thrown;
      s.logger.warn({ err: toError(thrown), queue: q.queue, durable }, 'worker queue declared otherwise by an earlier run; deleting and declaring it again');
      const ch = await model.createChannel();
      ch.on('error', () => undefined);
      try {
        await ch.deleteQueue(q.queue);
      } finally {
        await ch.close().catch(() => undefined);
      }
      await declare();
    }
  }
}

/**
 * Runs `fn` on a channel of its own, closed after; null when there is no connection or the
 * server refused (a missing queue, a queue in use: the server closes the channel for that).
 */
export async function onScratchChannel<T>(model: ChannelModel | undefined, fn: (channel: Channel) => Promise<T>): Promise<T | null> {
  if (model === undefined) return null;
  const channel = await model.createChannel();
  channel.on('error', () => undefined); // a refusal closes the channel: answered below
  try {
    return await fn(channel);
  } catch (_refused) {
    return null;
  } finally {
    await channel.close().catch(() => undefined);
  }
}

export function queueDepth(scratch: ScratchChannel, queue: string): Promise<{ messageCount: number; consumerCount: number } | null> {
  return scratch(async (channel) => {
    const reply = await channel.checkQueue(queue);
    return { messageCount: reply.messageCount, consumerCount: reply.consumerCount };
  });
}

export async function consumerCounts(scratch: ScratchChannel, connected: () => boolean, queues: readonly string[]): Promise<Map<string, number | null>> {
  const counts = new Map<string, number | null>();
  let rest = [...queues];
  // A missing queue makes the server close the channel: go on with the rest on a new one.
  while (rest.length > 0) {
    const first = rest.length;
    await scratch(async (channel) => {
      while (rest.length > 0) {
        const queue = rest[0] as string;
        counts.set(queue, null);
        rest = rest.slice(1);
        counts.set(queue, (await channel.checkQueue(queue)).consumerCount);
      }
    });
    if (!connected() || rest.length === first) break;
  }
  for (const queue of rest) counts.set(queue, null);
  return counts;
}

export function takeMessages(scratch: ScratchChannel, queue: string, max: number): Promise<Buffer[] | null> {
  return scratch(async (channel) => {
    const bodies: Buffer[] = [];
    while (bodies.length < max) {
      const message = await channel.get(queue, { noAck: true });
      if (message === false) break;
      bodies.push(message.content);
    }
    return bodies;
  });
}

export function unbindQueue(scratch: ScratchChannel, queue: string, exchange: string): Promise<{ messageCount: number; consumerCount: number } | null> {
  return scratch(async (channel) => {
    const reply = await channel.checkQueue(queue);
    await channel.unbindQueue(queue, exchange, '');
    return { messageCount: reply.messageCount, consumerCount: reply.consumerCount };
  });
}

export async function deleteQueueIfIdle(scratch: ScratchChannel, queue: string): Promise<boolean> {
  const deleted = await scratch(async (channel) => {
    await channel.deleteQueue(queue, { ifEmpty: true, ifUnused: true });
    return true;
  });
  return deleted === true;
}
