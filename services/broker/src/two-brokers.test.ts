import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@ax/testing';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;

beforeAll(async () => {
  h = await startBrokerHarness({}, {});
  await h.extraBroker('broker-b');
});

afterAll(async () => {
  await h?.close();
});

async function activeOf(task: string): Promise<number> {
  const [r] = await h.db.pool.query<RowDataPacket[]>(
    `SELECT COUNT(*) AS n FROM task_instance WHERE task_name = ? AND state IN ('DISPATCHED', 'RUNNING')`,
    [task],
  );
  return Number(r[0]?.n);
}

describe('two brokers on one database', () => {
  it('R4 two brokers never run two instances of a serial task at once', async () => {
    const task = await h.task('two_serial', { tags: ['two-serial'], block: 'serial' });
    const peer = await h.peer('w-two-serial', ['two-serial'], 16);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await h.instance(task));
    let maxActive = 0;
    for (let round = 0; round < 6; round++) {
      await peer.waitDispatches(round + 1);
      for (let k = 0; k < 5; k++) {
        maxActive = Math.max(maxActive, await activeOf('two_serial'));
        await new Promise((r) => setTimeout(r, 40));
      }
      const item = peer.dispatches[round]!;
      await peer.ack([item]);
      await peer.result([item], 'SUCCESS');
      await h.waitState(item.instanceId, 'SUCCESS');
    }
    expect(maxActive).toBe(1);
    expect(peer.dispatches).toHaveLength(6);
    for (const id of ids) expect((await h.row(id)).state).toBe('SUCCESS');
  });

  it('R9/R16 two brokers and two workers run 300 instances exactly once', async () => {
    const task = await h.task('two_parallel', { tags: ['two-par'], block: 'parallel' });
    const a = await h.peer('w-two-a', ['two-par'], 8);
    const b = await h.peer('w-two-b', ['two-par'], 8);
    a.autoOutcome = 'SUCCESS';
    b.autoOutcome = 'SUCCESS';
    const n = 300;
    const rows = Array.from({ length: n }, (_, i) => [task.id, 'two_parallel', new Date(Date.UTC(2026, 0, 1) + i), '2026-01-01']);
    await h.db.pool.query<ResultSetHeader>(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority)
       VALUES ${rows.map(() => "(?, ?, ?, ?, 'manual', 'PENDING', 1, 1, NOW(3), '{}', 5)").join(', ')}`,
      rows.flat(),
    );
    const started = performance.now();
    await h.redis.redis.publish(h.keys.channels.instancesReady, '{}');
    await waitFor(async () => {
      const [r] = await h.db.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM task_instance WHERE task_name = 'two_parallel' AND state = 'SUCCESS'`);
      return Number(r[0]?.n) === n;
    }, { description: `${n} SUCCESS`, timeoutMs: 60_000, intervalMs: 200 });
    const ms = Math.round(performance.now() - started);
    const [execs] = await h.db.pool.query<RowDataPacket[]>(
      `SELECT e.instance_id, COUNT(*) AS n FROM task_execution e JOIN task_instance i ON i.id = e.instance_id WHERE i.task_name = 'two_parallel' GROUP BY e.instance_id`,
    );
    console.log(`two brokers: ${n} instances in ${ms} ms (${Math.round((n / ms) * 1000)}/s) with scripted workers of 8 slots each; a ${a.dispatches.length}, b ${b.dispatches.length}`);
    expect(execs).toHaveLength(n);
    expect(execs.every((r) => Number(r.n) === 1)).toBe(true);
    expect(a.dispatches.length + b.dispatches.length).toBe(n);
  });
});
