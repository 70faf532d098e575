/**
 * #45 "Noisy neighbours" (DESIGN §11): a result message carrying a hostile item of team a
 * (its answer's `data` holds a `__proto__` key, or nests ~40 levels deep) beside ten results of
 * team b. The broker refuses a's item alone: b's ten instances succeed with one dispatch each
 * (nothing re-routed, nothing re-run), a's instance ends FAILED saying why, and nothing is
 * dead-lettered. The items are written as raw JSON, as an older or broken worker would send
 * them (`encodeMessage` could not produce an own `__proto__` key).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchItem } from '@ax/core';
import { insertTeam } from '@ax/store';
import type { RowDataPacket } from 'mysql2';
import { startBrokerHarness, type BrokerHarness, type ProtocolPeer } from './test-support.js';

let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness();
  await insertTeam(h.db.pool, { name: 'a', description: '', maxRunning: null });
  await insertTeam(h.db.pool, { name: 'b', description: '', maxRunning: null });
});

afterAll(async () => {
  await h?.close();
});

async function rows(sql: string, params: unknown[] = []): Promise<RowDataPacket[]> {
  const [r] = await h.db.pool.query<RowDataPacket[]>(sql, params);
  return r;
}

/** `{"k":{"k":…{"k":1}…}}` nested `levels` objects deep, as JSON text. */
function nestedJson(levels: number): string {
  return `${'{"k":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

function resultJson(item: DispatchItem, dataJson?: string): string {
  const data = dataJson === undefined ? '' : `,"data":${dataJson}`;
  return `{"executionId":"${item.executionId}","instanceId":"${item.instanceId}","outcome":"SUCCESS","exitCode":200${data},"endedAt":"${new Date().toISOString()}"}`;
}

async function sendRaw(peer: ProtocolPeer, items: string[]): Promise<void> {
  const body = `{"v":1,"kind":"result","workerId":"${peer.workerId}","items":[${items.join(',')}]}`;
  await h.peerBus.publish(h.peerBus.topology.eventsExchange, 'reply', Buffer.from(body, 'utf8'));
}

async function scenario(tag: string, hostileData: string): Promise<void> {
  const taskA = await h.task(`noisy_a_${tag}`, { team: 'a', tags: [tag], block: 'parallel' });
  const taskB = await h.task(`quiet_b_${tag}`, { team: 'b', tags: [tag], block: 'parallel' });
  const peer = (await h.peer(`w-${tag}`, [tag], 16)).heartbeat();
  const a = await h.instance(taskA, { maxAttempts: 1 });
  const bs: string[] = [];
  for (let i = 0; i < 10; i++) bs.push(await h.instance(taskB, { maxAttempts: 1 }));
  const dispatched = await peer.waitDispatches(11);
  await peer.ack(dispatched);
  const itemA = dispatched.find((d) => d.instanceId === a) as DispatchItem;
  const itemsB = dispatched.filter((d) => d.instanceId !== a);
  for (const d of dispatched) peer.running.delete(d.executionId);
  await peer.register();
  // One message: b's first five, a's hostile item, b's last five.
  await sendRaw(peer, [...itemsB.slice(0, 5).map((d) => resultJson(d, '{"rows":5}')), resultJson(itemA, hostileData), ...itemsB.slice(5).map((d) => resultJson(d))]);

  for (const b of bs) await h.waitState(b, 'SUCCESS');
  const failedA = await h.waitState(a, 'FAILED');
  expect(failedA.reason).toBe('JOB_FAILED');
  const [failedEvent] = await rows(`SELECT message FROM event_log WHERE instance_id = ? AND type = 'FAILED'`, [a]);
  expect(String(failedEvent?.message)).toMatch(/result refused by the broker/);
  const [execution] = await rows('SELECT state, error FROM task_execution WHERE execution_id = ?', [itemA.executionId]);
  expect(execution?.state).toBe('FAILED');

  // Each of b's instances was dispatched once and run once: one execution, no re-route, no re-run.
  expect(peer.dispatches.filter((d) => bs.includes(d.instanceId))).toHaveLength(10);
  const executionsB = await rows('SELECT instance_id, state FROM task_execution WHERE instance_id IN (?)', [bs]);
  expect(executionsB).toHaveLength(10);
  expect(executionsB.every((e) => e.state === 'SUCCESS')).toBe(true);
  const data = await rows('SELECT result FROM task_execution WHERE instance_id IN (?) AND result IS NOT NULL', [bs]);
  expect(data).toHaveLength(5);
  expect(await rows('SELECT id FROM dead_letter')).toHaveLength(0);
  await peer.stop();
}

describe('#45 a malformed result item is refused alone', () => {
  it('a "__proto__" key in team a\'s data: b\'s ten results apply, a\'s run fails saying why, nothing dead-lettered', async () => {
    await scenario('proto', '{"__proto__":{"polluted":true},"ok":1}');
  });

  it("a 40-level nesting in team a's data: b's ten results apply, a's run fails saying why, nothing dead-lettered", async () => {
    await scenario('deep', nestedJson(40));
  });
});
