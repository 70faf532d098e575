/**
 * Issue #3: the scheduler alone. N tasks (6-field cron) due at the same second, fired by 1 and
 * then by 3 real scheduler processes (no broker, no worker). Reports fire lag (expected →
 * instance row created, database clock) p50/p99/max and the time until all N were committed
 * (polled: the first COUNT(*) that saw all N, so it includes the commit).
 *
 *   node bench/scenarios/ax-scheduler.mjs --tasks 10000 --schedulers 1 [--out f.json]
 */
import { createAxRound, cronAt, insertTasks, instanceRows } from '../lib/ax-stack.mjs';
import { args, log, runScenario, sleep } from '../lib/harness.mjs';
import { slotKey } from '../lib/keys.mjs';
import { exactlyOnce, summarize } from '../lib/stats.mjs';

const a = args();
const TASKS = Number(a.tasks ?? 10_000);
const SCHEDULERS = Number(a.schedulers ?? 1);
const WAIT_S = Number(a['wait-s'] ?? 30);

await runScenario(async () => {
  const round = await createAxRound('sched');
  const dueMs = Math.ceil((Date.now() + 8_000 + TASKS) / 1000) * 1000;
  const names = await insertTasks(round.db.pool, {
    count: TASKS,
    prefix: 'burst',
    schedule: { type: 'cron', expr: cronAt(dueMs), timezone: 'UTC' },
    url: 'http://127.0.0.1:9/unused',
  });
  await round.start('scheduler', SCHEDULERS);
  const readyBeforeDueMs = dueMs - Date.now();
  log(`${TASKS} tasks due at ${new Date(dueMs).toISOString()}, ${SCHEDULERS} scheduler(s) ready ${readyBeforeDueMs} ms before`);
  if (readyBeforeDueMs < 1_000) throw new Error(`schedulers became ready only ${readyBeforeDueMs} ms before the fire time`);
  await sleep(dueMs - Date.now());
  let allCommittedPolledMs = null;
  while (Date.now() < dueMs + WAIT_S * 1_000) {
    const [r] = await round.db.pool.query('SELECT COUNT(*) AS n FROM task_instance');
    if (Number(r[0].n) >= TASKS) {
      allCommittedPolledMs = Date.now() - dueMs;
      break;
    }
    await sleep(20);
  }
  await sleep(500);
  await round.stop(undefined, 10_000);
  const rows = await instanceRows(round.db.pool);
  const perSlot = new Map();
  for (const r of rows) {
    const k = slotKey(r.taskName, r.expectedMs, 1);
    perSlot.set(k, (perSlot.get(k) ?? 0) + 1);
  }
  const lags = rows.map((r) => r.fireLag);
  return {
    status: allCommittedPolledMs === null ? 'timeout' : 'ok',
    system: 'ax',
    tasks: TASKS,
    schedulers: SCHEDULERS,
    created: rows.length,
    fireLagMs: summarize(lags),
    lastCreatedMs: lags.length > 0 ? Math.max(...lags) : null,
    allCommittedPolledMs,
    instances: exactlyOnce(names.map((n) => slotKey(n, dueMs, 1)), perSlot),
  };
});
