/**
 * Timers that keep their word (#22): how late retries and ACK-timeout re-routes happen, on an
 * otherwise idle stack with the default timings (AX_TIMERS_POLL_MS 1000, ACK timeout 5 s +
 * grace 3 s). 1 broker, no scheduler (instances are inserted due now).
 *
 * - **Retries**: `--retries` instances of an HTTP task with retry {max 2, backoffSeconds 1,
 *   factor 2, jitterSeconds 0} against an endpoint that answers 500 to the first two calls of a
 *   run and 200 to the third. Lateness = the next attempt's `dispatched_at` − the retry's due
 *   time (its RETRY_SCHEDULED event + the delay), database clock; and, as the user sees it at
 *   the endpoint, the gap from a failed answer to the next call minus the backoff.
 * - **Re-routes**: `--reroute-rounds` rounds; in each a worker that drops its dispatches
 *   (dropping-worker.mjs: alive, heartbeating, consuming, never ACKing) joins a real one, and
 *   `--reroute-instances` instances are inserted; those dispatched to it are re-routed when
 *   their ACK deadline + grace passes (its registry entry proves it does not hold them).
 *   Lateness = the ACK_TIMEOUT event's time − (its `ackDeadline` + grace). Until 16fd0e5 (#23)
 *   a SIGSTOPped worker served; now the broker rightly waits for a frozen worker's lease.
 *
 * Goal (#22): retry lateness p99 ≤ 100 ms; re-routes ≤ 500 ms after the deadline + grace.
 *
 *   node bench/scenarios/timers.mjs [--retries 30] [--reroute-rounds 3] [--reroute-instances 16] [--out f.json]
 */
import { createServer } from 'node:http';
import { redisKeys } from '../../packages/kit/dist/index.js';
import { createAxRound, insertTaskDefinition } from '../lib/ax-stack.mjs';
import { startDroppingWorker } from '../lib/dropping-worker.mjs';
import { args, log, pollUntil, runScenario, sleep } from '../lib/harness.mjs';
import { summarize } from '../lib/stats.mjs';

const a = args();
const RETRIES = Number(a.retries ?? 30);
const REROUTE_ROUNDS = Number(a['reroute-rounds'] ?? 3);
const REROUTE_INSTANCES = Number(a['reroute-instances'] ?? 16);
const ACK_GRACE_MS = 3_000;
const BACKOFF_MS = [1_000, 2_000];
/** Default timings: nothing shortened, the bench's dispatch tuning off. */
const TIMINGS = { AX_TIMERS_POLL_MS: '1000', AX_DISPATCH_POLL_MS: '500', AX_DISPATCH_BATCH: '200', AX_WORKER_SLOTS: '64' };


/** The endpoint: on /flaky, per Idempotency-Key (one per run, the same for its retries), fails the first two calls; /ok always answers 200. */
async function startFlakyEndpoint() {
  const calls = new Map();
  const server = createServer((req, res) => {
    const arrivedAtMs = Date.now();
    const key = String(req.headers['idempotency-key'] ?? '?');
    req.resume();
    req.on('end', () => {
      const list = calls.get(key) ?? [];
      calls.set(key, list);
      const entry = { arrivedAtMs, answeredAtMs: 0 };
      list.push(entry);
      const fail = (req.url ?? '').startsWith('/flaky') && list.length <= 2;
      const body = fail ? '{"success":false,"error":"flaky"}' : '{"success":true}';
      res.writeHead(fail ? 500 : 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body, () => {
        entry.answeredAtMs = Date.now();
      });
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/flaky`,
    calls,
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    }),
  };
}


/** A manual HTTP task for the `timers` workers. */
const taskInput = (name, exec, retry) => ({ name, schedule: { type: 'none' }, exec, tags: ['timers'], timeoutSeconds: 30, retry, block: 'parallel' });

/** `count` instances due now, their slots a second apart from `slotBaseS` (distinct slots). */
async function insertInstances(pool, task, count, maxAttempts, slotBaseS) {
  const rows = Array.from({ length: count }, (_, i) => [task.id, task.def.name, slotBaseS + i, maxAttempts]);
  for (const [taskId, name, s, max] of rows) {
    await pool.query(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority)
       VALUES (?, ?, FROM_UNIXTIME(?), CURDATE(), 'manual', 'PENDING', 1, ?, NOW(3), '{}', 5)`,
      [taskId, name, s, max],
    );
  }
}

await runScenario(async () => {
  const round = await createAxRound('timers');
  const pool = round.db.pool;
  const endpoint = await startFlakyEndpoint();
  const ready = () => round.redis.redis.publish(redisKeys(round.namespace).channels.instancesReady, '{}');
  try {
    await round.start('broker', 1, { extraEnv: TIMINGS });
    await round.start('worker', 1, { extraEnv: { ...TIMINGS, AX_WORKER_ID: 'timers-live', AX_WORKER_TAGS: 'timers' } });

    // --- retries ------------------------------------------------------------------------
    const flaky = await insertTaskDefinition(pool, taskInput('timers-retry', { type: 'http', url: endpoint.url }, { max: 2, backoffSeconds: 1, factor: 2, jitterSeconds: 0 }));
    const baseS = Math.floor(Date.now() / 1000) - 86_400;
    // In three waves 700 ms apart, so the retries do not all fall due in the same millisecond.
    for (let w = 0; w < 3; w++) {
      await insertInstances(pool, flaky, Math.ceil(RETRIES / 3), 3, baseS + w * 1_000);
      await ready();
      await sleep(700);
    }
    await pollUntil('every retried instance SUCCESS', 60_000, async () => {
      const [rows] = await pool.query(`SELECT COUNT(*) AS n FROM task_instance WHERE task_name = 'timers-retry' AND state IN ('SUCCESS', 'FAILED')`);
      return Number(rows[0].n) >= 3 * Math.ceil(RETRIES / 3);
    });
    const [late] = await pool.query(
      `SELECT TIMESTAMPDIFF(MICROSECOND, ev.at + INTERVAL CAST(JSON_EXTRACT(ev.data, '$.delayMs') AS UNSIGNED) * 1000 MICROSECOND, ex.dispatched_at) / 1000 AS lateMs
         FROM event_log ev
         JOIN task_execution ex ON ex.instance_id = ev.instance_id AND ex.attempt = CAST(JSON_EXTRACT(ev.data, '$.nextAttempt') AS UNSIGNED)
         JOIN task_instance i ON i.id = ev.instance_id
        WHERE ev.type = 'RETRY_SCHEDULED' AND i.task_name = 'timers-retry'`,
    );
    const retryLatenessMs = summarize(late.map((r) => Number(r.lateMs)));
    const overBackoff = [];
    for (const list of endpoint.calls.values()) {
      for (let k = 1; k < list.length && k <= BACKOFF_MS.length; k++) overBackoff.push(list[k].arrivedAtMs - list[k - 1].answeredAtMs - BACKOFF_MS[k - 1]);
    }
    const retryGapOverBackoffMs = summarize(overBackoff);
    log(`retries: ${retryLatenessMs.n} retries; dispatched after due ms p50 ${retryLatenessMs.p50} / p99 ${retryLatenessMs.p99} / max ${retryLatenessMs.max}; at the endpoint the gap exceeded the backoff by p50 ${retryGapOverBackoffMs.p50} / p99 ${retryGapOverBackoffMs.p99} ms`);

    // --- re-routes ----------------------------------------------------------------------
    const quick = await insertTaskDefinition(pool, taskInput('timers-reroute', { type: 'http', url: endpoint.url.replace('/flaky', '/ok') }, { max: 0 }));
    const rerouteLate = [];
    let rerouted = 0;
    let droppedDispatches = 0;
    for (let r = 0; r < REROUTE_ROUNDS; r++) {
      // A live worker that drops its dispatches (dropping-worker.mjs): its entry, refreshed every
      // 500 ms, never lists them, so at ack_deadline + 3 s the broker has its proof and re-routes.
      const dropper = await startDroppingWorker({ namespace: round.namespace, amqpUrl: round.env.AX_AMQP_URL, redis: round.redis.redis, workerId: `timers-dropper-${r + 1}`, tags: ['timers'] });
      try {
        await sleep(1_500); // registered and seen by the broker's routing cache
        const slotS = baseS + 10_000 + r * 1_000;
        await insertInstances(pool, quick, REROUTE_INSTANCES, 1, slotS);
        await ready();
        try {
          await pollUntil(`round ${r + 1} instances final`, 30_000, async () => {
            const [rows] = await pool.query(`SELECT COUNT(*) AS n FROM task_instance WHERE task_name = 'timers-reroute' AND expected_time >= FROM_UNIXTIME(?) AND state IN ('SUCCESS', 'FAILED')`, [slotS]);
            return Number(rows[0].n) >= REROUTE_INSTANCES;
          });
        } catch (error) {
          // What the instances are waiting for: their states and the events they have.
          const [rows] = await pool.query(
            `SELECT i.id, i.state, i.worker_id, GROUP_CONCAT(ev.type ORDER BY ev.id) AS events
               FROM task_instance i LEFT JOIN event_log ev ON ev.instance_id = i.id
              WHERE i.task_name = 'timers-reroute' AND i.expected_time >= FROM_UNIXTIME(?) GROUP BY i.id`,
            [slotS],
          );
          log(`round ${r + 1}: ${dropper.dropped} dispatch message(s) dropped; instances: ${JSON.stringify(rows)}`);
          log(JSON.stringify(round.outputTail(), null, 1));
          throw error;
        }
        droppedDispatches += dropper.dropped;
      } finally {
        await dropper.stop();
      }
    }
    const [acks] = await pool.query(
      `SELECT TIMESTAMPDIFF(MICROSECOND, JSON_UNQUOTE(JSON_EXTRACT(ev.data, '$.ackDeadline')), ev.at) / 1000 AS afterMs
         FROM event_log ev JOIN task_instance i ON i.id = ev.instance_id
        WHERE ev.type = 'ACK_TIMEOUT' AND i.task_name = 'timers-reroute' AND JSON_EXTRACT(ev.data, '$.ackDeadline') IS NOT NULL`,
    );
    for (const row of acks) {
      rerouted++;
      rerouteLate.push(Number(row.afterMs) - ACK_GRACE_MS);
    }
    const rerouteLatenessMs = summarize(rerouteLate);
    log(`re-routes: ${rerouted} found past ack_deadline + ${ACK_GRACE_MS} ms by p50 ${rerouteLatenessMs.p50} / p99 ${rerouteLatenessMs.p99} / max ${rerouteLatenessMs.max} ms`);
    const [states] = await pool.query(`SELECT state, COUNT(*) AS n FROM task_instance GROUP BY state`);
    return {
      status: 'ok',
      timings: TIMINGS,
      retryLatenessMs,
      retryGapOverBackoffMs,
      rerouteLatenessMs,
      rerouted,
      droppedDispatches,
      states: Object.fromEntries(states.map((s) => [s.state, Number(s.n)])),
    };
  } finally {
    await endpoint.close();
  }
});
