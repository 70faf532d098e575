/**
 * Migration 0006 (the reads of months of history, #24): its columns and indexes, the backfill
 * of `promoted_at` from DEPS_MET events, and MariaDB's own plans for the statements the
 * dashboard and the instance lists send, on a table with weeks of final rows (so a scan of
 * the primary key or of the whole table is what the optimizer would pick if no index fitted).
 */
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RowDataPacket } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { DEFAULT_MIGRATIONS_DIR, migrate } from '../migrate.js';
import type { Queryable } from '../schema-version.js';
import { explaining, NUMBERS, type PlanRow } from './explain.test-helper.js';
import { listInstances } from './instances-read.js';
import { lastRunsOf } from './task-last-run.js';
import { dayStats, hourlyStats } from './stats.js';
import { existingSlotTimes, NAMES_PER_IN_LIST } from './instances-create.js';
import { scanSlaMissed } from './timers.js';

const FINAL_ROWS = 50_000;
const DAY_MS = 86_400_000;

let db: TestDatabase;
let migrationsDir: string;
/** The UTC midnight ten days back: a past day of the history. */
let pastDay: Date;
/** The business date of the backfill written first (the oldest ids). */
let backfillDay: string;

/** The shipped migrations up to `version`, copied into the test's folder. */
async function copyMigrationsUpTo(version: number): Promise<void> {
  const source = fileURLToPath(DEFAULT_MIGRATIONS_DIR);
  for (const file of await readdir(source)) {
    if (/^\d{4}_/.test(file) && Number(file.slice(0, 4)) <= version) await cp(join(source, file), join(migrationsDir, file));
  }
}

/**
 * At schema 5: 20 tasks; FINAL_ROWS instances, one a minute back from now (about 35 days),
 * every 10th FAILED, every 100th a dependency instance created 5 hours after its slot, every
 * 100th (another) promoted from WAITING 2 hours after its slot (its DEPS_MET event only: schema
 * 5 has no promoted_at). Those tasks are in team `default`; team `old` has one task with 10
 * instances from 30 days ago, team `idle` one task that never ran. Before all of them, a backfill
 * of 40,000 instances of one day 50 days back. Then migration 0006, and 0007 (the SLA scan's
 * task indexes, read by the last describe).
 */
async function seedAndMigrate(): Promise<void> {
  await db.pool.query(
    `INSERT INTO task (name, schedule, schedule_type, exec, params, tags, retry, misfire, dependency_timeout_s)
     SELECT CONCAT('hist-', n), '{"type":"none"}', 'none', '{}', '{}', '[]', '{}', '{}', 3600 FROM ${NUMBERS} x WHERE n < 20`,
  );
  // A backfill: 40,000 instances of one old day (50 days back), written before everything else.
  backfillDay = new Date(Date.now() - 50 * DAY_MS).toISOString().slice(0, 10);
  await db.pool.query(
    `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params, ended_at)
     SELECT 1, 'hist-0', slot, DATE(slot), 'rerun', 'SUCCESS', slot, '{}', slot
       FROM (SELECT TIMESTAMP(?) + INTERVAL n SECOND AS slot FROM ${NUMBERS} x WHERE n < 40000) s`,
    [backfillDay],
  );
  // Team "old": one task whose 10 instances are 30 days old (and written first: the oldest ids). Team "idle": a task that never ran.
  await db.pool.query("INSERT INTO team (name) VALUES ('old'), ('idle')");
  await db.pool.query(
    `INSERT INTO task (name, team, schedule, schedule_type, exec, params, tags, retry, misfire, dependency_timeout_s)
     VALUES ('hist-old', 'old', '{"type":"none"}', 'none', '{}', '{}', '[]', '{}', '{}', 3600),
            ('hist-idle', 'idle', '{"type":"none"}', 'none', '{}', '{}', '[]', '{}', '{}', 3600)`,
  );
  await db.pool.query(
    `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params, ended_at)
     SELECT t.id, t.name, slot, DATE(slot), 'schedule', 'SUCCESS', slot, '{}', slot
       FROM task t CROSS JOIN (SELECT TIMESTAMP(CURDATE()) - INTERVAL 30 DAY + INTERVAL n SECOND AS slot FROM ${NUMBERS} x WHERE n < 10) s
      WHERE t.name = 'hist-old'`,
  );
  await db.pool.query(
    `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params, created_at, ended_at)
     SELECT 1 + n % 20, CONCAT('hist-', n % 20), slot, DATE(slot), IF(n % 100 = 7, 'dependency', 'schedule'),
            IF(n % 10 = 3, 'FAILED', 'SUCCESS'), slot, '{}', IF(n % 100 = 7, slot + INTERVAL 5 HOUR, slot), slot + INTERVAL 1 MINUTE
       FROM (SELECT n, TIMESTAMP(CURDATE()) - INTERVAL n MINUTE AS slot FROM ${NUMBERS} x WHERE n < ?) s`,
    [FINAL_ROWS],
  );
  await db.pool.query(
    `INSERT INTO event_log (instance_id, type, at, message)
     SELECT id, 'DEPS_MET', expected_time + INTERVAL 2 HOUR, 'every parent edge is satisfied' FROM task_instance WHERE id % 100 = 50`,
  );
  await copyMigrationsUpTo(6);
  expect((await migrate(db.pool, { migrationsDir })).applied.map((m) => m.version)).toEqual([6]);
  await db.pool.query('ANALYZE TABLE task_instance');
  // The reads below are this build's, which needs SCHEMA_VERSION_MIN (0015's
  // task_instance.task_version): the plans are checked on the schema it runs on.
  await copyMigrationsUpTo(Number.MAX_SAFE_INTEGER);
  await migrate(db.pool, { migrationsDir });
}

/** A Queryable that notes each statement's SQL and values in `sent` before sending it. */
function recording(pool: Queryable, sent: Array<{ sql: string; values: unknown[] }>): Queryable {
  const query = (sql: string, values: unknown[] = []): Promise<unknown> => {
    sent.push({ sql, values });
    return pool.query(sql, values);
  };
  return { query } as unknown as Queryable;
}

/** The plan rows of `task_instance` (aliased `i` or not) of each statement `run` sent. */
async function instancePlans(run: (q: Queryable) => Promise<unknown>): Promise<PlanRow[][]> {
  const plans: PlanRow[][] = [];
  await run(explaining(db.pool, plans));
  return plans.map((plan) => plan.filter((p) => p.table === 'i' || p.table === 'task_instance'));
}

/** How many index entries (Handler_read_next + _prev) `run` read, on one connection of its own. */
async function indexEntriesReadBy(run: (q: Queryable) => Promise<unknown>): Promise<number> {
  const conn = await db.pool.getConnection();
  try {
    const reads = async (): Promise<number> => {
      const [rows] = await conn.query<RowDataPacket[]>("SHOW SESSION STATUS WHERE Variable_name IN ('Handler_read_next', 'Handler_read_prev')");
      return rows.reduce((sum, r) => sum + Number(r['Value']), 0);
    };
    const before = await reads();
    await run(conn);
    return (await reads()) - before;
  } finally {
    conn.release();
  }
}

beforeAll(async () => {
  migrationsDir = await mkdtemp(join(tmpdir(), 'ax-history-indexes-'));
  await copyMigrationsUpTo(5);
  db = await createTestDatabase({ migrateOptions: { migrationsDir } });
  const midnight = new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z');
  pastDay = new Date(midnight.getTime() - 10 * DAY_MS);
  await seedAndMigrate();
}, 120_000);

afterAll(async () => {
  await db?.drop();
  await rm(migrationsDir, { recursive: true, force: true });
});

describe('migration 0006: task_instance columns and indexes', () => {
  it('adds promoted_at, the virtual due_time, and one-column indexes on due_time, biz_date and expected_time', async () => {
    const [rows] = await db.pool.query<RowDataPacket[]>('SHOW INDEX FROM task_instance');
    const columns = new Map<string, string[]>();
    for (const r of rows) columns.set(String(r['Key_name']), [...(columns.get(String(r['Key_name'])) ?? []), String(r['Column_name'])]);
    expect(columns.get('idx_instance_due_time')).toEqual(['due_time']);
    expect(columns.get('idx_instance_biz_day')).toEqual(['biz_date']);
    expect(columns.get('idx_instance_expected')).toEqual(['expected_time']);
    expect(columns.get('idx_instance_task')).toEqual(['task_name']);
    // Still none holds updated_at, and no new one holds state (migration 0002's write path).
    expect([...columns.values()].some((cols) => cols.includes('updated_at'))).toBe(false);
    const [cols] = await db.pool.query<RowDataPacket[]>(
      `SELECT column_name AS c, extra AS x FROM information_schema.columns
        WHERE table_schema = DATABASE() AND table_name = 'task_instance' AND column_name IN ('promoted_at', 'due_time')`,
    );
    expect(Object.fromEntries(cols.map((c) => [String(c['c']), String(c['x'])]))).toEqual({ promoted_at: '', due_time: 'VIRTUAL GENERATED' });
  });

  it('fills promoted_at from the DEPS_MET events of instances promoted before it, and due_time is the latest of the three times', async () => {
    const [rows] = await db.pool.query<RowDataPacket[]>(
      `SELECT id % 100 AS k, COUNT(*) AS n,
              SUM(due_time = expected_time) AS at_slot,
              SUM(due_time = expected_time + INTERVAL 2 HOUR AND promoted_at = due_time) AS at_promotion,
              SUM(promoted_at IS NOT NULL) AS promoted
         FROM task_instance WHERE id % 100 IN (50, 51) AND \`trigger\` = 'schedule' GROUP BY k ORDER BY k`,
    );
    const byKey = Object.fromEntries(rows.map((r) => [Number(r['k']), r]));
    // Schedule instances with id % 100 = 50 were promoted; those with 51 were not.
    expect(Number(byKey[50]?.['n'])).toBeGreaterThan(400);
    expect(Number(byKey[50]?.['at_promotion'])).toBe(Number(byKey[50]?.['n']));
    expect(Number(byKey[51]?.['at_slot'])).toBe(Number(byKey[51]?.['n']));
    expect(Number(byKey[51]?.['promoted'])).toBe(0);
    const [dependency] = await db.pool.query<RowDataPacket[]>(
      "SELECT COUNT(*) AS n, SUM(due_time = created_at) AS at_created FROM task_instance WHERE `trigger` = 'dependency'",
    );
    expect(Number(dependency[0]?.['n'])).toBe(FINAL_ROWS / 100);
    expect(Number(dependency[0]?.['at_created'])).toBe(FINAL_ROWS / 100);
  });
});

describe('migration 0007: the indexes of the SLA scan\'s task read', () => {
  it('indexes sla_start_s and sla_finish_s one column each', async () => {
    const [applied] = await db.pool.query<RowDataPacket[]>('SELECT version FROM schema_migrations WHERE version = 7');
    expect(applied).toHaveLength(1);
    const [rows] = await db.pool.query<RowDataPacket[]>('SHOW INDEX FROM task');
    const columns = new Map<string, string[]>();
    for (const r of rows) columns.set(String(r['Key_name']), [...(columns.get(String(r['Key_name'])) ?? []), String(r['Column_name'])]);
    expect(columns.get('idx_task_sla_start')).toEqual(['sla_start_s']);
    expect(columns.get('idx_task_sla_finish')).toEqual(['sla_finish_s']);
  });
});

describe('the reads of history use one index each', () => {
  it('stats today: both statements read the day as one range of idx_instance_due_time; the figures match a count by hand', async () => {
    let stats: Awaited<ReturnType<typeof dayStats>> | undefined;
    const plans = await instancePlans(async (q) => {
      stats = await dayStats(q, pastDay);
    });
    expect(plans).toHaveLength(2);
    // The access path is the range; the failing-task count may add `state`'s index as a rowid filter.
    for (const plan of plans) {
      expect(plan).toHaveLength(1);
      expect(plan[0]?.key?.split('|')[0]).toBe('idx_instance_due_time');
      expect(plan[0]?.type.split('|')[0]).toBe('range');
    }
    const [expected] = await db.pool.query<RowDataPacket[]>(
      'SELECT COUNT(*) AS total, SUM(state = ?) AS failed FROM task_instance WHERE due_time >= ? AND due_time < ?',
      ['FAILED', pastDay, new Date(pastDay.getTime() + DAY_MS)],
    );
    expect(stats?.total).toBe(Number(expected[0]?.['total']));
    expect(stats?.failed).toBe(Number(expected[0]?.['failed']));
    expect(stats?.total).toBeGreaterThan(1_400); // a minute's slot each, some moved in from the day before, some out
    expect(stats?.topFailing.reduce((sum, t) => sum + t.count, 0)).toBe(stats?.failed);
  });

  it('stats hourly: one range of idx_instance_due_time', async () => {
    let hours: Awaited<ReturnType<typeof hourlyStats>> = [];
    const plans = await instancePlans(async (q) => {
      hours = await hourlyStats(q, pastDay);
    });
    expect(plans).toEqual([[expect.objectContaining({ key: 'idx_instance_due_time', type: 'range' })]]);
    expect(hours).toHaveLength(24);
    expect(hours.reduce((sum, h) => sum + h.runs, 0)).toBeGreaterThan(1_400);
  });

  it('instances by bizDate, newest first: idx_instance_biz_day in id order, no sort', async () => {
    let page: Awaited<ReturnType<typeof listInstances>> = [];
    const bizDate = pastDay.toISOString().slice(0, 10);
    const plans = await instancePlans(async (q) => {
      page = await listInstances(q, { bizDate, limit: 50 });
    });
    expect(plans).toEqual([[expect.objectContaining({ key: 'idx_instance_biz_day' })]]);
    expect(plans[0]?.[0]?.extra).not.toContain('filesort');
    expect(page).toHaveLength(50);
    expect(new Set(page.map((i) => i.bizDate))).toEqual(new Set([bizDate]));
    const ids = page.map((i) => BigInt(i.id));
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0)));
  });

  it("a busy old day's page reads that day by its index, not the primary key backwards through every newer day", async () => {
    // The backfill day holds 40 % of the table and the oldest ids, behind 50,000 newer rows. (On
    // the bench's 5,000,000 rows MariaDB chose the primary key backwards for such days by itself.)
    let page: Awaited<ReturnType<typeof listInstances>> = [];
    const plans = await instancePlans(async (q) => {
      page = await listInstances(q, { bizDate: backfillDay, limit: 51 });
    });
    expect(plans[0]?.[0]?.key).toMatch(/^idx_instance_biz_da(y|te)$/);
    expect(page).toHaveLength(51);
    expect(new Set(page.map((i) => i.bizDate))).toEqual(new Set([backfillDay]));
  });

  it("instances of a task, newest first: idx_instance_task in id order, not the task's whole history sorted", async () => {
    let page: Awaited<ReturnType<typeof listInstances>> = [];
    const plans = await instancePlans(async (q) => {
      page = await listInstances(q, { taskName: 'hist-3', limit: 50 });
    });
    expect(plans).toEqual([[expect.objectContaining({ key: 'idx_instance_task', type: 'ref' })]]);
    expect(plans[0]?.[0]?.extra).not.toContain('filesort');
    const [newest] = await db.pool.query<RowDataPacket[]>("SELECT id FROM task_instance WHERE task_name = 'hist-3' ORDER BY id DESC LIMIT 50");
    expect(page.map((i) => i.id)).toEqual(newest.map((r) => String(r['id'])));
  });

  it("the task list's last runs: the greatest id of each task, one entry of idx_instance_task each", async () => {
    let runs = new Map<string, { instanceId: string }>();
    const plans = await instancePlans(async (q) => {
      runs = await lastRunsOf(q, ['hist-1', 'hist-2', 'hist-old', 'hist-idle']);
    });
    expect(plans).toHaveLength(1);
    expect(plans[0]).toContainEqual(expect.objectContaining({ key: 'idx_instance_task', type: 'ref' }));
    expect(plans[0]?.map((p) => p.extra).join(' ')).not.toContain('filesort');
    const [latest] = await db.pool.query<RowDataPacket[]>(
      "SELECT task_name, MAX(id) AS id FROM task_instance WHERE task_name IN ('hist-1', 'hist-2', 'hist-old') GROUP BY task_name",
    );
    expect(Object.fromEntries([...runs].map(([name, run]) => [name, run.instanceId]))).toEqual(
      Object.fromEntries(latest.map((r) => [String(r['task_name']), String(r['id'])])),
    );
    // Each task's newest entry only: a MAX(id) ... GROUP BY read all 2,500 of hist-1's and hist-2's.
    expect(await indexEntriesReadBy((q) => lastRunsOf(q, ['hist-1', 'hist-2', 'hist-old', 'hist-idle']))).toBeLessThan(10);
  });

  it("instances in a from/to slot window: the page's ids from idx_instance_expected alone, then only the page's rows", async () => {
    let page: Awaited<ReturnType<typeof listInstances>> = [];
    const from = new Date(pastDay.getTime() + 3 * 3_600_000);
    const to = new Date(from.getTime() + 3_600_000);
    const plans = await instancePlans(async (q) => {
      page = await listInstances(q, { from, to, limit: 50 });
    });
    expect(plans).toHaveLength(1);
    // Covering ("Using index", not "Using index condition", which reads each row of the window).
    const windowRead = plans[0]?.find((p) => p.key === 'idx_instance_expected');
    expect(windowRead?.type).toBe('range');
    expect(windowRead?.extra).toMatch(/Using index(;|$)/);
    expect(plans[0]).toContainEqual(expect.objectContaining({ key: 'PRIMARY', type: 'eq_ref' }));
    const [newest] = await db.pool.query<RowDataPacket[]>('SELECT id FROM task_instance WHERE expected_time >= ? AND expected_time < ? ORDER BY id DESC LIMIT 50', [from, to]);
    expect(page.map((i) => i.id)).toEqual(newest.map((r) => String(r['id'])));
    const next = await listInstances(db.pool, { from, to, beforeId: page.at(-1)?.id ?? '0', limit: 50 });
    const [older] = await db.pool.query<RowDataPacket[]>('SELECT id FROM task_instance WHERE expected_time >= ? AND expected_time < ? AND id < ? ORDER BY id DESC LIMIT 50', [from, to, page.at(-1)?.id]);
    expect(next.map((i) => i.id)).toEqual(older.map((r) => String(r['id'])));
  });

});

describe('a team-scoped page of the newest instances (every token of a team, and ?team=, read through it)', () => {
  /** The ids of the newest `limit` instances of `teams`, by a join nobody tuned. */
  async function newestOf(teams: string[], limit: number): Promise<string[]> {
    const [rows] = await db.pool.query<RowDataPacket[]>(
      'SELECT i.id FROM task_instance i JOIN task t ON t.id = i.task_id WHERE t.team IN (?) ORDER BY i.id DESC LIMIT ?',
      [teams, limit],
    );
    return rows.map((r) => String(r['id']));
  }

  /**
   * #45: one statement; each team's part and the part of rows without a team read
   * idx_instance_team in id order (a ref, or a range backwards from the end of the team's
   * entries; no sort), however recent or old the team's instances: the outer merge sorts at
   * most a page per part.
   */
  function expectTeamPage(plans: PlanRow[][], teams: string[]): void {
    expect(plans).toHaveLength(1);
    const parts = plans[0] ?? [];
    expect(parts).toHaveLength(teams.length + 1);
    for (const part of parts) {
      expect(part.key).toBe('idx_instance_team');
      expect(['ref', 'range']).toContain(part.type);
      expect(part.extra).not.toContain('filesort');
    }
  }

  it('#45 a team with recent instances: its newest entries of idx_instance_team, no sort, no read of the task table', async () => {
    let ids: string[] = [];
    const plans = await instancePlans(async (q) => {
      ids = (await listInstances(q, { teams: ['default'], limit: 51 })).map((i) => i.id);
    });
    expectTeamPage(plans, ['default']);
    expect(ids).toEqual(await newestOf(['default'], 51));
  });

  it('#45 teams with only old instances, or none: the same, one part per team', async () => {
    for (const teams of [['old'], ['idle'], ['old', 'idle'], ['default', 'old']]) {
      let ids: string[] = [];
      const plans = await instancePlans(async (q) => {
        ids = (await listInstances(q, { teams, limit: 51 })).map((i) => i.id);
      });
      expectTeamPage(plans, teams);
      expect(ids).toEqual(await newestOf(teams, 51));
    }
    expect(await newestOf(['old'], 51)).toHaveLength(10);
  });

  it('#45 the next page of one state: one statement, the same rows as the plain query', async () => {
    const first = await listInstances(db.pool, { teams: ['default'], states: ['FAILED'], limit: 51 });
    const last = first[first.length - 1];
    expect(first.every((i) => i.state === 'FAILED' && i.team === 'default')).toBe(true);
    let ids: string[] = [];
    const plans = await instancePlans(async (q) => {
      ids = (await listInstances(q, { teams: ['default'], states: ['FAILED'], beforeId: last?.id, limit: 51 })).map((i) => i.id);
    });
    expect(plans).toHaveLength(1);
    const [rows] = await db.pool.query<RowDataPacket[]>(
      "SELECT id FROM task_instance WHERE team = 'default' AND state = 'FAILED' AND id < ? ORDER BY id DESC LIMIT 51",
      [last?.id],
    );
    expect(ids).toEqual(rows.map((r) => String(r['id'])));
  });

  it('with a day or a window, that index drives the read and the team is checked per row', async () => {
    const bizDate = pastDay.toISOString().slice(0, 10);
    const plans = await instancePlans(async (q) => {
      await listInstances(q, { teams: ['default'], bizDate, limit: 51 });
    });
    expect(plans).toEqual([[expect.objectContaining({ key: 'idx_instance_biz_day' })]]);
  });
});

/**
 * The services' own scans on a long history. The soak of 2026-12-03 (schema 6, 300,000 rows)
 * found the broker's SLA scan walking idx_instance_expected from its oldest entry for its
 * ORDER BY ... LIMIT (seconds per scan, two brokers), and the scheduler's slot check reading a
 * task's whole history per range: both grow with the table, so ax slowed down as it aged.
 */
describe('the scans a service repeats every second stay within what they look for', () => {
  it("SLA scan: the names of the tasks with an sla, then their open instances as ranges of (task_name, state); with none, no read of the instances", async () => {
    // Open instances among the history: 200 PENDING of the last minutes on tasks without an sla.
    await db.pool.query(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params)
       SELECT 1 + n % 20, CONCAT('hist-', n % 20), slot, DATE(slot), 'schedule', 'PENDING', slot, '{}'
         FROM (SELECT n, TIMESTAMP(CURDATE()) + INTERVAL 1 DAY + INTERVAL n SECOND AS slot FROM ${NUMBERS} x WHERE n < 200) s`,
    );
    await db.pool.query('ANALYZE TABLE task_instance');
    try {
      // No task has an sla: one read of the task table, none of the instances.
      const none: PlanRow[][] = [];
      expect(await scanSlaMissed(explaining(db.pool, none), 100)).toEqual([]);
      expect(none.map((plan) => plan.map((p) => p.table))).toEqual([['task']]);

      // And it still finds a late one: hist-5 starts within 60 s; one of its instances is an hour late.
      await db.pool.query("UPDATE task SET sla_start_s = 60 WHERE name = 'hist-5'");
      const [late] = await db.pool.query<RowDataPacket[]>(
        `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params)
         VALUES (6, 'hist-5', NOW(3) - INTERVAL 1 HOUR, CURDATE(), 'schedule', 'PENDING', NOW(3) - INTERVAL 1 HOUR, '{}') RETURNING id`,
      );
      const plans: PlanRow[][] = [];
      const found = await scanSlaMissed(explaining(db.pool, plans), 100);
      expect(plans).toHaveLength(2);
      const i = plans[1]?.find((p) => p.table === 'i');
      expect(i).toEqual(expect.objectContaining({ key: 'idx_instance_task_state', type: 'range' }));
      expect(found.map((m) => [m.id, m.taskName, m.miss, m.withinSeconds])).toEqual([[String(late[0]?.['id']), 'hist-5', 'START', 60]]);
    } finally {
      await db.pool.query("UPDATE task SET sla_start_s = NULL WHERE name = 'hist-5'");
      await db.pool.query("DELETE FROM task_instance WHERE state = 'PENDING'");
    }
  });

  it('SLA scan: among 20,000 tasks, the 5 with an sla are read through migration 0007\'s indexes, not by reading every task row', async () => {
    await db.pool.query(
      `INSERT INTO task (name, schedule, schedule_type, exec, params, tags, retry, misfire)
       SELECT CONCAT('many-', n), '{"type":"none"}', 'none', '{}', '{}', '[]', '{}', '{}' FROM ${NUMBERS} x WHERE n < 20000`,
    );
    try {
      await db.pool.query("UPDATE task SET sla_start_s = 60 WHERE name IN ('many-1', 'many-7001')");
      await db.pool.query("UPDATE task SET sla_finish_s = 600 WHERE name IN ('many-4000', 'many-7001', 'many-12000', 'many-19999')");
      await db.pool.query('ANALYZE TABLE task');
      // many-1 has not started an hour after its slot; many-12000 is still running 20 minutes after its own.
      await db.pool.query(
        `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params, started_at)
         SELECT id, name, NOW(3) - INTERVAL IF(name = 'many-1', 60, 20) MINUTE, CURDATE(), 'schedule', IF(name = 'many-1', 'PENDING', 'RUNNING'),
                NOW(3) - INTERVAL 1 HOUR, '{}', IF(name = 'many-1', NULL, NOW(3) - INTERVAL 19 MINUTE)
           FROM task WHERE name IN ('many-1', 'many-12000')`,
      );
      const sent: Array<{ sql: string; values: unknown[] }> = [];
      const plans: PlanRow[][] = [];
      const found = await scanSlaMissed(recording(explaining(db.pool, plans), sent), 100);
      expect(plans[0]?.map((p) => p.table)).toEqual(['task']);
      expect(['ref', 'range', 'index_merge']).toContain(plans[0]?.[0]?.type);
      expect(plans[0]?.[0]?.key).toMatch(/idx_task_sla/);
      // The optimizer's own count of the rows it reads: the SLA tasks, not the table.
      const [plan] = await db.pool.query<RowDataPacket[]>(`EXPLAIN ${sent[0]?.sql ?? ''}`, sent[0]?.values);
      expect(Number(plan[0]?.['rows'])).toBeLessThan(50);
      expect(found.map((m) => [m.taskName, m.miss, m.withinSeconds])).toEqual([
        ['many-1', 'START', 60],
        ['many-12000', 'FINISH', 600],
      ]);
    } finally {
      await db.pool.query("DELETE FROM task_instance WHERE task_name LIKE 'many-%'");
      await db.pool.query("DELETE FROM task WHERE name LIKE 'many-%'");
    }
  });

  it(`SLA scan: 1,200 tasks with an sla are asked ${NAMES_PER_IN_LIST} names a statement; late instances of every chunk come back in slot order, cut at the limit`, async () => {
    await db.pool.query(
      `INSERT INTO task (name, schedule, schedule_type, exec, params, tags, retry, misfire, sla_start_s, sla_finish_s)
       SELECT CONCAT('chunk-', n), '{"type":"none"}', 'none', '{}', '{}', '[]', '{}', '{}', 60, IF(n % 3 = 0, 3600, NULL) FROM ${NUMBERS} x WHERE n < 1200`,
    );
    try {
      // Every 10th task: one instance about two hours late, their slots interleaved across the tasks;
      // every 10th + 5: one 5 s after its slot, within both limits.
      await db.pool.query(
        `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params)
         SELECT id, name, slot, CURDATE(), 'schedule', 'PENDING', slot, '{}'
           FROM (SELECT id, name, IF(n % 10 = 0, NOW(3) - INTERVAL 2 HOUR + INTERVAL (n * 7919) % 1200 SECOND, NOW(3) - INTERVAL 5 SECOND) AS slot
                   FROM (SELECT id, name, CAST(SUBSTRING(name, 7) AS UNSIGNED) AS n FROM task WHERE name LIKE 'chunk-%') t
                  WHERE n % 10 IN (0, 5)) s`,
      );
      const [late] = await db.pool.query<RowDataPacket[]>(
        "SELECT id, task_name FROM task_instance WHERE task_name LIKE 'chunk-%' AND expected_time < NOW(3) - INTERVAL 1 HOUR ORDER BY expected_time, id",
      );
      expect(late).toHaveLength(120);
      const sent: Array<{ sql: string; values: unknown[] }> = [];
      const all = await scanSlaMissed(recording(db.pool, sent), 1_000);
      expect(all.map((m) => [m.id, m.taskName, m.miss, m.withinSeconds])).toEqual(late.map((r) => [String(r['id']), String(r['task_name']), 'START', 60]));
      // The task names, then their instances: ceil(1,200 / 500) statements, each within the chunk, together every name once.
      const chunks = sent.slice(1).map((s) => s.values[0] as string[]);
      expect(chunks.map((names) => names.length)).toEqual([NAMES_PER_IN_LIST, NAMES_PER_IN_LIST, 1_200 - 2 * NAMES_PER_IN_LIST]);
      expect(new Set(chunks.flat()).size).toBe(1_200);
      for (const names of chunks) expect(all.some((m) => names.includes(m.taskName))).toBe(true);

      // A limit below what is late: the earliest slots over all chunks, as one statement would give them.
      const first = await scanSlaMissed(db.pool, 7);
      expect(first.map((m) => m.id)).toEqual(late.slice(0, 7).map((r) => String(r['id'])));
      expect(new Set(first.map((m) => chunks.findIndex((names) => names.includes(m.taskName)))).size).toBeGreaterThan(1);
    } finally {
      await db.pool.query("DELETE FROM task_instance WHERE task_name LIKE 'chunk-%'");
      await db.pool.query("DELETE FROM task WHERE name LIKE 'chunk-%'");
    }
  });

  it("the scheduler's slot check: a range of uk_instance_slot per task's window, not the task's whole history", async () => {
    const hourAgo = new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z').getTime() - 3_600_000; // the history ends at midnight
    const untilMs = hourAgo + 3_600_000;
    // Five tasks of one schedule share their bounds (one IN list); three have bounds of their own.
    const shared = ['hist-1', 'hist-2', 'hist-3', 'hist-4', 'hist-5'].map((taskName) => ({ taskName, afterMs: hourAgo, untilMs }));
    const own = ['hist-6', 'hist-old', 'hist-idle'].map((taskName, k) => ({ taskName, afterMs: hourAgo - (k + 1) * 60_000, untilMs }));
    const ranges = [...shared, ...own, { taskName: 'hist-7', afterMs: untilMs, untilMs }]; // an empty range reads nothing
    const plans: PlanRow[][] = [];
    const found = await existingSlotTimes(explaining(db.pool, plans), ranges);
    expect(plans).toHaveLength(2);
    for (const plan of plans) {
      const reads = plan.filter((p) => p.table === 'task_instance');
      expect(reads).toEqual([expect.objectContaining({ key: 'uk_instance_slot', type: 'range' })]);
      expect(reads[0]?.extra).not.toContain('filesort');
    }
    expect(found.has('hist-7')).toBe(false);
    for (const r of [...shared, ...own]) {
      const [rows] = await db.pool.query<RowDataPacket[]>(
        'SELECT expected_time FROM task_instance WHERE task_name = ? AND expected_time > ? AND expected_time <= ? ORDER BY expected_time',
        [r.taskName, new Date(r.afterMs), new Date(r.untilMs)],
      );
      expect(found.get(r.taskName) ?? [], r.taskName).toEqual(rows.map((x) => (x['expected_time'] as Date).getTime()));
    }
    expect(found.get('hist-1')?.length).toBeGreaterThan(0);
  });
});
