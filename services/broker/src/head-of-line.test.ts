/**
 * #45 "Noisy neighbours", DESIGN R23: no instance that can start waits behind instances that
 * cannot. One 8-slot scripted worker; ahead of one instance of team `other` in the claim order
 * (a higher priority) sits a flood of one team's instances that cannot start: a rerun batch at
 * its concurrency, a tag no worker has, serial tasks whose runs overrun. The test drives the
 * claim rounds itself (the broker's poll and wake-ups are off), so "within one claim round" is
 * counted, not timed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freeSlots } from '@ax/core';
import { insertTeam } from '@ax/store';
import { waitFor } from '@ax/testing';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { dispatchOnce, type DispatchOutcome } from './dispatch.js';
import { startBrokerHarness, type BrokerHarness, type ProtocolPeer } from './test-support.js';

let h: BrokerHarness;
let peer: ProtocolPeer;

beforeAll(async () => {
  // No poll within a test; every round is the test's own dispatchOnce.
  h = await startBrokerHarness({ dispatchPollMs: 600_000 });
  (h.broker.context as { wakeDispatch: () => void }).wakeDispatch = () => undefined;
  await insertTeam(h.db.pool, { name: 'other', description: 'the neighbour', maxRunning: null });
  await h.redis.redis.publish(h.keys.channels.taskChanged, '{}');
  peer = await h.peer('w-hol', [], 8);
});

afterAll(async () => {
  await h?.close();
});

beforeEach(async () => {
  // Each case starts from an empty table and a worker with every slot free.
  await h.db.pool.query(`DELETE FROM task_instance`);
  await h.broker.context.reservations.release('w-hol', peer.dispatches.map((d) => d.executionId));
  peer.dispatches.length = 0;
});

/** Inserts without waking the broker (its instances are quiet), so no round runs meanwhile. */
async function seed(insert: () => Promise<void>): Promise<void> {
  await insert();
}

/** One claim round of the broker. */
async function round(): Promise<DispatchOutcome> {
  return dispatchOnce(h.broker.context);
}

async function stateOf(id: string): Promise<string> {
  const [rows] = await h.db.pool.query<RowDataPacket[]>('SELECT state FROM task_instance WHERE id = ?', [id]);
  return String(rows[0]?.state);
}

async function lone(): Promise<string> {
  const task = await h.task(`lone_${Date.now()}`, { team: 'other', block: 'parallel', priority: 1 });
  return h.instance(task, { quiet: true });
}

describe('#45 R23: held instances never fill a claim', () => {
  it('R23: a rerun batch at concurrency 1 with 30 instances ahead does not keep another team\'s instance out of the first claim round', async () => {
    let other = '';
    await seed(async () => {
      const task = await h.task('batch_flood', { block: 'parallel', priority: 9 });
      const [batch] = await h.db.pool.query<ResultSetHeader>(
        `INSERT INTO rerun_batch (mode, reason, actor, concurrency, request) VALUES ('backfill', 'test', 'tester', 1, '{}')`,
      );
      for (let i = 0; i < 30; i++) await h.instance(task, { trigger: 'rerun', rerunBatchId: batch.insertId, quiet: true });
      other = await lone();
    });
    const first = await round();
    expect(first.claimed).toBeGreaterThan(0);
    expect(await stateOf(other)).toBe('DISPATCHED');
    // The batch ran one at a time (R20), and a later round locks none of its held rows.
    expect(peer.dispatches.filter((d) => d.taskName === 'batch_flood')).toHaveLength(1);
    const second = await round();
    expect(second.claimed).toBe(0);
  });

  it('R23: 25 instances tagged with a tag no worker has do not keep another team\'s instance out of the first claim round', async () => {
    let other = '';
    const gpu: string[] = [];
    await seed(async () => {
      const task = await h.task('gpu_flood', { block: 'parallel', priority: 9, tags: ['gpu'] });
      for (let i = 0; i < 25; i++) gpu.push(await h.instance(task, { quiet: true }));
      other = await lone();
    });
    const first = await round();
    expect(first.claimed).toBeGreaterThan(0);
    expect(await stateOf(other)).toBe('DISPATCHED');
    // R11 still holds: they wait PENDING, with one NO_WORKER event each once a round looks at them.
    for (const id of gpu) expect(await stateOf(id)).toBe('PENDING');
  });

  it('R23: 20 serial tasks whose runs overrun do not keep another team\'s instance out of the first claim round', async () => {
    let other = '';
    const waiting: string[] = [];
    await seed(async () => {
      for (let i = 0; i < 20; i++) {
        const task = await h.task(`serial_overrun_${i}`, { block: 'serial', priority: 9 });
        const running = await h.instance(task, { expectedTime: new Date(Date.now() - 60_000), quiet: true });
        await h.db.pool.query(`UPDATE task_instance SET state = 'RUNNING', worker_id = 'elsewhere' WHERE id = ?`, [running]);
        waiting.push(await h.instance(task, { quiet: true }));
      }
      other = await lone();
    });
    const first = await round();
    expect(first.claimed).toBeGreaterThan(0);
    expect(await stateOf(other)).toBe('DISPATCHED');
    for (const id of waiting) expect(await stateOf(id)).toBe('PENDING');
    // R4 holds, and the held rows cost no further claim.
    expect(peer.dispatches.filter((d) => d.taskName.startsWith('serial_overrun_'))).toHaveLength(0);
    const second = await round();
    expect(second.claimed).toBe(0);
  });
});

describe('#45 R23: fair share between teams', () => {
  it('R23 fair share: 200 runs of one team hold the 8-slot worker; the slots they free go to the other team\'s 5 runs until both run equally, whatever their priority', async () => {
    await insertTeam(h.db.pool, { name: 'flood', description: 'the noisy one', maxRunning: null });
    await h.redis.redis.publish(h.keys.channels.taskChanged, '{}');
    const floodTask = await h.task('fair_flood', { team: 'flood', block: 'parallel', priority: 9 });
    // 200 rows in one statement (the harness inserts one per transaction).
    await h.db.pool.query(
      `INSERT INTO task_instance (task_id, task_name, team, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority)
       VALUES ${Array.from({ length: 200 }, () => "(?, 'fair_flood', 'flood', ?, CURDATE(), 'schedule', 'PENDING', 1, 1, NOW(3), '{}', 9)").join(', ')}`,
      Array.from({ length: 200 }, (_, i) => [floodTask.id, new Date(Date.now() - 60_000 + i)]).flat(),
    );
    const first = await round();
    expect(first.dispatched).toBe(8);
    await peer.waitDispatches(8);
    expect(peer.dispatches.every((d) => d.team === 'flood')).toBe(true);
    await peer.ack(peer.dispatches); // running (before their ACK deadline)

    const otherTask = await h.task('fair_other', { team: 'other', block: 'parallel', priority: 1 });
    const others: string[] = [];
    for (let i = 0; i < 5; i++) others.push(await h.instance(otherTask, { quiet: true }));
    // The worker is full: a round moves nothing.
    expect((await round()).dispatched).toBe(0);

    // One run of the flood ends at a time; after each, one claim round: the freed slot goes to
    // the team running less (equal weights), whatever the flood's priority.
    for (let n = 1; n <= 4; n++) {
      await finishOne('flood');
      expect((await round()).dispatched).toBe(1);
      await peer.waitDispatches(8 + n); // published after the round's commit; the peer receives it a moment later
      await peer.ack(peer.dispatches.slice(-1));
      expect(peer.dispatches.filter((d) => d.team === 'other')).toHaveLength(n);
    }
    // 4 and 4: the shares are equal. The next slot the flood frees stays the flood's (3 < 4);
    // the next the other team frees goes to its fifth run.
    await finishOne('flood');
    expect((await round()).dispatched).toBe(1);
    await peer.waitDispatches(13);
    await peer.ack(peer.dispatches.slice(-1));
    expect(peer.dispatches.filter((d) => d.team === 'flood')).toHaveLength(9);
    await finishOne('other');
    expect((await round()).dispatched).toBe(1);
    await peer.waitDispatches(14);
    for (const id of others) expect(await stateOf(id)).not.toBe('PENDING');
    expect(peer.dispatches.filter((d) => d.team === 'other')).toHaveLength(5);
  });
});

/** The worker finishes one run of `team` (SUCCESS) and the broker applies it. */
async function finishOne(team: string): Promise<void> {
  const done = peer.dispatches.find((d) => d.team === team && !finished.has(d.executionId));
  if (done === undefined) throw new Error(`no run of ${team} to finish`);
  finished.add(done.executionId);
  await peer.ack([done]);
  await peer.result([done], 'SUCCESS');
  await h.waitState(done.instanceId, 'SUCCESS');
  // The slot is released after the result's commit: the round below must see it free.
  await waitFor(async () => (await h.broker.context.workers.snapshots()).some((w) => w.id === 'w-hol' && freeSlots(w) > 0), { description: 'a free slot on w-hol' });
}

const finished = new Set<string>();
