/**
 * #18 quotas: a team's `maxRunning` is enforced at dispatch over every broker (DESIGN §11,
 * ADMIN-API.md "Teams"): two broker engines on one database, scripted workers that hold each
 * run for a while, the database sampled for the team's DISPATCHED or RUNNING instances.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchItem } from '@ax/core';
import { insertTeam } from '@ax/store';
import { waitFor } from '@ax/testing';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import type { Broker } from './broker.js';
import { startBrokerHarness, type BrokerHarness, type ProtocolPeer } from './test-support.js';

let h: BrokerHarness;
let second: Broker;

beforeAll(async () => {
  h = await startBrokerHarness();
  second = await h.extraBroker('broker-b');
  await insertTeam(h.db.pool, { name: 'a', description: 'limited to one run', maxRunning: 1 });
  await insertTeam(h.db.pool, { name: 'b', description: 'no limit', maxRunning: null });
  // admin-api publishes <ns>:task-changed when a team changes: both brokers reload their teams.
  await h.redis.redis.publish(h.keys.channels.taskChanged, '{}');
  await waitFor(() => [h.broker, second].every((b) => b.context.teams.limited().get('a') === 1), {
    description: 'both brokers know the limits',
  });
});

afterAll(async () => {
  await h?.close();
});

/** DISPATCHED or RUNNING instances of a team's tasks, as stored now. */
async function activeOfTeam(team: string): Promise<number> {
  const [r] = await h.db.pool.query<RowDataPacket[]>(
    `SELECT COUNT(*) AS n FROM task_instance i JOIN task t ON t.id = i.task_id WHERE t.team = ? AND i.state IN ('DISPATCHED', 'RUNNING')`,
    [team],
  );
  return Number(r[0]?.n);
}

async function statesOf(ids: readonly string[]): Promise<string[]> {
  const [rows] = await h.db.pool.query<RowDataPacket[]>(`SELECT state FROM task_instance WHERE id IN (?)`, [ids]);
  return rows.map((r) => String(r.state));
}

async function eventCounts(ids: readonly string[], type: string): Promise<Map<string, number>> {
  const [rows] = await h.db.pool.query<RowDataPacket[]>(`SELECT instance_id, COUNT(*) AS n FROM event_log WHERE instance_id IN (?) AND type = ? GROUP BY instance_id`, [ids, type]);
  return new Map(rows.map((r) => [String(r.instance_id), Number(r.n)]));
}

/**
 * Plays the workers: every dispatch is ACKed at once and answered SUCCESS `holdMs` later.
 * `maxHeld` is the most runs the workers held at once (a second run of the team dispatched
 * while one is held shows here even between two database samples).
 */
function serve(peers: readonly ProtocolPeer[], holdMs: number, filter: (item: DispatchItem) => boolean = () => true) {
  const seen = new Set<string>();
  const state = { held: 0, maxHeld: 0, stopped: false };
  const pending: Array<Promise<void>> = [];
  const loop = (async () => {
    while (!state.stopped) {
      for (const peer of peers) {
        for (const item of peer.dispatches) {
          if (seen.has(item.executionId) || !filter(item)) continue;
          seen.add(item.executionId);
          state.held++;
          state.maxHeld = Math.max(state.maxHeld, state.held);
          pending.push(
            (async () => {
              await peer.ack([item]);
              await new Promise((r) => setTimeout(r, holdMs));
              state.held--;
              await peer.result([item], 'SUCCESS');
            })(),
          );
        }
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    state,
    async stop() {
      state.stopped = true;
      await loop;
      await Promise.all(pending);
    },
  };
}

describe('team maxRunning across brokers', () => {
  it('#18 quotas: a team with maxRunning: 1 never has two runs at once across 2 brokers, and all of its queued runs succeed', async () => {
    const task = await h.task('quota_a', { team: 'a', tags: ['quota-a'], block: 'parallel' });
    const peers = [await h.peer('w-quota-1', ['quota-a'], 4), await h.peer('w-quota-2', ['quota-a'], 4)];
    // The runner starts once all 6 are in: started before, on a loaded machine the first run
    // could end before the second instance was inserted, and then none ever waited (TEAM_LIMIT).
    let runner: ReturnType<typeof serve> | undefined;
    let maxActive = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxActive = Math.max(maxActive, await activeOfTeam('a'));
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push(await h.instance(task));
      runner = serve(peers, 150);
      await waitFor(async () => (await statesOf(ids)).every((s) => s === 'SUCCESS'), { description: '6 SUCCESS', timeoutMs: 30_000, intervalMs: 50 });
      sampling = false;
      await sampler;
      await runner.stop();
      expect(maxActive).toBe(1);
      expect(runner.state.maxHeld).toBe(1);
      expect(peers[0]!.dispatches.length + peers[1]!.dispatches.length).toBe(6);
      // Waiting is recorded once per instance, not once per claim that found the team full.
      const limited = await eventCounts(ids, 'TEAM_LIMIT');
      expect([...limited.values()].every((n) => n === 1)).toBe(true);
      expect(limited.size).toBeGreaterThan(0);
      expect(limited.size).toBeLessThanOrEqual(5);
      const [failed] = await h.db.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM task_execution WHERE instance_id IN (?) AND state <> 'SUCCESS'`, [ids]);
      expect(Number(failed[0]?.n)).toBe(0);
    } finally {
      sampling = false;
      await sampler;
      await runner?.stop();
      for (const p of peers) await p.stop();
    }
  });

  it("#18 quotas: another team's instances are dispatched while team a is at its limit", async () => {
    // Team a (maxRunning 1) has more waiting instances than a claim takes, all ahead of team b's
    // in the claim order (priority 9): if they were claimed, team b would never get a batch.
    const limitedTask = await h.task('quota_a_burst', { team: 'a', tags: ['quota-mix'], block: 'parallel', priority: 9 });
    const freeTask = await h.task('quota_b', { team: 'b', tags: ['quota-mix'], block: 'parallel', priority: 0 });
    const peer = await h.peer('w-quota-mix', ['quota-mix'], 16);
    const n = 40;
    const rows = Array.from({ length: n }, (_, i) => [limitedTask.id, new Date(Date.UTC(2026, 0, 1) + i * 1000)]);
    const [first] = await h.db.pool.query<ResultSetHeader>(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority)
       VALUES ${rows.map(() => "(?, 'quota_a_burst', ?, '2026-01-01', 'manual', 'PENDING', 1, 1, NOW(3), '{}', 9)").join(', ')}`,
      rows.flat(),
    );
    const limitedIds = Array.from({ length: n }, (_, i) => String(first.insertId + i));
    await h.redis.redis.publish(h.keys.channels.instancesReady, '{}');
    await peer.waitDispatches(1);
    const held = peer.dispatches[0]!;
    expect(held.taskName).toBe('quota_a_burst');
    // Team a's run is ACKed (RUNNING counts against maxRunning as DISPATCHED does): left
    // unACKed it expired after ack_deadline + grace (1.5 s) whenever team b's six took that long.
    await peer.ackApplied([held]);

    const freeIds: string[] = [];
    for (let i = 0; i < 6; i++) freeIds.push(await h.instance(freeTask));
    await waitFor(() => peer.dispatches.filter((d) => d.taskName === 'quota_b').length === 6, { description: "team b's 6 dispatches", timeoutMs: 10_000 });
    // Team a still holds one run and the rest of its instances wait.
    expect(await activeOfTeam('a')).toBe(1);
    expect(peer.dispatches.filter((d) => d.taskName === 'quota_a_burst')).toHaveLength(1);
    expect((await statesOf(limitedIds)).filter((s) => s === 'PENDING')).toHaveLength(n - 1);

    // When team a's run ends, its waiting instances go, one at a time, to the end.
    peer.autoOutcome = 'SUCCESS';
    await peer.ack(peer.dispatches.filter((d) => d.taskName === 'quota_b'));
    await peer.result(peer.dispatches.filter((d) => d.taskName === 'quota_b'), 'SUCCESS');
    await peer.result([held], 'SUCCESS');
    await waitFor(async () => (await statesOf([...limitedIds, ...freeIds])).every((s) => s === 'SUCCESS'), { description: 'all SUCCESS', timeoutMs: 30_000, intervalMs: 100 });
    const limited = await eventCounts(limitedIds, 'TEAM_LIMIT');
    expect([...limited.values()].every((c) => c === 1)).toBe(true);
    expect((await eventCounts(freeIds, 'TEAM_LIMIT')).size).toBe(0);
  });
});
