/**
 * Migration 0002 (fewer task_instance indexes rewritten per state change): what is left on the
 * table, and that the queries whose index it dropped or replaced still use one. The plans are
 * MariaDB's own for the statements the code sends (captured by running each call once under
 * EXPLAIN), on a table shaped like production's: many final rows, few in the timed states, so
 * a full scan is what the optimizer would pick if no index fitted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import type { Queryable } from '../schema-version.js';
import { explaining, NUMBERS, type PlanRow } from './explain.test-helper.js';
import { transitionInstances } from './bulk-transitions.js';
import { waitingPastDependencyTimeout } from './dependency-timeouts.js';
import { rerunBatchLoads } from './dispatch.js';
import { lockEndedInstances, type EndedInstance } from './retention.js';
import { scanAckExpired, scanLeaseExpired, scanRetryDue } from './timers.js';
import { transitionInstance } from './transitions.js';

const FINAL_ROWS = 50_000;
const DAY_MS = 86_400_000;

let db: TestDatabase;
let batchId: string;

/**
 * 20 tasks; FINAL_ROWS SUCCESS instances, one a minute back from now (about 35 days, so some
 * are past a 30-day retention), every 50th in a rerun batch; 100 instances in each of the
 * timed and active states, half of them due already; a few recent FAILED and CANCELED ones.
 */
async function seed(): Promise<void> {
  await db.pool.query(
    `INSERT INTO task (name, schedule, schedule_type, exec, params, tags, retry, misfire, dependency_timeout_s)
     SELECT CONCAT('lean-', n), '{"type":"none"}', 'none', '{}', '{}', '[]', '{}', '{}', 3600 FROM ${NUMBERS} x WHERE n < 20`,
  );
  const [batch] = await db.pool.query<ResultSetHeader>(
    `INSERT INTO rerun_batch (mode, reason, actor, concurrency, request) VALUES ('backfill', 'test', 'tester', 2, '{}')`,
  );
  batchId = String(batch.insertId);
  await db.pool.query(
    `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params, priority,
                                started_at, ended_at, rerun_batch_id)
     SELECT 1 + n % 20, CONCAT('lean-', n % 20), NOW(3) - INTERVAL n MINUTE, DATE(NOW(3) - INTERVAL n MINUTE), 'schedule',
            'SUCCESS', NOW(3) - INTERVAL n MINUTE, '{}', n % 10,
            NOW(3) - INTERVAL n MINUTE + INTERVAL 1 SECOND, NOW(3) - INTERVAL n MINUTE + INTERVAL 2 SECOND,
            CASE WHEN n % 50 = 0 THEN ? END
       FROM ${NUMBERS} x WHERE n < ?`,
    [batchId, FINAL_ROWS],
  );
  // Slots in the future (so they do not collide with the ones above); due_at half past, half ahead.
  await db.pool.query(
    `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params, priority,
                                ended_at, rerun_batch_id)
     SELECT 1 + n % 20, CONCAT('lean-', n % 20), NOW(3) + INTERVAL n + 1 MINUTE, CURDATE(), 'schedule',
            ELT(1 + n % 7, 'RETRY_WAIT', 'WAITING', 'PENDING', 'DISPATCHED', 'RUNNING', 'FAILED', 'CANCELED'),
            CASE WHEN n % 2 = 0 THEN NOW(3) - INTERVAL 2 DAY ELSE NOW(3) + INTERVAL 1 HOUR END, '{}', n % 10,
            CASE WHEN n % 7 >= 5 THEN NOW(3) END, CASE WHEN n % 3 = 0 THEN ? END
       FROM ${NUMBERS} x WHERE n < 700`,
    [batchId],
  );
  await db.pool.query('ANALYZE TABLE task_instance');
}

/** The plan rows of `task_instance` (aliased `i` or not) of the single statement `run` sent. */
async function instancePlan(run: (q: Queryable) => Promise<unknown>): Promise<PlanRow[]> {
  const plans: PlanRow[][] = [];
  await run(explaining(db.pool, plans));
  expect(plans).toHaveLength(1);
  return (plans[0] ?? []).filter((p) => p.table === 'i' || p.table === 'task_instance');
}

beforeAll(async () => {
  db = await createTestDatabase();
  await seed();
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

describe('migration 0002: task_instance indexes', () => {
  it('drops (state, due_at) and (state, updated_at), keeps state out of the rerun-batch index, adds (ended_at)', async () => {
    const [rows] = await db.pool.query<RowDataPacket[]>('SHOW INDEX FROM task_instance');
    const columns = new Map<string, string[]>();
    for (const r of rows) {
      const name = String(r['Key_name']);
      columns.set(name, [...(columns.get(name) ?? []), String(r['Column_name'])]);
    }
    expect(columns.has('idx_instance_due')).toBe(false);
    expect(columns.has('idx_instance_state_updated')).toBe(false);
    expect(columns.get('idx_instance_rerun_batch')).toEqual(['rerun_batch_id']);
    expect(columns.get('idx_instance_ended')).toEqual(['ended_at']);
    // What a state change still rewrites: the indexes holding `state` (no index has updated_at).
    // idx_instance_team_claim (migration 0010) is R23's per-team claim; idx_instance_claim stays
    // while the RETRY_WAIT and timer scans read it (one more index per state change, #46 weighs it).
    const withState = [...columns].filter(([, cols]) => cols.includes('state')).map(([name]) => name);
    expect(withState.sort()).toEqual(['idx_instance_ack_deadline', 'idx_instance_claim', 'idx_instance_lease', 'idx_instance_task_state', 'idx_instance_team_claim']);
    expect([...columns.values()].some((cols) => cols.includes('updated_at'))).toBe(false);
    const [events] = await db.pool.query<RowDataPacket[]>('SHOW INDEX FROM event_log');
    expect([...new Set(events.map((r) => String(r['Key_name'])))].sort()).toEqual(['PRIMARY', 'idx_event_instance']);
  });
});

describe('queries that used a dropped or replaced index still use one', () => {
  it('R7 RETRY_WAIT due scan: idx_instance_claim on state, due_at inside the index', async () => {
    let found = 0;
    const plan = await instancePlan(async (q) => {
      found = (await scanRetryDue(q, 100)).length;
    });
    expect(plan).toEqual([expect.objectContaining({ key: 'idx_instance_claim', type: 'ref' })]);
    expect(plan[0]?.extra).toContain('Using index condition');
    expect(found).toBe(50); // the 100 RETRY_WAIT rows, half due
  });

  it('R8/R14 ACK-expiry and lease-expiry scans are range scans on their deadline (not every DISPATCHED/RUNNING entry)', async () => {
    // Half of each are past (two days ago), half ahead (an hour). Written as `deadline + grace <
    // NOW()` the predicate could not bound the range, and under load the scan walked every
    // DISPATCHED index entry InnoDB had not purged yet (14,000 of them in the #4 benchmark).
    await db.pool.query(`UPDATE task_instance SET ack_deadline = due_at WHERE state = 'DISPATCHED'`);
    await db.pool.query(`UPDATE task_instance SET lease_until = due_at WHERE state = 'RUNNING'`);
    let acks = 0;
    const ackPlan = await instancePlan(async (q) => {
      acks = (await scanAckExpired(q, 3_000, 500)).length;
    });
    expect(ackPlan).toEqual([expect.objectContaining({ key: 'idx_instance_ack_deadline', type: 'range' })]);
    expect(acks).toBe(50);
    let leases = 0;
    const leasePlan = await instancePlan(async (q) => {
      leases = (await scanLeaseExpired(q, 10_000, 500)).length;
    });
    expect(leasePlan).toEqual([expect.objectContaining({ key: 'idx_instance_lease', type: 'range' })]);
    expect(leases).toBe(50);
  });

  it('R19 dependency timeout scan: idx_instance_claim on state, due_at inside the index', async () => {
    let found = 0;
    const plan = await instancePlan(async (q) => {
      found = (await waitingPastDependencyTimeout(q, 86_400, 500)).length;
    });
    expect(plan).toEqual([expect.objectContaining({ key: 'idx_instance_claim', type: 'ref' })]);
    expect(found).toBe(50); // due two days ago with a one-hour timeout: half of the 100 WAITING rows
  });

  it('R20 rerun-batch load: idx_instance_rerun_batch on the batch id', async () => {
    let active = -1;
    const plan = await instancePlan(async (q) => {
      active = (await rerunBatchLoads(q, [batchId])).get(batchId)?.active ?? -1;
    });
    // The batch's index, as the access path or as the rowid filter of the `state` one: which of
    // the two leads depends on how many rows the batch and the active states hold.
    expect(plan).toHaveLength(1);
    expect(plan[0]?.key?.split('|')).toContain('idx_instance_rerun_batch');
    expect(plan[0]?.type).not.toBe('ALL');
    const [expected] = await db.pool.query<RowDataPacket[]>(
      `SELECT COUNT(*) AS n FROM task_instance WHERE rerun_batch_id = ? AND state IN ('DISPATCHED', 'RUNNING')`,
      [batchId],
    );
    expect(active).toBe(Number(expected[0]?.['n']));
    expect(active).toBeGreaterThan(0);
  });

  it('retention: oldest-ended final instances walk idx_instance_ended in order (no sort), non-final rows never come back', async () => {
    const cutoff = new Date(Date.now() - 30 * DAY_MS);
    // A RUNNING row with a stale ended_at (cannot happen through the code) must still be left alone.
    await db.pool.query(
      `UPDATE task_instance SET ended_at = NOW(3) - INTERVAL 40 DAY WHERE state = 'RUNNING' ORDER BY id LIMIT 1`,
    );
    let batch: EndedInstance[] = [];
    const plan = await instancePlan(async (q) => {
      batch = await lockEndedInstances(q, cutoff, 500);
    });
    expect(plan).toEqual([expect.objectContaining({ key: 'idx_instance_ended', type: 'range' })]);
    expect(plan[0]?.extra).not.toContain('filesort');
    expect(batch).toHaveLength(500);
    const ends = batch.map((r) => r.endedAt.getTime());
    expect(ends).toEqual([...ends].sort((a, b) => a - b));
    expect(Math.max(...ends)).toBeLessThan(cutoff.getTime());
    expect(new Set(batch.map((r) => r.state))).toEqual(new Set(['SUCCESS']));
  });
});

describe('every move to a final state sets ended_at (the purge finds instances by it)', () => {
  async function freshPending(n: number): Promise<string[]> {
    await db.pool.query(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params)
       SELECT 1, 'lean-end', NOW(3) + INTERVAL n DAY, CURDATE(), 'manual', 'PENDING', NOW(3), '{}' FROM ${NUMBERS} x WHERE n < ?`,
      [n],
    );
    const [rows] = await db.pool.query<RowDataPacket[]>(`SELECT id FROM task_instance WHERE task_name = 'lean-end' ORDER BY id`);
    return rows.map((r) => String(r['id']));
  }

  async function endedAt(ids: readonly string[]): Promise<Array<Date | null>> {
    const [rows] = await db.pool.query<RowDataPacket[]>('SELECT ended_at FROM task_instance WHERE id IN (?) ORDER BY id', [ids]);
    return rows.map((r) => (r['ended_at'] as Date | null) ?? null);
  }

  it('single-row and set-based transitions fill ended_at when the caller gives none, and keep the one it gives', async () => {
    const [a, b, c, d] = (await freshPending(4)) as [string, string, string, string];
    const given = new Date('2026-01-02T03:04:05.678Z');
    expect(await transitionInstance(db.pool, { id: a, from: 'PENDING', to: 'CANCELED', set: { reason: 'TEST' } })).toBe(true);
    expect(await transitionInstance(db.pool, { id: b, from: 'PENDING', to: 'CANCELED', set: { ended_at: given } })).toBe(true);
    expect(await transitionInstances(db.pool, { ids: [c, d], from: 'PENDING', to: 'DISPATCHED' })).toEqual(new Set([c, d]));
    expect(await endedAt([c, d])).toEqual([null, null]); // not final: untouched
    expect(await transitionInstances(db.pool, { ids: [c, d], from: 'DISPATCHED', to: 'SUCCESS' })).toEqual(new Set([c, d]));
    const [endA, endB, endC, endD] = await endedAt([a, b, c, d]);
    expect(endB).toEqual(given);
    for (const end of [endA, endC, endD]) {
      expect(end).toBeInstanceOf(Date);
      expect(Math.abs((end as Date).getTime() - Date.now())).toBeLessThan(60_000);
    }
  });
});
