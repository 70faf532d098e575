/**
 * The scheduler's task cache (#24): it keeps only the scheduling fields, shares compiled
 * schedules that do not depend on a task's creation, reads the ids and versions of every task
 * and every reconcile row in keyset pages, and a resync never undoes what a `task-changed`
 * message loaded meanwhile. Real MariaDB and Redis, ManualClock.
 */
import type { RowDataPacket } from 'mysql2';
import type { Pool } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { getTask, replaceTask } from '@ax/store';
import { ManualClock } from '@ax/testing';
import { createHarness, type Harness } from '../test/harness.js';

/** More than one page of heads and of reconcile rows (5,000 each). */
const BULK = 6_001;
const T0 = Date.UTC(2026, 11, 4, 10, 0, 30);

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  await h.task({ name: 'pg-00000', schedule: { type: 'cron', expr: '0 2 * * *', timezone: 'UTC' }, block: 'parallel' }, T0 - 3_600_000);
  // Copies of that row, as many as a fleet: one statement.
  await h.db.pool.query(
    `INSERT INTO task (name, team, description, owner, schedule, schedule_type, timezone, exec, params, tags, priority, timeout_s, retry, misfire, block_strategy, route, enabled, created_at)
     SELECT CONCAT('pg-', LPAD(seq, 5, '0')), team, description, owner, schedule, schedule_type, timezone, exec, params, tags, priority, timeout_s, retry, misfire, block_strategy, route, enabled, created_at
       FROM seq_1_to_${BULK - 1} CROSS JOIN task WHERE task.name = 'pg-00000'`,
  );
});
afterAll(async () => {
  await h.close();
});

/**
 * The pool, running `hooks.before(sql)` ahead of each statement and `hooks.after(sql)` once it
 * has answered and before its caller sees the answer (both awaited: they may act in between).
 */
function hookedPool(pool: Pool, hooks: { before?: (sql: string) => Promise<void>; after?: (sql: string) => Promise<void> }): Pool {
  return new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop !== 'query') {
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      }
      return async (sql: unknown, values?: unknown) => {
        const text = typeof sql === 'string' ? sql : '';
        await hooks.before?.(text);
        const answer = await target.query(sql as string, values as unknown[]);
        await hooks.after?.(text);
        return answer;
      };
    },
  });
}

async function taskCount(): Promise<number> {
  const [[row]] = await h.db.pool.query<Array<RowDataPacket & { n: number }>>('SELECT COUNT(*) AS n FROM task');
  return Number(row?.n);
}

describe('task cache', () => {
  it('holds every task read over several pages, with the scheduling fields only and one compiled schedule per cron schedule', async () => {
    const engine = h.engine(new ManualClock(T0), {}, 'tc-pages');
    await engine.reloadAll();
    const cache = engine.context.cache;
    expect(cache.size).toBe(BULK);
    const first = cache.get('pg-00000');
    const last = cache.get(`pg-${String(BULK - 1).padStart(5, '0')}`);
    expect(first?.definition).not.toHaveProperty('exec');
    expect(last?.definition.schedule).toBe(first?.definition.schedule);
    expect(last?.compiled).toBe(first?.compiled);
    expect(last?.compiled?.nextAfter(T0)).toBe(Date.UTC(2026, 11, 5, 2, 0, 0));
  });

  it('gives each fixed-rate task the grid of its own creation', async () => {
    const engine = h.engine(new ManualClock(T0), {}, 'tc-grid');
    await h.task({ name: 'tc-rate-a', schedule: { type: 'fixed_rate', everySeconds: 60 } }, T0 - 60_000 - 7_000);
    await h.task({ name: 'tc-rate-b', schedule: { type: 'fixed_rate', everySeconds: 60 } }, T0 - 60_000 - 21_000);
    await engine.reloadAll();
    const a = engine.context.cache.get('tc-rate-a');
    const b = engine.context.cache.get('tc-rate-b');
    expect(a?.definition.schedule).toBe(b?.definition.schedule);
    expect(a?.compiled?.nextAfter(T0)).toBe(T0 + 53_000);
    expect(b?.compiled?.nextAfter(T0)).toBe(T0 + 39_000);
  });

  it('reconciles every row of every page: each quiet task gets its next fire', async () => {
    const engine = h.engine(new ManualClock(T0), { misfireThresholdMs: 5_000 }, 'tc-reconcile');
    await h.db.pool.query("UPDATE task SET last_fire_time = ?, next_fire_time = NULL WHERE name LIKE 'pg-%'", [new Date(T0 - 1_000)]);
    await engine.refill();
    const [[row]] = await h.db.pool.query<Array<RowDataPacket & { n: number; right: number }>>(
      "SELECT COUNT(*) AS n, SUM(next_fire_time = '2026-12-05 02:00:00') AS `right` FROM task WHERE name LIKE 'pg-%'",
    );
    expect(Number(row?.n)).toBe(BULK);
    expect(Number(row?.right)).toBe(BULK);
  });

  it('keeps a task that a task-changed message loaded while a resync read pages from before its creation', async () => {
    let acted = false;
    const pool = hookedPool(h.db.pool, {
      before: async (sql) => {
        // The second page of heads: the first one (names up to pg-04999) was read before the task existed.
        if (acted || !sql.startsWith('SELECT id, name, version FROM task WHERE name > ?')) return;
        acted = true;
        await h.task({ name: 'pg-00000-new', schedule: { type: 'cron', expr: '0 3 * * *', timezone: 'UTC' } }, T0);
        await engine.reloadTask('pg-00000-new');
      },
    });
    // The hook runs during engine.reloadAll(), after this line.
    const engine = h.engine(new ManualClock(T0), {}, 'tc-race', pool);
    await engine.reloadAll();
    expect(acted).toBe(true);
    expect(engine.context.cache.get('pg-00000-new')?.version).toBe(1);
    expect(engine.context.cache.size).toBe(await taskCount());
  });

  it('keeps the newer version a task-changed message loaded while a resync applied the older row it had read', async () => {
    let armed = false;
    let acted = false;
    const pool = hookedPool(h.db.pool, {
      after: async (sql) => {
        // The resync's read of the changed row has answered (v2); v3 is written and loaded now.
        if (!armed || acted || !sql.includes('FROM task WHERE name IN (?)')) return;
        acted = true;
        const v2 = await getTask(h.db.pool, 'pg-00007');
        if (v2 === null) throw new Error('pg-00007 is missing');
        await replaceTask(h.db.pool, parseTaskDefinitionOrThrow({ ...v2.definition, jitterSeconds: 9 }), v2.version);
        await engine.reloadTask('pg-00007');
      },
    });
    const engine = h.engine(new ManualClock(T0), {}, 'tc-version', pool);
    await engine.reloadAll();
    const v1 = await getTask(h.db.pool, 'pg-00007');
    if (v1 === null) throw new Error('pg-00007 is missing');
    await replaceTask(h.db.pool, { ...v1.definition, jitterSeconds: 5 }, v1.version);
    armed = true;
    await engine.reloadAll();
    expect(acted).toBe(true);
    const cached = engine.context.cache.get('pg-00007');
    expect(cached?.version).toBe(v1.version + 2);
    expect(cached?.definition.jitterSeconds).toBe(9);
  });
});
