/**
 * The hardware's limits, probed with the same servers ax uses:
 * - RabbitMQ: persistent messages to a durable queue, published on a confirm channel (window of
 *   1,000 unconfirmed), then consumed with manual acks (prefetch 1,000), then both at once
 *   (the round trip every ax dispatch and result makes). Unique queue names, deleted after.
 * - MariaDB: batched INSERT (500 rows per statement) and batched UPDATE (`WHERE id IN (500 ids)`)
 *   into ax's own `task_instance` table (all its indexes), in a temporary database dropped after.
 *
 *   node bench/scenarios/limits.mjs [--messages 20000] [--rows 20000] [--out f.json]
 */
import { createRequire } from 'node:module';
import { createTestDatabase, uniqueNamespace } from '../../packages/testing/dist/index.js';
import { args, log, onCleanup, runScenario, track, untrack } from '../lib/harness.mjs';

const requireFromTesting = createRequire(new URL('../../packages/testing/package.json', import.meta.url));
const amqplib = requireFromTesting('amqplib');

const a = args();
const MESSAGES = Number(a.messages ?? 20_000);
const ROWS = Number(a.rows ?? 20_000);
const BATCH = 500;
const perS = (n, ms) => Math.round((n / ms) * 1000);

async function publishConfirmed(ch, queue, n, body) {
  const window = 1_000;
  let inFlight = [];
  for (let i = 0; i < n; i++) {
    inFlight.push(
      new Promise((resolve, reject) => {
        ch.sendToQueue(queue, body, { persistent: true }, (err) => (err ? reject(err) : resolve()));
      }),
    );
    if (inFlight.length >= window) {
      await Promise.all(inFlight);
      inFlight = [];
    }
  }
  await Promise.all(inFlight);
}

function consume(ch, queue, n) {
  return new Promise((resolve, reject) => {
    let got = 0;
    ch.prefetch(1_000)
      .then(() =>
        ch.consume(queue, (msg) => {
          if (msg === null) return;
          got += 1;
          ch.ack(msg);
          if (got === n) resolve();
        }),
      )
      .catch(reject);
  });
}

async function rabbit() {
  const ns = uniqueNamespace('axbenchmq');
  const conn = await amqplib.connect('amqp://guest:guest@127.0.0.1:5672');
  const queues = [`${ns}.publish`, `${ns}.roundtrip`];
  onCleanup(async () => {
    const ch = await conn.createChannel();
    for (const q of queues) await ch.deleteQueue(q);
    await conn.close();
  });
  const pub = await conn.createConfirmChannel();
  const sub = await conn.createChannel();
  // A message about the size of one ax dispatch item.
  const body = Buffer.alloc(600, 'x');
  for (const q of queues) await pub.assertQueue(q, { durable: true });

  let t = performance.now();
  await publishConfirmed(pub, queues[0], MESSAGES, body);
  const publishMs = performance.now() - t;
  t = performance.now();
  await consume(sub, queues[0], MESSAGES);
  const consumeMs = performance.now() - t;

  const sub2 = await conn.createChannel();
  t = performance.now();
  const consumed = consume(sub2, queues[1], MESSAGES);
  await publishConfirmed(pub, queues[1], MESSAGES, body);
  await consumed;
  const roundTripMs = performance.now() - t;
  return {
    messages: MESSAGES,
    bodyBytes: body.length,
    publishConfirmedPerS: perS(MESSAGES, publishMs),
    consumeAckPerS: perS(MESSAGES, consumeMs),
    roundTripPerS: perS(MESSAGES, roundTripMs),
  };
}

async function mariadb() {
  const db = await createTestDatabase({ poolOptions: { connectionLimit: 2 } });
  track('databases', db.name);
  onCleanup(async () => {
    await db.drop();
    untrack('databases', db.name);
  });
  const pool = db.pool;
  const base = Date.now();
  let t = performance.now();
  for (let i = 0; i < ROWS; i += BATCH) {
    const rows = [];
    for (let j = i; j < Math.min(ROWS, i + BATCH); j++) {
      const at = new Date(base + j);
      rows.push([1, `limit-${j % 1000}`, at, at.toISOString().slice(0, 10), 'schedule', 'PENDING', 1, 1, at, '{}', 5]);
    }
    await pool.query(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority) VALUES ?`,
      [rows],
    );
  }
  const insertMs = performance.now() - t;
  const [idRows] = await pool.query('SELECT id FROM task_instance ORDER BY id');
  const ids = idRows.map((r) => r.id);
  t = performance.now();
  for (let i = 0; i < ids.length; i += BATCH) {
    await pool.query(
      "UPDATE task_instance SET state = 'DISPATCHED', worker_id = 'w1', dispatch_count = dispatch_count + 1, ack_deadline = NOW(3) WHERE id IN (?) AND state = 'PENDING'",
      [ids.slice(i, i + BATCH)],
    );
  }
  const updateMs = performance.now() - t;
  return {
    rows: ROWS,
    batch: BATCH,
    table: 'task_instance (ax schema, all indexes)',
    batchedInsertRowsPerS: perS(ROWS, insertMs),
    batchedUpdateRowsPerS: perS(ROWS, updateMs),
  };
}

await runScenario(async () => {
  log(`RabbitMQ: ${MESSAGES} persistent confirmed messages`);
  const rabbitmq = await rabbit();
  log(`MariaDB: ${ROWS} rows in batches of ${BATCH}`);
  const mysql = await mariadb();
  return { status: 'ok', rabbitmq, mariadb: mysql };
});
