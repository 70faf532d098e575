/**
 * `block: {"queue": N}` at claim (R4, issue #22) on real MariaDB, Redis and RabbitMQ with the
 * broker engine: queued fires run one after another in slot order — never two at once, even
 * with free slots on the worker — and a retry of an earlier slot runs before the later slots.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;
beforeAll(async () => {
  h = await startBrokerHarness();
});
afterAll(async () => {
  await h?.close();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('block {"queue": N} at dispatch', () => {
  it('runs 4 queued fires one at a time in slot order; a failed earlier slot retries before the later ones', async () => {
    const task = await h.task('queue_in_order', { tags: ['queue'], block: { queue: 5 }, retry: { max: 1, backoffSeconds: 0.5, jitterSeconds: 0 } });
    const base = Date.now() - 60_000;
    // Inserted newest first, so neither id nor insertion order gives the slot order.
    const ids: string[] = [];
    for (const k of [3, 2, 1, 0]) ids[k] = await h.instance(task, { expectedTime: new Date(base + k * 1_000) });
    const peer = await h.peer('w-queue', ['queue'], 8);

    const [first] = await peer.waitDispatches(1);
    expect(first?.instanceId).toBe(ids[0]);
    await sleep(500); // several dispatch polls with 7 free slots: nothing else of the task starts
    expect(peer.dispatches).toHaveLength(1);
    await peer.ack([first!]);
    await peer.result([first!], 'FAILED', { error: 'boom' });
    // Slot 0 waits 0.5 s for its retry; slot 1 must not overtake it.
    const [, retry] = await peer.waitDispatches(2);
    expect(retry).toMatchObject({ instanceId: ids[0], attempt: 2 });
    await peer.ack([retry!]);
    await peer.result([retry!], 'SUCCESS');
    for (let k = 1; k < 4; k++) {
      const item = (await peer.waitDispatches(k + 2))[k + 1];
      expect(item?.instanceId).toBe(ids[k]);
      await sleep(150);
      expect(peer.dispatches).toHaveLength(k + 2); // still one at a time
      await peer.ack([item!]);
      await peer.result([item!], 'SUCCESS');
    }
    for (const id of ids) await h.waitState(id, 'SUCCESS');
  }, 60_000);
});
