/**
 * Scheduler burst bench: 10,000 tasks due at the same second, fired by 1 and then by 3 real
 * scheduler processes. Reports the fire lag (expected time → instance commit, from
 * `task_instance.created_at` on the database clock) at p50/p99/max, and the time until all
 * 10,000 instances were committed.
 *
 * Plain Node script over the built output (no TypeScript at run time):
 *   pnpm build && node bench/scheduler-burst.mjs [tasks=10000]
 * Needs the local MariaDB/MySQL and Redis of the dev stack (AX_TEST_MYSQL_URL / AX_REDIS_URL
 * override them). Each round uses its own throw-away database and namespace.
 */
import {
  createTestDatabase,
  createTestRedis,
  startService,
  stopAllProcesses,
  uniqueNamespace,
} from '../packages/testing/dist/index.js';

const TASKS = Number(process.argv[2] ?? 10_000);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function insertTasks(pool, atIso) {
  const schedule = JSON.stringify({ type: 'once', at: atIso, timezone: 'UTC' });
  for (let i = 0; i < TASKS; i += 1_000) {
    const rows = [];
    for (let j = i; j < Math.min(TASKS, i + 1_000); j += 1) {
      rows.push([`burst-${j}`, schedule, 'once', 'UTC', '{"type":"shell","command":["true"]}', '{}', '[]',
        '{"max":0,"backoffSeconds":30,"factor":2,"jitterSeconds":10}', '{"policy":"fire_once"}', 'parallel']);
    }
    await pool.query(
      `INSERT INTO task (name, schedule, schedule_type, timezone, exec, params, tags, retry, misfire, block_strategy) VALUES ?`,
      [rows],
    );
  }
}

async function round(schedulers) {
  const db = await createTestDatabase();
  const namespace = uniqueNamespace('axbench');
  const redis = await createTestRedis(namespace);
  try {
    const dueMs = Math.ceil(Date.now() / 1000) * 1000 + 20_000;
    await insertTasks(db.pool, new Date(dueMs).toISOString());
    const procs = await Promise.all(
      Array.from({ length: schedulers }, (_, i) =>
        startService('scheduler', {
          name: `bench-scheduler-${i + 1}`,
          env: { AX_MYSQL_URL: db.url, AX_REDIS_URL: redis.url, AX_NAMESPACE: namespace, AX_LOG_LEVEL: 'warn' },
          readyTimeoutMs: 30_000,
        }),
      ),
    );
    const startedMs = Date.now();
    if (startedMs > dueMs - 5_000) throw new Error('schedulers started too late for the burst');
    let count = 0;
    while (Date.now() < dueMs + 60_000) {
      const [rows] = await db.pool.query('SELECT COUNT(*) AS n FROM task_instance');
      count = Number(rows[0].n);
      if (count >= TASKS) break;
      await sleep(200);
    }
    const [lags] = await db.pool.query(
      'SELECT TIMESTAMPDIFF(MICROSECOND, expected_time, created_at) / 1000 AS lag FROM task_instance ORDER BY lag',
    );
    const values = lags.map((r) => Number(r.lag));
    const at = (q) => values[Math.min(values.length - 1, Math.floor(q * values.length))] ?? NaN;
    const result = {
      schedulers,
      tasks: TASKS,
      created: values.length,
      p50Ms: Math.round(at(0.5)),
      p99Ms: Math.round(at(0.99)),
      allCommittedMs: Math.round(values[values.length - 1] ?? NaN),
    };
    await Promise.all(procs.map((p) => p.stop({ graceMs: 5_000 })));
    return result;
  } finally {
    await stopAllProcesses({ graceMs: 2_000 });
    await redis.cleanup();
    await db.drop();
  }
}

const results = [];
for (const n of [1, 3]) results.push(await round(n));
console.table(results);
