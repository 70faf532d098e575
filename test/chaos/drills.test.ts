/**
 * Fault drills (issue #10, docs/fault-drills.md): each drill builds its own world — private
 * MariaDB, Redis and RabbitMQ, 2 schedulers, 1–2 brokers, 2–3 workers (real processes from
 * `dist/`), 200 `http` tasks firing every 2 s into a sink in this process — breaks one thing
 * under load, and asserts that no slot due in its window was lost or run twice, and that the
 * recovery stayed under 5× its goal. Timings are shortened (see `TIMINGS` in stack.ts: lease
 * 5 s, heartbeat 1 s, lost-worker grace 2 s, fire lock 5 s, worker clock check 1 s).
 */
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RowDataPacket } from 'mysql2';
import os from 'node:os';
import { closeRedis, createLogger, createRedis, type Redis } from '@ax/kit';
import { assertNoLeftoverProcesses } from '@ax/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { ARTIFACTS_DIR, CEILING_S, expectDrillVerdict, GOAL_S, LOST_WORKER_CEILING_S, LOST_WORKER_GOAL_S, runDrill, type DrillResult, type DrillSpec } from './drill.js';
import { faketimeEnv, portRefuses, SINK_HOLD_MS, sleep, type Service, type Stack } from './stack.js';
import { drillTable, type DrillRow } from './stats.js';

const rows: DrillRow[] = [];
/** Per drill: the proof of the fault and the verdict's details, listed under the table. */
const notes: string[] = [];
const suiteStartedMs = Date.now();
/** No drill starts after this many seconds of the suite (normally all eight take 9 minutes). */
const SUITE_BUDGET_S = 13 * 60;

afterAll(() => {
  if (rows.length > 0) writeTable();
  assertNoLeftoverProcesses(); // every drill's world was stopped
});

function writeTable(): void {
  const table = drillTable(rows);
  const wall = Math.round((Date.now() - suiteStartedMs) / 1000);
  const text = `# Fault drills — ${new Date().toISOString()}\n\n${table}\n\nlost and doubled count slots; recovery in seconds (goal ${GOAL_S} s, asserted ceiling ${CEILING_S} s); drills ran ${wall} s.\n\n## Evidence and details\n\n${notes.join('\n\n')}\n`;
  writeFileSync(path.join(ARTIFACTS_DIR, 'results.md'), text);
  console.log(`\n${table}\n(written to ${path.join(ARTIFACTS_DIR, 'results.md')}; ${wall} s)\n`);
}

/** Runs the drill, records its row (also when its assertions fail), and asserts the verdict. */
async function drill(spec: DrillSpec): Promise<DrillResult> {
  let result: DrillResult;
  try {
    // The suite must stay within 15 minutes (CI): a drill that would start after 13 fails fast.
    const elapsedS = Math.round((Date.now() - suiteStartedMs) / 1000);
    if (elapsedS > SUITE_BUDGET_S) throw new Error(`the suite has run ${elapsedS} s (budget ${SUITE_BUDGET_S} s before a drill starts): not starting ${spec.title}`);
    result = await runDrill(spec);
  } catch (error) {
    const verified = (error as { drillRow?: DrillRow }).drillRow;
    rows.push(verified ?? { drill: spec.title, lost: 'error', doubled: 'error', callsResumeS: 'error', backlogGoneS: 'error', goal: spec.goal });
    throw error;
  }
  rows.push(result.row);
  notes.push([`### ${spec.title}`, '', ...result.fault.evidence.map((e) => `- fault: ${e}`), '', '```', result.details, '```'].join('\n'));
  expectDrillVerdict(result);
  return result;
}

/** SIGKILL and prove the process died of it. */
async function killHard(proc: Service): Promise<number> {
  const at = Date.now();
  proc.kill('SIGKILL');
  const exit = await proc.waitExit(10_000);
  if (exit.signal !== 'SIGKILL') throw new Error(`${proc.name} did not die of SIGKILL: ${JSON.stringify(exit)}`);
  if (proc.liveGroupMembers().length > 0) throw new Error(`${proc.name}: members of its group survived SIGKILL`);
  return at;
}

/** Local ports of the TCP connections `pid` holds to `serverPort` on this host (from /proc). */
function clientPortsOf(pid: number, serverPort: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m?.[1] !== undefined) inodes.add(m[1]);
    } catch {
      // closed while we looked
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      const local = f[1];
      const remote = f[2];
      const inode = f[9];
      if (local === undefined || remote === undefined || inode === undefined) continue;
      if (parseInt(remote.split(':')[1] ?? '', 16) === serverPort && inodes.has(inode)) ports.add(parseInt(local.split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

/** Due PENDING instances locked by someone else's transaction (a consistent read minus a SKIP LOCKED read). */
async function lockedDuePending(stack: Stack): Promise<number> {
  const conn = await stack.db.pool.getConnection();
  try {
    const [all] = await conn.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM task_instance WHERE state = 'PENDING' AND due_at <= NOW(3)`);
    await conn.query('START TRANSACTION');
    try {
      // Through the primary key: a broker's claim locks the clustered rows (`WHERE id IN (…) FOR
      // UPDATE`), which a covering read of the (state, due_at) index would never visit.
      const [free] = await conn.query<RowDataPacket[]>(
        `SELECT id FROM task_instance FORCE INDEX (PRIMARY) WHERE state = 'PENDING' AND due_at <= NOW(3) LOCK IN SHARE MODE SKIP LOCKED`,
      );
      return Math.max(0, Number(all[0]?.n ?? 0) - free.length);
    } finally {
      await conn.query('ROLLBACK');
    }
  } finally {
    conn.release();
  }
}

/**
 * Runs `fn` while a connection of the drill holds `LOCK TABLES <table> WRITE` (statements on the
 * table wait meanwhile); the table is unlocked after `fn`, also when it throws.
 */
async function withTableLocked<T>(stack: Stack, table: string, fn: () => Promise<T>): Promise<T> {
  const conn = await stack.db.pool.getConnection();
  try {
    await conn.query('SET SESSION lock_wait_timeout = 10');
    await conn.query(`LOCK TABLES ${table} WRITE`);
    try {
      return await fn();
    } finally {
      await conn.query('UNLOCK TABLES');
    }
  } finally {
    conn.release();
  }
}

/** The process state letter from /proc (`T` = stopped). */
function procState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '?';
}

/** Waits for a moment when `worker` has calls open at the sink (its jobs are running). */
async function whileRunning(stack: Stack, workerId: string, timeoutMs = 20_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Calls received in the last half of the sink's hold: they are still open a few ms later,
    // when the fault strikes (an older call may end in between and leave nothing interrupted).
    const now = Date.now();
    const open = stack.sink.calls.filter((c) => c.workerId === workerId && c.endedMs === null && now - c.receivedMs < SINK_HOLD_MS / 2).length;
    if (open >= 2) return open;
    if (Date.now() > deadline) throw new Error(`${workerId} never had jobs running at the sink`);
    await sleep(20);
  }
}

/** Waits for the next even second plus `offsetMs` (when a slot's 200 instances are being fired). */
async function atSlotBoundary(offsetMs: number): Promise<void> {
  const next = Math.ceil((Date.now() + 300 - offsetMs) / 2_000) * 2_000 + offsetMs;
  await sleep(next - Date.now());
}

async function eventCount(stack: Stack, type: string, where = '1=1', params: unknown[] = []): Promise<number> {
  const rows = await stack.query<RowDataPacket>(`SELECT COUNT(*) AS n FROM event_log WHERE type = ? AND ${where}`, [type, ...params]);
  return Number(rows[0]?.n ?? 0);
}

/** Runs `fn` with a client of the drill's Redis (closed after; the drill's keys are left alone). */
async function withRedis<T>(stack: Stack, fn: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = createRedis(stack.redis.url, { logger: createLogger({ service: 'chaos', level: 'silent' }), name: 'chaos-drill' });
  try {
    return await fn(redis);
  } finally {
    await closeRedis(redis);
  }
}

/** Fire locks (`<ns>:fire:*`) whose holder is the scheduler `<host>-<pid>`. */
async function fireLocksHeldBy(stack: Stack, pid: number): Promise<number> {
  const holder = `${os.hostname()}-${pid}`;
  return withRedis(stack, async (redis) => {
    let held = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${stack.namespace}:fire:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) held += (await redis.mget(...keys)).filter((v) => v === holder).length;
    } while (cursor !== '0');
    return held;
  });
}

/** The lifecycle events of one instance, one line each (for the drill log). */
async function timeline(stack: Stack, instanceId: string): Promise<string> {
  const events = await stack.query<RowDataPacket>('SELECT at, type, worker_id, message FROM event_log WHERE instance_id = ? ORDER BY id', [instanceId]);
  return events.map((e) => `    ${(e.at as Date).toISOString()} ${String(e.type)} ${String(e.worker_id ?? '-')} ${String(e.message ?? '')}`).join('\n');
}

/** Executions the brokers took away from `workerId` (LOST_WORKER or ACK_TIMEOUT events); logged by type. */
async function takenFrom(stack: Stack, workerId: string, log: (line: string) => void): Promise<number> {
  const lost = await eventCount(stack, 'LOST_WORKER', 'worker_id = ?', [workerId]);
  const ackTimeouts = await eventCount(stack, 'ACK_TIMEOUT', 'worker_id = ?', [workerId]);
  log(`taken from ${workerId}: LOST_WORKER ${lost}, ACK_TIMEOUT ${ackTimeouts}`);
  return lost + ackTimeouts;
}

const LOST_WORKER_GOAL = `lost worker's jobs elsewhere ≤ ${LOST_WORKER_GOAL_S} s (ceiling ${LOST_WORKER_CEILING_S} s)`;
const BACKLOG_GOAL = `backlog gone ≤ ${GOAL_S} s (ceiling ${CEILING_S} s)`;

describe('fault drills', () => {
  it('drill 1: kill -9 one of two schedulers', async () => {
    await drill({
      title: '1 kill -9 a scheduler',
      goal: BACKLOG_GOAL,
      async fault(stack) {
        // Kill the scheduler that is firing: the one holding the most fire locks of the last
        // slots (lock value = `<host>-<pid>`, TTL 5 s), at the moment it fires the next slot.
        const [a, b] = stack.schedulers as [Service, Service];
        await atSlotBoundary(-400);
        const [heldA, heldB] = await Promise.all([fireLocksHeldBy(stack, a.pid), fireLocksHeldBy(stack, b.pid)]);
        if (heldA + heldB === 0) throw new Error('neither scheduler holds a fire lock: nothing is firing');
        const [victim, survivor, held, other] = heldA >= heldB ? [a, b, heldA, heldB] : [b, a, heldB, heldA];
        await atSlotBoundary(20);
        const at = await killHard(victim);
        if (survivor.exitInfo) throw new Error('the other scheduler is not running');
        return {
          recoveryFromMs: at,
          from: 'kill',
          evidence: [`${victim.name} (pid ${victim.pid}), holding ${held} of the recent slots' fire locks (${survivor.name}: ${other}), died of SIGKILL 20 ms into a slot; ${survivor.name} runs on`],
        };
      },
    });
  });

  it('drill 2: kill -9 a worker while its jobs run', async () => {
    let victimId = '';
    let openAtKill: string[] = [];
    let firstInterrupted = '';
    await drill({
      title: '2 kill -9 a worker',
      goal: LOST_WORKER_GOAL,
      async fault(stack, log) {
        const victim = stack.workers[0] as Service;
        victimId = victim.name;
        const open = await whileRunning(stack, victimId);
        // The calls open right before the kill (no await between here and the signal).
        const before = stack.sink.calls.filter((c) => c.workerId === victimId && c.endedMs === null);
        const at = await killHard(victim);
        let interrupted = stack.sink.calls.filter((c) => c.workerId === victimId && c.receivedMs < at && (c.endedMs === null || c.endedMs >= at));
        if (interrupted.length === 0) {
          // Seen once in CI: every call open a moment before the kill was recorded as ended just
          // before it. They cannot have been answered (young calls, 200 ms hold): use them, and
          // keep the timings for whoever looks into it.
          log(`no call open at the kill by endedMs; ${before.length} open just before it (endedMs − kill: ${before.map((c) => (c.endedMs === null ? 'open' : String(c.endedMs - at))).join(', ')})`);
          interrupted = before;
        }
        openAtKill = interrupted.map((c) => `${c.taskName}@${c.expectedMs}`);
        firstInterrupted = interrupted[0]?.instanceId ?? '';
        return { recoveryFromMs: at, from: 'kill', evidence: [`${victimId} (pid ${victim.pid}) died of SIGKILL with ${open} jobs running at the sink`] };
      },
      async verify(stack, { fault, log }) {
        // Its interrupted jobs ran again on the other workers.
        const rerun = openAtKill.map((slot) => {
          const later = stack.sink.calls.filter((c) => `${c.taskName}@${c.expectedMs}` === slot && c.workerId !== victimId && c.receivedMs > fault.recoveryFromMs);
          return later.length === 0 ? null : Math.min(...later.map((c) => c.receivedMs)) - fault.recoveryFromMs;
        });
        log(`jobs running on ${victimId} at the kill: ${openAtKill.length}; ran again elsewhere after ${rerun.map((ms) => (ms === null ? 'never' : `${(ms / 1000).toFixed(1)} s`)).join(', ')}`);
        if (firstInterrupted !== '') log(`events of interrupted instance ${firstInterrupted}:\n${await timeline(stack, firstInterrupted)}`);
        expect(openAtKill.length).toBeGreaterThan(0);
        expect(rerun.every((ms) => ms !== null && ms <= LOST_WORKER_CEILING_S * 1000)).toBe(true);
        // The brokers took its work away: LOST_WORKER (ACKed: lease expired, entry gone) or
        // ACK_TIMEOUT (killed before its ACK left: a short job's ACK lingers 100 ms, R16).
        expect(await takenFrom(stack, victimId, log)).toBeGreaterThan(0);
      },
    });
  });

  it('drill 3: kill -9 a broker in the middle of a dispatch batch', async () => {
    await drill({
      title: '3 kill -9 a broker mid-batch',
      goal: BACKLOG_GOAL,
      async fault(stack) {
        // A dispatch batch is one claim transaction (`SELECT … WHERE state = 'PENDING' AND
        // due_at <= NOW(3) … FOR UPDATE SKIP LOCKED`, then `INSERT INTO task_execution`,
        // PENDING → DISPATCHED, events), then the publish. It lasts a few ms, so freezing the
        // brokers at random moments caught one only by chance (CI failed on 40 misses). Instead
        // the drill takes `LOCK TABLES task_execution WRITE` just before a slot falls due: the
        // broker whose turn it is claims the slot's rows and then waits at its INSERT — inside
        // its batch, rows locked, nothing committed — and is killed there with SIGKILL. The
        // table is unlocked after the kill; the server rolls the dead broker's transaction back.
        const brokers = stack.brokers.filter((b) => !b.exitInfo);
        const misses: string[] = [];
        for (let i = 0; i < 3; i++) {
          await atSlotBoundary(-100);
          const killed = await withTableLocked(stack, 'task_execution', async () => {
            const deadline = Date.now() + 5_000;
            while (Date.now() < deadline) {
              const waiting = await stack.query<RowDataPacket>(
                `SELECT t.trx_id AS id, p.HOST AS host, t.trx_rows_locked AS locked,
                        TIMESTAMPDIFF(MICROSECOND, t.trx_started, NOW(6)) DIV 1000 AS age_ms
                   FROM information_schema.PROCESSLIST p JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID
                  WHERE p.INFO LIKE 'INSERT INTO task_execution%' AND t.trx_rows_locked > 0`,
              );
              const held = waiting.length === 0 ? 0 : await lockedDuePending(stack);
              for (const r of waiting) {
                const victim = brokers.find((b) => clientPortsOf(b.pid, stack.mariadb.port).has(Number(String(r.host).split(':').pop())));
                if (victim === undefined || held === 0) continue;
                const at = await killHard(victim);
                return {
                  at,
                  victim,
                  line: `${victim.name} (pid ${victim.pid}) died of SIGKILL inside its dispatch transaction ${String(r.id)}, waiting at its INSERT INTO task_execution (open ${Number(r.age_ms)} ms, ${Number(r.locked)} rows locked; ${held} due PENDING instances locked), try ${i + 1}`,
                };
              }
              // INNODB_TRX is a cache refreshed only when it was last read over 100 ms ago: a
              // faster poll would keep reading the snapshot taken before the batch began.
              await sleep(250);
            }
            return undefined;
          });
          if (killed !== undefined) {
            if (brokers.every((b) => b.exitInfo)) throw new Error('no broker left running');
            return { recoveryFromMs: killed.at, from: 'kill', evidence: [killed.line, ...misses] };
          }
          misses.push(`try ${i + 1}: no broker reached its INSERT INTO task_execution with due rows locked within 5 s of a slot`);
        }
        throw new Error(`no broker was caught inside a dispatch transaction: ${misses.join('; ')}`);
      },
    });
  });

  it('drill 4: RabbitMQ down 60 s, then back', async () => {
    await drill({
      title: '4 RabbitMQ down 60 s',
      goal: BACKLOG_GOAL,
      async fault(stack) {
        const downAt = Date.now();
        await stack.rabbit.stop();
        if (!(await portRefuses(stack.rabbit.port))) throw new Error(`RabbitMQ port ${stack.rabbit.port} still accepts connections after stop`);
        await sleep(downAt + 60_000 - Date.now());
        const refusedAtEnd = await portRefuses(stack.rabbit.port);
        await stack.rabbit.start();
        const backAt = Date.now();
        return {
          recoveryFromMs: backAt,
          from: 'RabbitMQ back',
          evidence: [`port ${stack.rabbit.port} refused connections from the stop until ${Math.round((backAt - downAt) / 1000)} s later (refused at the end: ${refusedAtEnd})`],
        };
      },
    });
  });

  it('drill 5: MariaDB down 30 s, then back', async () => {
    await drill({
      title: '5 MariaDB down 30 s',
      goal: BACKLOG_GOAL,
      async fault(stack) {
        const downAt = Date.now();
        await stack.mariadb.kill('SIGKILL');
        if (!(await portRefuses(stack.mariadb.port))) throw new Error(`MariaDB port ${stack.mariadb.port} still accepts connections after SIGKILL`);
        await sleep(downAt + 30_000 - Date.now());
        const refusedAtEnd = await portRefuses(stack.mariadb.port);
        await stack.mariadb.start();
        const backAt = Date.now();
        return {
          recoveryFromMs: backAt,
          from: 'MariaDB back',
          evidence: [`mariadbd killed (SIGKILL); port ${stack.mariadb.port} refused connections for ${Math.round((backAt - downAt) / 1000)} s (refused at the end: ${refusedAtEnd})`],
        };
      },
    });
  });

  it('drill 6: Redis down 30 s, then back (empty)', async () => {
    await drill({
      title: '6 Redis down 30 s',
      goal: BACKLOG_GOAL,
      async fault(stack) {
        const downAt = Date.now();
        await stack.redis.kill('SIGKILL');
        if (!(await portRefuses(stack.redis.port))) throw new Error(`Redis port ${stack.redis.port} still accepts connections after SIGKILL`);
        await sleep(downAt + 30_000 - Date.now());
        const refusedAtEnd = await portRefuses(stack.redis.port);
        await stack.redis.start();
        const backAt = Date.now();
        return {
          recoveryFromMs: backAt,
          from: 'Redis back',
          evidence: [`redis-server killed (SIGKILL, no persistence: it came back empty); port ${stack.redis.port} refused connections for ${Math.round((backAt - downAt) / 1000)} s (refused at the end: ${refusedAtEnd})`],
        };
      },
    });
  });

  it('drill 7: a worker whose clock jumps 10 s ahead (libfaketime) refuses work and alerts; the others run it', async () => {
    let clockFile = '';
    let skewedAt = 0;
    await drill({
      title: '7 worker clock +10 s',
      goal: `others run its jobs ≤ ${GOAL_S} s (ceiling ${CEILING_S} s)`,
      workerExtraEnv: (i, dir) => (i === 3 ? faketimeEnv((clockFile = path.join(dir, 'faketime-offset'))) : undefined),
      async fault(stack) {
        const victim = stack.workers[2] as Service;
        await whileRunning(stack, victim.name);
        const at = Date.now();
        writeFileSync(clockFile, '+10s\n');
        const line = await victim.waitForLine('ALERT CLOCK_SKEW', 15_000);
        skewedAt = Date.now();
        const offset = /"offsetMs":(-?\d+)/.exec(line)?.[1];
        if (offset === undefined || Math.abs(Number(offset)) < 8_000) throw new Error(`the worker did not see a 10 s offset: ${line}`);
        return {
          recoveryFromMs: at,
          from: 'clock jump',
          evidence: [`${victim.name} measured its clock ${offset} ms off Redis TIME ${skewedAt - at} ms after the jump and raised CLOCK_SKEW`],
        };
      },
      async verify(stack, { log }) {
        const victim = stack.workerId('worker-3');
        // It refused work: no call of it began after it noticed (1 s for calls already started),
        // and it left the registry.
        const lateCalls = stack.sink.calls.filter((c) => c.workerId === victim && c.receivedMs > skewedAt + 1_000);
        const registered = await withRedis(stack, (r) => r.exists(`${stack.namespace}:worker:${victim}`));
        const refusals = await eventCount(stack, 'CLOCK_SKEW', 'worker_id = ?', [victim]);
        const span = await stack.query<RowDataPacket>(`SELECT MIN(at) AS first, MAX(at) AS last FROM event_log WHERE type = 'CLOCK_SKEW' AND worker_id = ?`, [victim]);
        if (refusals > 0) {
          const rel = (d: unknown): string => `${(((d as Date).getTime() - skewedAt) / 1000).toFixed(1)} s`;
          log(`CLOCK_SKEW refusals of ${victim} recorded from ${rel(span[0]?.first as unknown)} to ${rel(span[0]?.last as unknown)} after it noticed`);
        }
        const webhook = stack.sink.alerts.filter((a) => a.body.kind === 'CLOCK_SKEW' && a.body.workerId === victim);
        const alertRows = await stack.query<RowDataPacket>(`SELECT COUNT(*) AS n FROM alert_log WHERE kind = 'CLOCK_SKEW' AND worker_id = ?`, [victim]);
        log(`after the skew: ${lateCalls.length} calls by ${victim}; registry entry exists: ${registered}; CLOCK_SKEW refusals recorded: ${refusals}; CLOCK_SKEW webhooks: ${webhook.length}; alert_log rows: ${Number(alertRows[0]?.n)}`);
        expect(lateCalls).toEqual([]);
        expect(registered).toBe(0);
        expect(webhook.length + Number(alertRows[0]?.n ?? 0), 'a CLOCK_SKEW alert reached the webhook or alert_log').toBeGreaterThan(0);
      },
    });
  });

  it('drill 8: a worker frozen with SIGSTOP for 30 s, then SIGCONT: its late results change nothing', async () => {
    let victimId = '';
    let contAt = 0;
    await drill({
      title: '8 worker SIGSTOP 30 s',
      goal: LOST_WORKER_GOAL,
      async fault(stack) {
        const victim = stack.workers[0] as Service;
        victimId = victim.name;
        const open = await whileRunning(stack, victimId);
        const at = Date.now();
        victim.kill('SIGSTOP');
        await sleep(200);
        if (procState(victim.pid) !== 'T') throw new Error(`${victimId} is not stopped after SIGSTOP (state ${procState(victim.pid)})`);
        await sleep(at + 30_000 - Date.now());
        const stillStopped = procState(victim.pid) === 'T';
        victim.kill('SIGCONT');
        contAt = Date.now();
        await sleep(200);
        if (procState(victim.pid) === 'T') throw new Error(`${victimId} still stopped after SIGCONT`);
        return {
          recoveryFromMs: at,
          from: 'SIGSTOP',
          evidence: [`${victimId} (pid ${victim.pid}) stopped (state T) with ${open} jobs running, for ${Math.round((contAt - at) / 1000)} s (still stopped at the end: ${stillStopped}), then continued`],
        };
      },
      async verify(stack, { log }) {
        const taken = await takenFrom(stack, victimId, log);
        const fenced = await eventCount(stack, 'FENCED', 'worker_id = ? AND at > ?', [victimId, new Date(contAt)]);
        log(`${victimId}: FENCED (late ACKs and results recorded, not applied) after SIGCONT: ${fenced}`);
        expect(taken).toBeGreaterThan(0);
        expect(fenced).toBeGreaterThan(0);
      },
    });
  });
});
