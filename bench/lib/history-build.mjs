/**
 * The history of the "history at scale" scenario (#24): months of an ax database, built once
 * with bulk `INSERT … SELECT` from MariaDB's sequence tables (`seq_1_to_N`) and kept between
 * runs (bench/scenarios/ax-history.mjs keeps the server's folder).
 *
 * What it holds, for `{ tasks, everyMinute, instances, days }` (defaults 100,000 / 10,000 /
 * 5,000,000 / 90):
 *   - `tasks` task definitions in 10 teams (`team-0` … `team-9`): the first `everyMinute` fire
 *     every minute, the others once a day at minute `i mod 1440`; all enabled, no-op HTTP calls;
 *   - `instances` final instances, one slot every `days × 86,400 s / instances` up to now,
 *     spread over the tasks in turn: 95 % SUCCESS, 4 % FAILED, 1 % CANCELED; each with one
 *     execution, three events (CREATED, DISPATCHED, SUCCEEDED|FAILED|CANCELED), one log chunk
 *     and its end record;
 *   - 200,000 audit entries over the same days; chains of 5 tasks linked by edges (2,000 edges).
 *
 * Secondary indexes are dropped while rows go in and rebuilt after, each with the definition
 * the migrations gave it (`SHOW CREATE TABLE`): one sorted index build instead of millions of
 * random B-tree inserts into a buffer pool smaller than the data. The parameters and the
 * build's figures are kept in `bench_meta.history`; a later run with the same parameters reuses
 * the database and only applies migrations added since (timed: what an index migration costs
 * on a big table).
 */
import { parseTaskDefinitionOrThrow } from '../../packages/core/dist/index.js';
import { createPool, loadMigrations, migrate, splitSqlStatements } from '../../packages/store/dist/index.js';
import { log } from './harness.mjs';

export const HISTORY_DB = 'ax_history';
const TEAMS = 10;
const AUDIT_ROWS = 200_000;
const CHAIN = 5;
const EDGES = 2_000;
/** Rows per INSERT … SELECT: one statement's undo stays small, and progress shows. */
const STEP = 500_000;
/** Tables whose secondary indexes are dropped during the load and rebuilt after. */
const BULK_TABLES = ['task_instance', 'task_execution', 'event_log', 'job_log_chunk', 'job_log_end', 'audit_log'];

/**
 * What the build writes, recorded with its parameters: a kept history of another format is
 * built again. 2: instances carry their team (before, `task_instance.team` was NULL and the
 * by-team read found nothing through the column).
 */
const BUILD_FORMAT = 2;

export const DEFAULT_HISTORY = { tasks: 100_000, everyMinute: 10_000, instances: 5_000_000, days: 90 };

const taskName = (expr) => `CONCAT('hist-', LPAD(${expr}, 6, '0'))`;
/** A deterministic UUID-shaped execution id of instance `n` (version nibble 7, variant 8). */
const executionIdSql = (expr) => `CONCAT(LPAD(HEX(${expr}), 8, '0'), '-0000-7000-8000-000000000000')`;

/** Where the rows lie in time: slot `s` (1-based) at `fromMs + (s - 1) * stepMs`. */
export function historyTimeline({ instances, days }, nowMs) {
  const spanMs = days * 86_400_000;
  const toMs = Math.floor(nowMs / 60_000) * 60_000 - 60_000;
  const stepMs = Math.max(1, Math.floor(spanMs / instances));
  return { fromMs: toMs - stepMs * (instances - 1), stepMs, toMs };
}

/** `{ clause, columns }` of one table's secondary index definitions, as SHOW CREATE TABLE prints them. */
async function secondaryIndexes(conn, table) {
  const [rows] = await conn.query(`SHOW CREATE TABLE \`${table}\``);
  const ddl = rows[0]['Create Table'];
  return ddl
    .split('\n')
    .map((l) => l.trim().replace(/,$/, ''))
    .filter((l) => /^(UNIQUE )?KEY `/.test(l))
    .map((l) => ({ name: /KEY `([^`]+)`/.exec(l)[1], definition: l }));
}

/**
 * Drops the secondary indexes of `tables` (for a bulk load into them) and returns the function
 * that adds them back, each with the definition `SHOW CREATE TABLE` gave it: one sorted index
 * build per table instead of a random B-tree insert per row.
 */
export async function dropSecondaryIndexes(conn, tables) {
  const dropped = {};
  for (const table of tables) {
    dropped[table] = await secondaryIndexes(conn, table);
    if (dropped[table].length > 0) await conn.query(`ALTER TABLE \`${table}\` ${dropped[table].map((i) => `DROP INDEX \`${i.name}\``).join(', ')}`);
  }
  return async () => {
    for (const table of tables) {
      if (dropped[table].length > 0) await conn.query(`ALTER TABLE \`${table}\` ${dropped[table].map((i) => `ADD ${i.definition}`).join(', ')}`);
    }
  };
}

async function timed(label, fn) {
  const t0 = Date.now();
  await fn();
  const s = (Date.now() - t0) / 1000;
  log(`history: ${label} in ${s.toFixed(1)} s`);
  return s;
}

/** INSERT … SELECT over `seq_<a>_to_<b>` in steps, `sqlOf(from, to)` giving each statement. */
async function inSteps(conn, total, sqlOf) {
  for (let a = 1; a <= total; a += STEP) {
    const b = Math.min(total, a + STEP - 1);
    await conn.query(sqlOf(a, b));
  }
}

/** The two definitions the tasks are made from (validated by @ax/core like any API write). */
function definitions() {
  const base = { exec: { type: 'http', url: 'http://127.0.0.1:9/history-noop' }, block: 'parallel', retry: { max: 0 }, timeoutSeconds: 30, misfire: { policy: 'skip' } };
  const minute = parseTaskDefinitionOrThrow({ name: 'hist-minute', schedule: { type: 'cron', expr: '0 * * * * *', timezone: 'UTC' }, ...base });
  const daily = parseTaskDefinitionOrThrow({ name: 'hist-daily', schedule: { type: 'cron', expr: '0 0 0 * * *', timezone: 'UTC' }, ...base });
  return { minute, daily };
}

/**
 * Inserts `instances` final instances with explicit ids 1…`instances` (into tables without
 * them: the ids and execution ids are derived from the slot number), slot `s` at
 * `fromMs + (s - 1) × stepMs` and of task id `(s - 1) mod tasks + 1` (the tasks must have ids
 * 1…`tasks`), named by `nameOf(<SQL of the task number>)` (default `hist-<6 digits>`) and of its
 * task's team (as every insert path of ax writes `task_instance.team`, migration 0010): 95 %
 * SUCCESS, 4 % FAILED, 1 % CANCELED, each ended 40 ms to 5 s after its slot, with one execution,
 * three events, one log chunk and its end record. The connection's session time zone must be
 * UTC. Returns the seconds of each table's load.
 */
export async function insertFinalInstances(conn, { instances, tasks, fromMs, stepMs, nameOf = taskName }) {
  const from = new Date(fromMs).toISOString().replace('T', ' ').replace('Z', '');
  const at = (s) => `TIMESTAMPADD(MICROSECOND, (${s} - 1) * ${stepMs * 1000}, '${from}')`;
  const figures = {};
  const state = (s) => `CASE WHEN ${s} % 100 < 95 THEN 'SUCCESS' WHEN ${s} % 100 < 99 THEN 'FAILED' ELSE 'CANCELED' END`;
  const taskNo = (s) => `((${s} - 1) % ${tasks} + 1)`;
  figures.instances = await timed(`${instances} instances`, () =>
    inSteps(conn, instances, (a, b) => `INSERT INTO task_instance (id, task_id, task_name, team, expected_time, run_no, biz_date, \`trigger\`, state, reason, attempt, max_attempts,
         due_at, params, priority, worker_id, dispatch_count, current_execution_id, created_at, updated_at, started_at, ended_at)
       SELECT seq, ${taskNo('seq')}, ${nameOf(taskNo('seq'))}, (SELECT t.team FROM task t WHERE t.id = ${taskNo('seq')}), ${at('seq')}, 1, DATE(${at('seq')}), IF(seq % 50 = 0, 'manual', 'schedule'),
              ${state('seq')}, CASE WHEN seq % 100 BETWEEN 95 AND 98 THEN 'EXIT_CODE' WHEN seq % 100 = 99 THEN 'CANCELED_BY_USER' END, 1, 1,
              ${at('seq')}, '{}', 5, CONCAT('hist-w', seq % 8), 1, ${executionIdSql('seq')},
              TIMESTAMPADD(MICROSECOND, 4000, ${at('seq')}), TIMESTAMPADD(MICROSECOND, 40000 + (seq % 5000) * 1000, ${at('seq')}),
              TIMESTAMPADD(MICROSECOND, 20000, ${at('seq')}), TIMESTAMPADD(MICROSECOND, 40000 + (seq % 5000) * 1000, ${at('seq')})
         FROM seq_${a}_to_${b}`),
  );
  figures.executions = await timed(`${instances} executions`, () =>
    inSteps(conn, instances, (a, b) => `INSERT INTO task_execution (id, execution_id, instance_id, attempt, run_no, worker_id, state, reason, dispatched_at, acked_at, started_at, ended_at, exit_code, created_at)
       SELECT seq, ${executionIdSql('seq')}, seq, 1, 1, CONCAT('hist-w', seq % 8), ${state('seq')},
              CASE WHEN seq % 100 BETWEEN 95 AND 98 THEN 'EXIT_CODE' WHEN seq % 100 = 99 THEN 'CANCELED_BY_USER' END,
              TIMESTAMPADD(MICROSECOND, 8000, ${at('seq')}), TIMESTAMPADD(MICROSECOND, 15000, ${at('seq')}), TIMESTAMPADD(MICROSECOND, 20000, ${at('seq')}),
              TIMESTAMPADD(MICROSECOND, 40000 + (seq % 5000) * 1000, ${at('seq')}), IF(seq % 100 BETWEEN 95 AND 98, 1, 0), TIMESTAMPADD(MICROSECOND, 8000, ${at('seq')})
         FROM seq_${a}_to_${b}`),
  );
  figures.events = await timed(`${instances * 3} events`, () =>
    inSteps(conn, instances, (a, b) => `INSERT INTO event_log (instance_id, execution_id, type, at, worker_id, message)
       SELECT seq, IF(k.seq = 1, NULL, ${executionIdSql('s.seq')}),
              CASE k.seq WHEN 1 THEN 'CREATED' WHEN 2 THEN 'DISPATCHED'
                   ELSE CASE WHEN s.seq % 100 < 95 THEN 'SUCCEEDED' WHEN s.seq % 100 < 99 THEN 'FAILED' ELSE 'CANCELED' END END,
              TIMESTAMPADD(MICROSECOND, k.seq * 10000, ${at('s.seq')}), IF(k.seq = 1, NULL, CONCAT('hist-w', s.seq % 8)), NULL
         FROM seq_${a}_to_${b} s CROSS JOIN seq_1_to_3 k`.replace('SELECT seq,', 'SELECT s.seq,')),
  );
  figures.logs = await timed(`${instances} log chunks and ends`, async () => {
    await inSteps(conn, instances, (a, b) => `INSERT INTO job_log_chunk (execution_id, stream, byte_offset, all_offset, byte_len, codec, data, created_at)
       SELECT ${executionIdSql('seq')}, 'stdout', 0, 0, 52, 'raw', 'POST http://127.0.0.1:9/history-noop\\nHTTP 200\\n{"ok":true}\\n', ${at('seq')} FROM seq_${a}_to_${b}`);
    await inSteps(conn, instances, (a, b) => `INSERT INTO job_log_end (execution_id, stdout_bytes, stderr_bytes, truncated, created_at)
       SELECT ${executionIdSql('seq')}, 52, 0, 0, ${at('seq')} FROM seq_${a}_to_${b}`);
  });
  return figures;
}

async function loadRows(conn, p, nowMs) {
  const { fromMs, stepMs } = historyTimeline(p, nowMs);
  const from = new Date(fromMs).toISOString().replace('T', ' ').replace('Z', '');
  const { minute, daily } = definitions();
  const figures = {};
  const teams = Array.from({ length: TEAMS }, (_, i) => [`team-${i}`, `history team ${i}`]);
  await conn.query('INSERT INTO team (name, description) VALUES ?', [teams]);

  figures.tasks = await timed(`${p.tasks} tasks`, () =>
    conn.query(
      `INSERT INTO task (name, team, description, schedule, schedule_type, timezone, exec, params, tags, priority, timeout_s, retry, misfire, block_strategy, route, enabled)
       SELECT ${taskName('seq')}, CONCAT('team-', seq % ${TEAMS}), CONCAT('history task ', seq, IF(seq % 7 = 0, ' nightly export', ' report')),
              IF(seq <= ?, ?, JSON_SET(?, '$.expr', CONCAT('0 ', seq % 60, ' ', (seq DIV 60) % 24, ' * * *'))),
              'cron', 'UTC', ?, '{}', '[]', 5, 30, ?, ?, 'parallel', 'load', 1
         FROM seq_1_to_${p.tasks}`,
      [p.everyMinute, JSON.stringify(minute.schedule), JSON.stringify(daily.schedule), JSON.stringify(minute.exec), JSON.stringify(minute.retry), JSON.stringify(minute.misfire)],
    ),
  );
  const [[ids]] = await conn.query('SELECT MIN(id) AS lo, MAX(id) AS hi FROM task');
  if (Number(ids.lo) !== 1 || Number(ids.hi) !== p.tasks) throw new Error(`task ids ${ids.lo}..${ids.hi}: the build needs a fresh database`);

  Object.assign(figures, await insertFinalInstances(conn, { instances: p.instances, tasks: p.tasks, fromMs, stepMs }));
  const auditStepMs = Math.floor((p.days * 86_400_000) / AUDIT_ROWS);
  figures.audit = await timed(`${AUDIT_ROWS} audit entries`, () =>
    conn.query(
      `INSERT INTO audit_log (at, actor, actor_token_id, action, target, team, reason, before_json, after_json)
       SELECT TIMESTAMPADD(MICROSECOND, (seq - 1) * ${auditStepMs * 1000}, '${from}'), CONCAT('user-', seq % 20), NULL,
              ELT(1 + seq % 4, 'task.update', 'task.trigger', 'rerun.create', 'task.disable'), ${taskName(`(seq % ${p.tasks}) + 1`)},
              CONCAT('team-', ((seq % ${p.tasks}) + 1) % ${TEAMS}), NULL, NULL, NULL
         FROM seq_1_to_${AUDIT_ROWS}`,
    ),
  );
  // Chains of CHAIN tasks among the daily ones: parent i → child i+1 inside each chain.
  const chains = Math.min(EDGES / (CHAIN - 1), Math.floor((p.tasks - p.everyMinute) / CHAIN));
  await conn.query(
    `INSERT INTO task_edge (parent_task, child_task, rule)
     SELECT ${taskName(`${p.everyMinute} + c.seq * ${CHAIN} + k.seq`)}, ${taskName(`${p.everyMinute} + c.seq * ${CHAIN} + k.seq + 1`)}, 'ALL_SUCCESS'
       FROM seq_0_to_${chains - 1} c CROSS JOIN seq_1_to_${CHAIN - 1} k`,
  );
  await conn.query('UPDATE dag_lock SET dag_version = dag_version + 1 WHERE id = 1');
  return figures;
}

/**
 * Task search's substring index (migration 0009) for the tasks loaded in bulk after the
 * migrations ran: that migration's own statements once more (they fill it from the task table,
 * and re-running them is harmless), so the bench and an upgraded database get the same rows.
 */
async function fillTaskTextIndex(conn) {
  const { sql } = (await loadMigrations()).find((m) => m.name === 'task_text_search');
  for (const statement of splitSqlStatements(sql)) await conn.query(statement);
}

/**
 * Opens (building it when absent or of other parameters) the history database on the server
 * at `serverUrl` (`mysql://root@127.0.0.1:<port>`); returns `{ url, built, buildS, migrated, params }`.
 */
export async function ensureHistory(serverUrl, params = DEFAULT_HISTORY) {
  const admin = createPool(serverUrl, { connectionLimit: 1 });
  try {
    await admin.query('CREATE DATABASE IF NOT EXISTS bench_meta');
    await admin.query('CREATE TABLE IF NOT EXISTS bench_meta.history (id TINYINT PRIMARY KEY, params JSON NOT NULL, figures JSON NOT NULL, built_at DATETIME NOT NULL)');
    const [meta] = await admin.query('SELECT params, figures, built_at FROM bench_meta.history WHERE id = 1');
    const recorded = { ...params, format: BUILD_FORMAT };
    const same = meta.length > 0 && JSON.stringify(typeof meta[0].params === 'string' ? JSON.parse(meta[0].params) : meta[0].params) === JSON.stringify(recorded);
    const url = `${serverUrl}/${HISTORY_DB}`;
    if (same) {
      const pool = createPool(url, { connectionLimit: 1 });
      try {
        const t0 = Date.now();
        const result = await migrate(pool);
        const applied = result.applied.map((m) => m.fileName);
        const migrateS = (Date.now() - t0) / 1000;
        if (applied.length > 0) log(`history: migrations ${applied.join(', ')} applied to the kept history in ${migrateS.toFixed(1)} s`);
        const figures = typeof meta[0].figures === 'string' ? JSON.parse(meta[0].figures) : meta[0].figures;
        return { url, built: false, builtAt: meta[0].built_at, figures, migrated: { applied, seconds: migrateS }, params };
      } finally {
        await pool.end();
      }
    }
    log(`history: building ${JSON.stringify(params)} (once; kept for later runs)`);
    const t0 = Date.now();
    await admin.query(`DROP DATABASE IF EXISTS ${HISTORY_DB}`);
    await admin.query('DELETE FROM bench_meta.history');
    await admin.query(`CREATE DATABASE ${HISTORY_DB} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    const pool = createPool(url, { connectionLimit: 1 });
    try {
      await migrate(pool);
      const conn = await pool.getConnection();
      try {
        await conn.query("SET SESSION time_zone = '+00:00'");
        const rebuildIndexes = await dropSecondaryIndexes(conn, BULK_TABLES);
        const figures = await loadRows(conn, params, Date.now());
        figures.indexes = await timed('secondary indexes rebuilt', rebuildIndexes);
        figures.taskText = await timed('task search index filled', () => fillTaskTextIndex(conn));
        for (const table of ['task', ...BULK_TABLES]) await conn.query(`ANALYZE TABLE \`${table}\``);
        figures.totalS = (Date.now() - t0) / 1000;
        const [size] = await conn.query(
          'SELECT SUM(data_length + index_length) AS bytes FROM information_schema.tables WHERE table_schema = DATABASE()',
        );
        figures.bytes = Number(size[0].bytes);
        await admin.query('INSERT INTO bench_meta.history (id, params, figures, built_at) VALUES (1, ?, ?, UTC_TIMESTAMP())', [JSON.stringify(recorded), JSON.stringify(figures)]);
        log(`history: built in ${figures.totalS.toFixed(0)} s, ${(figures.bytes / 2 ** 30).toFixed(2)} GiB`);
        return { url, built: true, figures, migrated: { applied: [], seconds: 0 }, params };
      } finally {
        conn.release();
      }
    } finally {
      await pool.end();
    }
  } finally {
    await admin.end();
  }
}
