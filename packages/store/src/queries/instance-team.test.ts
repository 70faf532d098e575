/**
 * Migration 0010 (#45, R23, expand step of R22): the team on the instance row, backfilled from
 * the task for rows written before it, written by every insert path after it; team weights.
 */
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { DEFAULT_MIGRATIONS_DIR, migrate } from '../migrate.js';
import { createSlotInstances } from './instances-create.js';
import { insertManualInstance } from './instances-manual.js';
import { rerunInstance } from './reruns.js';
import { insertTask } from './tasks.js';

let db: TestDatabase;
let migrationsDir: string;

async function copyMigrationsUpTo(version: number): Promise<void> {
  const source = fileURLToPath(DEFAULT_MIGRATIONS_DIR);
  for (const file of await readdir(source)) {
    if (/^\d{4}_/.test(file) && Number(file.slice(0, 4)) <= version) await cp(join(source, file), join(migrationsDir, file));
  }
}

async function teamOf(id: string | number): Promise<string | null> {
  const [rows] = await db.pool.query<RowDataPacket[]>('SELECT team FROM task_instance WHERE id = ?', [id]);
  return (rows[0]?.team as string | null | undefined) ?? null;
}

/** At schema 9: tasks of teams `default` and `red`, one instance each, and one of a deleted task. Then 0010. */
beforeAll(async () => {
  migrationsDir = await mkdtemp(join(tmpdir(), 'ax-instance-team-'));
  await copyMigrationsUpTo(9);
  db = await createTestDatabase({ migrateOptions: { migrationsDir } });
  await db.pool.query("INSERT INTO team (name) VALUES ('red')");
  await db.pool.query(
    `INSERT INTO task (name, team, schedule, schedule_type, exec, params, tags, retry, misfire)
     VALUES ('old-default', 'default', '{"type":"none"}', 'none', '{}', '{}', '[]', '{}', '{}'),
            ('old-red', 'red', '{"type":"none"}', 'none', '{}', '{}', '[]', '{}', '{}')`,
  );
  await db.pool.query(
    `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params)
     SELECT id, name, '2026-01-01 00:00:00', '2026-01-01', 'schedule', 'SUCCESS', '2026-01-01 00:00:00', '{}' FROM task
     UNION ALL SELECT 999999, 'gone', '2026-01-01 00:00:00', '2026-01-01', 'schedule', 'PENDING', '2026-01-01 00:00:00', '{}'`,
  );
  await copyMigrationsUpTo(10);
  expect((await migrate(db.pool, { migrationsDir })).applied.map((m) => m.version)).toEqual([10]);
  // The insert paths below are this build's, which needs SCHEMA_VERSION_MIN: the rest too.
  await copyMigrationsUpTo(Number.MAX_SAFE_INTEGER);
  await migrate(db.pool, { migrationsDir });
});

afterAll(async () => {
  await db?.drop();
  if (migrationsDir !== undefined) await rm(migrationsDir, { recursive: true, force: true });
});

describe('migration 0010 from schema 9', () => {
  it('#45 R23: backfills each existing instance with its task\'s team; an instance of a deleted task keeps NULL', async () => {
    const [rows] = await db.pool.query<RowDataPacket[]>('SELECT task_name, team FROM task_instance ORDER BY task_name');
    expect(rows.map((r): unknown[] => [r.task_name, r.team])).toEqual([
      ['gone', null],
      ['old-default', 'default'],
      ['old-red', 'red'],
    ]);
  });

  it('#45 R23: adds the claim-by-team and instances-by-team indexes and team.weight default 1', async () => {
    const [idx] = await db.pool.query<RowDataPacket[]>(
      `SELECT INDEX_NAME, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) AS cols FROM information_schema.STATISTICS
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'task_instance' AND INDEX_NAME IN ('idx_instance_team_claim', 'idx_instance_team')
        GROUP BY INDEX_NAME ORDER BY INDEX_NAME`,
    );
    expect(idx.map((r): unknown[] => [r.INDEX_NAME, r.cols])).toEqual([
      ['idx_instance_team', 'team'],
      ['idx_instance_team_claim', 'state,team,priority,due_at'],
    ]);
    const [teams] = await db.pool.query<RowDataPacket[]>('SELECT name, weight FROM team ORDER BY name');
    expect(teams.map((r): unknown[] => [r.name, Number(r.weight)])).toEqual([
      ['default', 1],
      ['red', 1],
    ]);
  });
});

describe('every insert path writes the team (#45)', () => {
  it('#45 R23: scheduler slots, manual triggers and backfill slots carry the task\'s team; a rerun fills a missing one', async () => {
    const task = await insertTask(
      db.pool,
      parseTaskDefinitionOrThrow({ name: 'new-red', team: 'red', schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] }, block: 'parallel' }),
    );
    const conn = await db.pool.getConnection();
    let slotId: string;
    try {
      await conn.beginTransaction();
      const outcomes = await createSlotInstances(conn, [
        {
          taskId: task.id,
          taskName: 'new-red',
          version: task.version,
          expectedMs: Date.parse('2026-02-01T00:00:00Z'),
          bizDate: '2026-02-01',
          trigger: 'schedule',
          state: 'PENDING',
          maxAttempts: 1,
          serial: false,
        },
      ]);
      await conn.commit();
      const outcome = [...outcomes.values()][0];
      if (outcome?.kind !== 'created') throw new Error(`slot not created: ${JSON.stringify(outcome)}`);
      slotId = outcome.instanceId;
    } finally {
      conn.release();
    }
    expect(await teamOf(slotId)).toBe('red');

    const base = { taskId: task.id, taskName: 'new-red', bizDate: '2026-02-02', params: {}, priority: 5, maxAttempts: 1 };
    const manual = await insertManualInstance(db.pool, { ...base, requestedAt: new Date('2026-02-02T00:00:00Z'), trigger: 'manual' });
    const backfill = await insertManualInstance(db.pool, { ...base, requestedAt: new Date('2026-02-03T00:00:00Z'), trigger: 'rerun', exact: true, dueAfterMs: 0 });
    expect(await teamOf(manual!.id)).toBe('red');
    expect(await teamOf(backfill!.id)).toBe('red');

    // A row written by a build before 0010 (no team): its rerun gives it the task's.
    const [old] = await db.pool.query<ResultSetHeader>(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params)
       VALUES (?, 'new-red', '2026-02-04 00:00:00', '2026-02-04', 'schedule', 'FAILED', '2026-02-04 00:00:00', '{}')`,
      [task.id],
    );
    const [batch] = await db.pool.query<ResultSetHeader>(`INSERT INTO rerun_batch (mode, reason, actor, request) VALUES ('instance', 't', 't', '{}')`);
    expect(await teamOf(old.insertId)).toBeNull();
    const moved = await rerunInstance(db.pool, {
      id: String(old.insertId),
      from: 'FAILED',
      to: 'PENDING',
      maxAttempts: 1,
      batchId: String(batch.insertId),
      dueAfterMs: 0,
      actor: 't',
      reason: 't',
    });
    expect(moved).toBe(true);
    expect(await teamOf(old.insertId)).toBe('red');
  });
});
