/**
 * A live worker that drops what it is sent: it heartbeats into the registry like a worker (an
 * entry listing no execution, refreshed every `heartbeatMs`), consumes its dispatch queue and
 * acks every message without doing anything, and keeps a consumer on its control queue (what
 * tells the brokers it is present, worker-presence.ts). For the timers scenario's re-route rounds (#22):
 * since 16fd0e5 (#23) the broker re-routes a dispatch without an ACK only on proof that its
 * worker does not hold it — a registry entry written after the ACK deadline (+ the skew limit)
 * that does not list it, from a worker whose queue still has its consumer. This worker is that
 * case; a frozen one (SIGSTOP) is not any more (it is waited for until its lease runs out).
 */
import { createBus } from '../../packages/bus/dist/index.js';
import { redisKeys, silentLogger } from '../../packages/kit/dist/index.js';
import { publishRegistration, removeRegistration } from '../../packages/redis/dist/index.js';

/** Starts it; `redis` is an ioredis client, `amqpUrl`/`namespace` those of the stack. */
export async function startDroppingWorker({ namespace, amqpUrl, redis, workerId, tags, slots = 16, heartbeatMs = 500, leaseTtlMs = 15_000 }) {
  const bus = createBus({ url: amqpUrl, namespace, logger: silentLogger(), name: `bench-dropping-${workerId}` });
  await bus.start();
  await bus.assertWorkerQueues(workerId);
  let dropped = 0;
  const consumers = [
    await bus.consume(bus.topology.workerQueue(workerId), async () => {
      dropped += 1;
      return 'ack';
    }, { prefetch: 50 }),
    await bus.consume(bus.topology.controlQueue(workerId), async () => 'ack', { prefetch: 10 }),
  ];
  const keys = redisKeys(namespace);
  const startedAt = new Date().toISOString();
  const beat = () =>
    publishRegistration(redis, keys, {
      workerId, host: 'bench', tags, cores: 1, slots, running: 0, runningExecutionIds: [], avgDurationMs5m: 0,
      draining: false, version: 'bench-dropping-worker', startedAt, at: new Date().toISOString(),
    }, leaseTtlMs);
  await beat();
  const timer = setInterval(() => void beat().catch(() => undefined), heartbeatMs);
  return {
    /** Dispatch messages it received and dropped. */
    get dropped() {
      return dropped;
    },
    async stop() {
      clearInterval(timer);
      for (const c of consumers) await c.cancel();
      await removeRegistration(redis, keys, workerId);
      await bus.close();
    },
  };
}
