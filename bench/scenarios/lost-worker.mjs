/**
 * Lost-worker failover with the production lease timings (AX_LEASE_TTL_MS 15000, grace 10000,
 * heartbeat 5000: nothing shortened): a shell job runs on one of two workers; that worker is
 * killed with SIGKILL; measured is the time from the kill until the job's next execution has
 * started on the other worker (its ACK, `acked_at`: the worker ACKs as it starts the job; database clock, against the kill instant on the
 * same machine). A fresh worker replaces the victim for the next round. 1 broker, no scheduler
 * (the instances are inserted due now). Prints every round and the median (#23: ≤ 10 s).
 *
 *   node bench/scenarios/lost-worker.mjs [--rounds 5] [--out f.json]
 */
import { redisKeys } from '../../packages/kit/dist/index.js';
import { createAxRound, insertTaskDefinition } from '../lib/ax-stack.mjs';
import { args, log, pollUntil, runScenario, sleep } from '../lib/harness.mjs';

const a = args();
const ROUNDS = Number(a.rounds ?? 5);
const LEASE_TTL_MS = 15_000;
const TIMINGS = { AX_LEASE_TTL_MS: String(LEASE_TTL_MS), AX_LOST_WORKER_GRACE_MS: '10000', AX_HEARTBEAT_INTERVAL_MS: '5000', AX_WORKER_SLOTS: '16' };


await runScenario(async () => {
  const round = await createAxRound('lost');
  const pool = round.db.pool;
  const { id: taskId } = await insertTaskDefinition(pool, { name: 'lost-sleep', schedule: { type: 'none' }, exec: { type: 'shell', command: ['sleep', '60'] }, timeoutSeconds: 120, retry: { max: 0 } });
  await round.start('broker', 1, { extraEnv: TIMINGS });
  const brokerUpAt = Date.now();
  let next = 1;
  const workers = new Map();
  const startWorker = async () => {
    const id = `lost-w${next++}`;
    const [proc] = await round.start('worker', 1, { extraEnv: { ...TIMINGS, AX_WORKER_ID: id } });
    workers.set(round.workerId(id), proc); // the id task_execution.worker_id names
  };
  await startWorker();
  await startWorker();
  // A broker suspends loss decisions for one lease after it starts (R14).
  await sleep(Math.max(0, brokerUpAt + LEASE_TTL_MS + 1_000 - Date.now()));
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const [ins] = await pool.query(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority)
       VALUES (?, 'lost-sleep', NOW(3) + INTERVAL ? SECOND, CURDATE(), 'manual', 'PENDING', 1, 1, NOW(3), '{}', 5)`,
      [taskId, r],
    );
    const instanceId = ins.insertId;
    await round.redis.redis.publish(redisKeys(round.namespace).channels.instancesReady, '{}');
    const first = await pollUntil('attempt 1 running', 30_000, async () => {
      const [rows] = await pool.query(`SELECT worker_id FROM task_execution WHERE instance_id = ? AND state = 'RUNNING'`, [instanceId]);
      return rows[0]?.worker_id;
    });
    // Kill at a random point of the victim's 5 s heartbeat period, as a crash would.
    await sleep(Math.round(Math.random() * 5_000));
    const victim = workers.get(first);
    const [{ now: killedAtDb }] = (await pool.query(`SELECT NOW(3) AS now`))[0];
    process.kill(-victim.pgid, 'SIGKILL');
    workers.delete(first);
    const startedElsewhere = await pollUntil('the job started on the other worker', 60_000, async () => {
      const [rows] = await pool.query(
        `SELECT worker_id, TIMESTAMPDIFF(MICROSECOND, ?, acked_at) AS us FROM task_execution
          WHERE instance_id = ? AND worker_id <> ? AND acked_at IS NOT NULL`,
        [killedAtDb, instanceId, first],
      );
      return rows[0];
    });
    const [lost] = await pool.query(`SELECT message FROM event_log WHERE instance_id = ? AND type = 'LOST_WORKER'`, [instanceId]);
    const failoverMs = Math.round(Number(startedElsewhere.us) / 1000);
    log(`round ${r + 1}: ${first} killed; started on ${startedElsewhere.worker_id} after ${failoverMs} ms (${lost[0]?.message ?? 'no LOST_WORKER event'})`);
    rounds.push({ victim: first, survivor: startedElsewhere.worker_id, failoverMs, lostEvent: lost[0]?.message ?? null });
    // Out of the way (the survivor's `sleep` goes on in one of its 16 slots and is fenced when it ends).
    await pool.query(`UPDATE task_instance SET state = 'CANCELED' WHERE id = ?`, [instanceId]);
    await startWorker();
    await sleep(1_000);
  }
  const sorted = rounds.map((x) => x.failoverMs).sort((x, y) => x - y);
  const medianMs = sorted[Math.floor(sorted.length / 2)];
  log(`failover after kill -9: median ${medianMs} ms of ${sorted.length} (${sorted.join(', ')} ms); lease ${LEASE_TTL_MS} ms, heartbeat 5000 ms`);
  return { status: 'ok', rounds, medianMs, timings: TIMINGS };
});
