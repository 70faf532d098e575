/**
 * Shared set-up of the scheduler's in-process tests (not part of the build: only *.test.ts
 * import it). One database and one Redis namespace per test file.
 */
import type { RowDataPacket } from 'mysql2';
import type { Pool } from 'mysql2/promise';
import { parseTaskDefinitionOrThrow, type TaskDefinitionInput } from '@ax/core';
import { silentLogger } from '@ax/kit';
import { insertTask, type TaskRecord } from '@ax/store';
import { createTestDatabase, createTestRedis, uniqueNamespace, type ManualClock, type TestDatabase, type TestRedis } from '@ax/testing';
import type { Clock } from '@ax/core';
import { resolveSchedulerConfig, type SchedulerConfig } from '../src/config.js';
import { createSchedulerEngine, type SchedulerEngine } from '../src/engine.js';

export interface Harness {
  db: TestDatabase;
  redis: TestRedis;
  /** An engine on the test database; `pool` stands in for its pool (e.g. one that counts statements). */
  engine(clock: Clock, overrides?: Partial<SchedulerConfig>, id?: string, pool?: Pool): SchedulerEngine;
  task(input: Partial<TaskDefinitionInput> & { name: string }, createdAtMs: number): Promise<TaskRecord>;
  instances(taskName: string): Promise<Array<RowDataPacket & { id: string; expected_time: Date; state: string; biz_date: Date; trigger: string; reason: string | null }>>;
  close(): Promise<void>;
}

export async function createHarness(): Promise<Harness> {
  const db = await createTestDatabase();
  const namespace = uniqueNamespace('axsch');
  const redis = await createTestRedis(namespace);
  const logger = silentLogger();
  return {
    db,
    redis,
    engine: (clock, overrides = {}, id = 'test', pool = db.pool) =>
      createSchedulerEngine({
        pool,
        redis: redis.redis,
        clock,
        logger,
        // These tests drive historical ManualClock times, while withdrawing slots created ahead
        // of time (R3) compares with the database's real NOW(3): they create slots at their
        // time (precreateMs 0, a production setting too) unless a test asks otherwise.
        config: resolveSchedulerConfig({ namespace, schedulerId: id }, { precreateMs: 0, ...overrides }),
      }),
    task: (input, createdAtMs) =>
      insertTask(
        db.pool,
        parseTaskDefinitionOrThrow({ schedule: { type: 'cron', expr: '* * * * *' }, exec: { type: 'shell', command: ['true'] }, ...input }),
        { createdAt: new Date(createdAtMs) },
      ),
    instances: async (taskName) => {
      const [rows] = await db.pool.query<Array<RowDataPacket & { id: string; expected_time: Date; state: string; biz_date: Date; trigger: string; reason: string | null }>>(
        'SELECT id, expected_time, state, biz_date, `trigger`, reason FROM task_instance WHERE task_name = ? ORDER BY expected_time',
        [taskName],
      );
      return rows;
    },
    close: async () => {
      await redis.cleanup();
      await db.drop();
    },
  };
}

/** Advances `clock` to `untilMs` in steps, refilling and ticking at each. */
export async function drive(engine: SchedulerEngine, clock: ManualClock, untilMs: number, stepMs: number): Promise<void> {
  await engine.refill();
  await engine.tick();
  while (clock.nowMs() < untilMs) {
    clock.set(Math.min(untilMs, clock.nowMs() + stepMs));
    await engine.refill();
    await engine.tick();
  }
}

export const iso = (d: Date | number): string => new Date(d).toISOString();
