/**
 * #44: triggering or backfilling a parent creates instances of a dependency-only child of
 * another team only over an edge that team allowed (recorded when a token covering the
 * child's team wrote it, for the two tasks' teams of then; docs/teams.md). Instances of the
 * parent are inserted as a trigger or a backfill leaves them; evaluateDag is called directly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { ManualClock } from '@ax/testing';
import { insertEdge } from '@ax/store';
import { createHarness, type Harness } from '../test/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  await h.db.pool.query("INSERT INTO team (name) VALUES ('a'), ('b')");
});
afterAll(async () => {
  await h.close();
});

const DAY = 86_400_000;

/** A finished instance of `task` on `bizDate`, as a manual trigger or a backfill slot leaves it. */
async function finished(task: string, bizDate: string, trigger: 'manual' | 'rerun'): Promise<void> {
  const [rows] = await h.db.pool.query<RowDataPacket[]>('SELECT id FROM task WHERE name = ?', [task]);
  const at = new Date(`${bizDate}T03:00:00.000Z`);
  await h.db.pool.query<ResultSetHeader>(
    `INSERT INTO task_instance (task_id, task_name, expected_time, run_no, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority, ended_at)
     VALUES (?, ?, ?, 1, ?, ?, 'SUCCESS', 1, 1, ?, '{}', 5, CURRENT_TIMESTAMP(3))`,
    [rows[0]?.['id'], task, at, bizDate, trigger, at],
  );
}

describe('#44 a parent of one team and a dependency-only child of another', () => {
  it("attack: team a triggers and backfills a parent moved into a, and b's child gets no runs; an edge b allowed still creates them", async () => {
    const [today] = await h.db.pool.query<RowDataPacket[]>('SELECT UNIX_TIMESTAMP(CURDATE()) * 1000 AS ms');
    const t0 = Number(today[0]?.['ms']) - DAY;
    const day = (n: number): string => new Date(t0 + n * DAY).toISOString().slice(0, 10);
    const none = { type: 'none' as const };
    // b's own pair, joined by b; then the parent was moved into team a
    await h.task({ name: 'b_parent', team: 'b', schedule: none }, t0);
    await h.task({ name: 'b_child', team: 'b', schedule: none }, t0);
    await insertEdge(h.db.pool, { parent: 'b_parent', child: 'b_child', rule: 'ALL_SUCCESS' });
    await h.db.pool.query("UPDATE task SET team = 'a' WHERE name = 'b_parent'");
    // an edge from a's task that b allowed (written by a token covering b, for teams a → b)
    await h.task({ name: 'a_parent', team: 'a', schedule: none }, t0);
    await h.task({ name: 'b_allowed', team: 'b', schedule: none }, t0);
    await insertEdge(h.db.pool, { parent: 'a_parent', child: 'b_allowed', rule: 'ALL_SUCCESS' });
    // an edge inserted without any record (not through the API): never creates across teams
    await h.task({ name: 'b_unrecorded', team: 'b', schedule: none }, t0);
    await h.db.pool.query("INSERT INTO task_edge (parent_task, child_task, rule) VALUES ('a_parent', 'b_unrecorded', 'ALL_SUCCESS')");

    const engine = h.engine(new ManualClock(Date.now()));
    await engine.refill();

    await finished('b_parent', day(0), 'manual'); // a's trigger
    let r = await engine.evaluateDag({ taskNames: ['b_parent'], bizDates: [day(0)] });
    expect(r.created).toBe(0);
    await finished('b_parent', day(1), 'rerun'); // a's backfill
    r = await engine.evaluateDag(null); // the periodic scan
    expect(r.created).toBe(0);
    expect(await h.instances('b_child')).toEqual([]);

    await finished('a_parent', day(0), 'manual');
    r = await engine.evaluateDag({ taskNames: ['a_parent'], bizDates: [day(0)] });
    expect(r.created).toBe(1);
    expect((await h.instances('b_allowed')).map((x) => x.trigger)).toEqual(['dependency']);
    expect(await h.instances('b_unrecorded')).toEqual([]);
    await engine.evaluateDag(null);
    expect(await h.instances('b_unrecorded')).toEqual([]);
    expect(await h.instances('b_child')).toEqual([]);
  });
});
