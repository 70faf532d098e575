/**
 * #44: the team's `httpAllow` reaches the worker in each dispatch item, copied by the broker
 * from the team row (never from the task); a team without one sends none (no narrowing).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertTeam } from '@ax/store';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness();
  await insertTeam(h.db.pool, { name: 'a', description: '', maxRunning: null, httpAllow: ['internal:orders.a.internal:8080'] });
  await insertTeam(h.db.pool, { name: 'b', description: '', maxRunning: null });
  await h.broker.context.teams.refresh(h.db.pool);
});

afterAll(async () => {
  await h?.close();
});

describe('#44 httpAllow in the dispatch', () => {
  it("carries the team row's httpAllow for team a's task and nothing for team b's", async () => {
    const exec = { type: 'http', url: 'http://orders.a.internal:8080/run' };
    const a = await h.task('allow_a', { team: 'a', tags: ['allow'], exec });
    const b = await h.task('allow_b', { team: 'b', tags: ['allow'], exec });
    const peer = await h.peer('w-allow', ['allow'], 4);
    await h.instance(a);
    await h.instance(b);
    const items = await peer.waitDispatches(2);
    const byTask = new Map(items.map((i) => [i.taskName, i]));
    expect(byTask.get('allow_a')?.httpAllow).toEqual(['internal:orders.a.internal:8080']);
    expect(byTask.get('allow_b')).not.toHaveProperty('httpAllow');
    expect(byTask.get('allow_b')?.team).toBe('b');
  });
});
