import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBus, type Bus } from '@ax/bus';
import { encodeMessage } from '@ax/core';
import { silentLogger } from '@ax/kit';
import { createTestAmqp, testAmqpUrl, uniqueNamespace, type TestAmqp } from '@ax/testing';
import type { BrokerContext } from './context.js';
import { takeQueuedDispatches } from './gone-dispatches.js';
import { WorkerPresence } from './worker-presence.js';

const namespace = uniqueNamespace('axgone');
let bus: Bus;
let amqp: TestAmqp;

beforeAll(async () => {
  amqp = await createTestAmqp(namespace);
  bus = createBus({ url: testAmqpUrl(), namespace, logger: silentLogger(), name: `gone-${namespace}` });
  await bus.start();
});
afterAll(async () => {
  await bus?.close();
  await amqp?.cleanup();
});

/** A dispatch message of one item, as a broker publishes it (only the execution id matters here). */
function dispatchBody(workerId: string, executionId: string): Buffer {
  const item = {
    executionId,
    instanceId: '1',
    taskId: '1',
    taskName: 't',
    runNo: 1,
    maxAttempts: 1,
    team: 'default',
    keyVersion: 1,
    bizDate: '2026-12-02',
    expectedTime: '2026-12-02T03:00:00.000Z',
    attempt: 1,
    priority: 0,
    params: {},
    exec: { type: 'shell', command: ['true'], shell: false },
    timeoutSeconds: 10,
    ackDeadline: '2026-12-02T03:00:05.000Z',
    idempotencyKey: 't:2026-12-02T03:00:00.000Z:1',
    traceId: '00000000000000000000000000000000',
  };
  return encodeMessage({ v: 1, kind: 'dispatch', workerId, items: [item] } as never);
}

describe('#23 dispatches taken back from a worker queue (basic.get: only what no consumer was given)', () => {
  it('takes what waits in the queue of a worker without a registry entry; leaves a registered worker with its consumer alone', async () => {
    await bus.assertWorkerQueues('w-left');
    await bus.assertWorkerQueues('w-here');
    const t = bus.topology;
    await bus.publish(t.dispatchExchange, t.workerRoutingKey('w-left'), dispatchBody('w-left', 'e-left'));
    await bus.publish(t.dispatchExchange, t.workerRoutingKey('w-here'), dispatchBody('w-here', 'e-here'));
    const ctx = { bus, presence: new WorkerPresence(7_500), logger: silentLogger() } as unknown as BrokerContext;
    // w-here is registered and not known to lack a consumer: its queue is not read.
    expect([...(await takeQueuedDispatches(ctx, ['w-here'], ['w-left']))]).toEqual(['e-left']);
    // taken means gone from the queue: a worker coming back under that id cannot run it too.
    expect([...(await takeQueuedDispatches(ctx, [], ['w-left']))]).toEqual([]);
    expect([...(await takeQueuedDispatches(ctx, [], ['w-here']))]).toEqual(['e-here']);
  });
});
