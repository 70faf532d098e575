/**
 * #48 the run's trace context through the dispatch (tracing off: the contexts pass through, so
 * this is what every deployment gets): an instance the scheduler fired carries its fire span's
 * `traceparent`, which the dispatch item continues and whose trace id the logs carry; one created
 * without (a manual run, a rerun, a row from before migration 0017) gets one at its first
 * dispatch, stored so every later attempt of the run stays in that trace.
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

const TRACEPARENT = /^00-([0-9a-f]{32})-[0-9a-f]{16}-01$/;

describe('#48 the trace context of a dispatch', () => {
  it('continues the stored context, and gives an instance without one a new context it stores', async () => {
    const task = await h.task('trace_dispatch', { tags: ['tr'], block: 'parallel', exec: { type: 'shell', command: ['true'] } });
    const fired = await h.instance(task, { quiet: true });
    const stored = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    await h.db.pool.query('UPDATE task_instance SET trace_parent = ? WHERE id = ?', [stored, fired]);
    const manual = await h.instance(task, { quiet: true, trigger: 'manual' });
    expect((await h.row(manual))['trace_parent']).toBeNull();

    const peer = await h.peer('w-tr', ['tr'], 4);
    const items = await peer.waitDispatches(2);
    const byId = new Map(items.map((i) => [i.instanceId, i]));
    expect(byId.get(fired)).toMatchObject({ traceparent: stored, traceId: '4bf92f3577b34da6a3ce929d0e0e4736' });

    const given = byId.get(manual);
    expect(given?.traceparent).toMatch(TRACEPARENT);
    const traceId = TRACEPARENT.exec(given?.traceparent ?? '')?.[1];
    expect(given?.traceId).toBe(traceId);
    expect((await h.row(manual))['trace_parent']).toBe(given?.traceparent);
    expect((await h.row(fired))['trace_parent']).toBe(stored);
  });
});
