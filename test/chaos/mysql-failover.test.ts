/**
 * Fault drill of issue #23: the MySQL primary failed over to its replica under the drills' load,
 * exactly as docs/production.md "Failing over to a replica" says. The world is the drills' own
 * (stack.ts: 2 schedulers, 2 brokers, 3 workers, 200 `http` tasks every 2 s) with
 * `topology.mysql: 'primary-replica'`: a private MariaDB primary A (binlog, row format), a
 * private replica B of it (GTID, read-only) and a TCP proxy in front of A that the services
 * reach as `AX_MYSQL_URL` — the writer VIP or DNS name — as a user without SUPER (MariaDB's
 * `read_only` does not stop READ_ONLY ADMIN, which SUPER includes before 11.0 and root holds: a
 * root login would write on through the fence).
 *
 * The procedure, 4 s into the window:
 *   2. fence A: `SET GLOBAL read_only = 1` (the services' writes now fail with 1290);
 *   3. wait until B has applied everything A wrote (A's `@@gtid_binlog_pos` = B's
 *      `@@gtid_slave_pos`), hold A fenced until 5 s after the fence (a failover tool's checks),
 *      then promote B: `STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = 0`;
 *   4. move the proxy to B, then kill every client connection still open on A (KILL CONNECTION):
 *      a pooled connection to the fenced A would otherwise answer 1290 until it is closed;
 *   5. check through `AX_MYSQL_URL`: `SELECT @@server_id, @@read_only` is B, writable.
 * (Step 1, semi-synchronous replication, protects an unplanned failover, where A cannot be fenced
 * and waited for; this planned one loses nothing without it, and the drill asserts so.)
 *
 * Asserted as every drill: no slot of the window lost or run twice, recovery under 5× the goal,
 * measured from the fence; and that no service exited or was restarted, A took no write after
 * the fence, and the first SUCCESS after the fence was written on B. The row is written to
 * `artifacts/results-mysql-failover.md`.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { assertNoLeftoverProcesses, canRunMariaDb, canRunRabbitMq, canRunRedisServer, missingRequirement } from '@ax/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { ARTIFACTS_DIR, CEILING_S, expectDrillVerdict, GOAL_S, runDrill } from './drill.js';
import { SERVICE_USER, type MysqlPair } from './mysql-pair.js';
import { sleep, type Service, type Stack } from './stack.js';
import { drillTable, type DrillRow } from './stats.js';

const TITLE = '11 MySQL primary failed over to its replica';
const GOAL = `backlog gone ≤ ${GOAL_S} s (ceiling ${CEILING_S} s)`;
/**
 * How long A stays fenced before B is promoted: a failover tool's checks take seconds, and the
 * services must spend them answered 1290 on every write (retried, not fatal) rather than the
 * few milliseconds B needs to catch up on this machine.
 */
const FENCED_FOR_MS = 5_000;
/** Longest the fence may wait for B to apply everything A wrote. */
const CATCH_UP_MS = 60_000;
/** Longest the drill keeps killing client connections that still reach A. */
const KILL_FOR_MS = 10_000;

const rows: DrillRow[] = [];
const notes: string[] = [];

afterAll(() => {
  if (rows.length > 0) {
    const table = drillTable(rows);
    writeFileSync(
      path.join(ARTIFACTS_DIR, 'results-mysql-failover.md'),
      `# MySQL failover drill — ${new Date().toISOString()}\n\n${table}\n\n${notes.join('\n\n')}\n`,
    );
    console.log(`\n${table}\n`);
  }
  assertNoLeftoverProcesses();
});

async function scalar(conn: Connection, sql: string, params: unknown[] = []): Promise<string> {
  const [result] = await conn.query<RowDataPacket[]>(sql, params);
  return String(Object.values(result[0] ?? {})[0] ?? '');
}

/**
 * Client connections on a server other than `conn`'s own and the server's threads: the
 * services' (the service user) and the drill's own pool (root, through the proxy).
 */
async function clientConnections(conn: Connection): Promise<Array<{ id: number; user: string }>> {
  const [result] = await conn.query<RowDataPacket[]>(
    `SELECT ID AS id, USER AS user FROM information_schema.PROCESSLIST
      WHERE ID <> CONNECTION_ID() AND USER IN (?, 'root') AND COMMAND NOT IN ('Binlog Dump', 'Daemon')`,
    [SERVICE_USER],
  );
  return result.map((r) => ({ id: Number(r.id), user: String(r.user) }));
}

/** Polls until B has applied everything A has written; → A's position. */
async function waitApplied(a: Connection, b: Connection): Promise<{ position: string; waitedMs: number }> {
  const started = Date.now();
  for (;;) {
    // A first: it is fenced, so its position no longer moves; B's catches up with it.
    const primary = await scalar(a, 'SELECT @@GLOBAL.gtid_binlog_pos');
    const replica = await scalar(b, 'SELECT @@GLOBAL.gtid_slave_pos');
    if (primary !== '' && primary === replica) return { position: primary, waitedMs: Date.now() - started };
    const [status] = await b.query<RowDataPacket[]>('SHOW SLAVE STATUS');
    const s = status[0];
    if (s?.Slave_SQL_Running !== 'Yes') throw new Error(`B stopped applying: ${String(s?.Last_SQL_Error ?? 'no slave status')}`);
    if (Date.now() - started > CATCH_UP_MS) throw new Error(`B had not applied A's ${primary} within ${CATCH_UP_MS} ms (at ${replica})`);
    await sleep(50);
  }
}

/** The errno of a write the service user tries straight on `server`, or `null` if it was allowed. */
async function serviceWriteErrno(pair: MysqlPair, server: { readonly port: number }): Promise<number | null> {
  const conn = await pair.asService(server);
  try {
    await conn.query('DELETE FROM task_instance WHERE 1 = 0');
    return null;
  } catch (error) {
    return (error as { errno?: number }).errno ?? -1;
  } finally {
    await conn.end();
  }
}

/** Lines of every service's kept output matching `pattern`, counted by service. */
function linesMatching(stack: Stack, pattern: RegExp): string {
  const counts = [...stack.schedulers, ...stack.brokers, ...stack.workers]
    .map((s) => [s.name, s.lines().filter((l) => pattern.test(l.text)).length] as const)
    .filter(([, n]) => n > 0);
  return counts.length === 0 ? 'none' : counts.map(([name, n]) => `${name} ${n}`).join(', ');
}

const present = canRunMariaDb();

describe.skipIf(
  missingRequirement(it, { name: 'mariadbd', present, install: 'apt-get install mariadb-server' }) ||
    missingRequirement(it, { name: 'redis-server', present: canRunRedisServer(), install: 'apt-get install redis-server' }) ||
    missingRequirement(it, { name: 'rabbitmq-server', present: canRunRabbitMq(), install: 'apt-get install rabbitmq-server' }),
)('MySQL failover drill (#23)', () => {
  it('drill 11: fence the MySQL primary, promote its replica, move the endpoint, kill the old connections: the services carry on', async () => {
    /** When each service exited, if it did (only the schedulers may, when the window closes). */
    const exitedAt = new Map<string, number>();
    let services: Service[] = [];
    let fencedMs = 0;
    let caughtUpAt = '';
    let result;
    try {
      result = await runDrill({
        title: TITLE,
        topology: { mysql: 'primary-replica' },
        goal: GOAL,
        async fault(stack, log) {
          const pair = stack.mysqlPair;
          if (pair === undefined) throw new Error('the drill runs on a primary-replica pair');
          services = [...stack.schedulers, ...stack.brokers, ...stack.workers];
          for (const s of services) void s.waitExit().then(() => exitedAt.set(s.name, Date.now()));
          const a = await pair.admin(pair.primary);
          const b = await pair.admin(pair.replica);
          try {
            const before = await clientConnections(a);
            const serviceConnections = before.filter((c) => c.user === SERVICE_USER).length;
            // Every scheduler and broker pool has at least one connection open under this load.
            if (serviceConnections < stack.schedulers.length + stack.brokers.length) {
              throw new Error(`only ${serviceConnections} ${SERVICE_USER} connections on A before the fence`);
            }
            const lagBefore = `A ${await scalar(a, 'SELECT @@GLOBAL.gtid_binlog_pos')}, B ${await scalar(b, 'SELECT @@GLOBAL.gtid_slave_pos')}`;

            // Step 2: fence. `read_only` waits for commits in flight; the service user has no SUPER, so it binds.
            await a.query('SET SESSION lock_wait_timeout = 30');
            const fenceMs = Date.now();
            await a.query('SET GLOBAL read_only = 1');
            fencedMs = Date.now();
            const fencedErrno = await serviceWriteErrno(pair, pair.primary);
            if (fencedErrno !== 1290) throw new Error(`a write of ${SERVICE_USER} on the fenced A gave ${fencedErrno ?? 'no error'}, not 1290`);
            log(`A fenced (read_only = 1) in ${fencedMs - fenceMs} ms; ${SERVICE_USER} gets 1290 on A; ${serviceConnections} ${SERVICE_USER} connections open on A`);

            // Step 3: B applies all A wrote, then is promoted.
            const applied = await waitApplied(a, b);
            caughtUpAt = applied.position;
            await sleep(fenceMs + FENCED_FOR_MS - Date.now());
            await b.query('STOP SLAVE');
            await b.query('RESET SLAVE ALL');
            await b.query('SET GLOBAL read_only = 0');
            const promotedMs = Date.now();
            log(`B applied A's ${applied.position} ${applied.waitedMs} ms after the fence (before it: ${lagBefore}); promoted ${promotedMs - fenceMs} ms after the fence`);

            // Step 4: the endpoint moves to B; whatever is still connected to A is killed.
            pair.proxy.retarget({ host: '127.0.0.1', port: pair.replica.port });
            const killed = { [SERVICE_USER]: 0, root: 0 };
            let quietSince: number | null = null;
            const killDeadline = Date.now() + KILL_FOR_MS;
            // Connections that were being opened through the proxy as it moved show up on A a moment later.
            while (quietSince === null || Date.now() - quietSince < 1_000) {
              if (Date.now() > killDeadline) throw new Error(`client connections still reach A ${KILL_FOR_MS} ms after the proxy moved`);
              const open = await clientConnections(a);
              quietSince = open.length === 0 ? (quietSince ?? Date.now()) : null;
              for (const c of open) {
                try {
                  await a.query(`KILL CONNECTION ${c.id}`);
                  killed[c.user === SERVICE_USER ? SERVICE_USER : 'root'] += 1;
                } catch (error) {
                  if ((error as { errno?: number }).errno !== 1094) throw error; // 1094: it closed by itself
                }
              }
              await sleep(100);
            }
            const killedMs = Date.now();

            // Step 5: through AX_MYSQL_URL the services now reach B, writable, with the SUPER-less user.
            const viaEndpoint = await pair.asService(pair.proxy);
            let endpoint: RowDataPacket | undefined;
            try {
              [[endpoint]] = await viaEndpoint.query<RowDataPacket[]>('SELECT @@server_id AS serverId, @@read_only AS readOnly, CURRENT_USER() AS user');
            } finally {
              await viaEndpoint.end();
            }
            if (Number(endpoint?.serverId) !== 2 || Number(endpoint?.readOnly) !== 0) {
              throw new Error(`AX_MYSQL_URL reaches server ${String(endpoint?.serverId)} with read_only ${String(endpoint?.readOnly)}, not the promoted B`);
            }
            return {
              recoveryFromMs: fenceMs,
              from: 'the fence of A',
              evidence: [
                `before: ${serviceConnections} ${SERVICE_USER} connections on A through the proxy; positions ${lagBefore}`,
                `A fenced with read_only = 1 in ${fencedMs - fenceMs} ms; a write of ${SERVICE_USER} on A then failed with 1290`,
                `B applied A's ${applied.position} ${applied.waitedMs} ms after the fence; A held fenced ${FENCED_FOR_MS} ms; STOP SLAVE, RESET SLAVE ALL, read_only = 0 at +${promotedMs - fenceMs} ms`,
                `proxy moved to B (:${pair.replica.port}); KILL CONNECTION on A of ${killed[SERVICE_USER]} ${SERVICE_USER} and ${killed.root} drill (root) connections, none left at +${killedMs - fenceMs} ms`,
                `through AX_MYSQL_URL: @@server_id ${String(endpoint?.serverId)}, @@read_only ${String(endpoint?.readOnly)}, user ${String(endpoint?.user)}`,
              ],
            };
          } finally {
            await Promise.all([a.end(), b.end()]);
          }
        },
        async verify(stack, { fault, toMs, log }) {
          const pair = stack.mysqlPair as MysqlPair;
          const a = await pair.admin(pair.primary);
          const b = await pair.admin(pair.replica);
          try {
            // createTestDatabase's name is [a-z0-9_]: backticks are enough.
            await Promise.all([a.query(`USE \`${stack.db.name}\``), b.query(`USE \`${stack.db.name}\``)]);
            // A took no write after the fence: its binlog stands where B caught up with it.
            const aPosition = await scalar(a, 'SELECT @@GLOBAL.gtid_binlog_pos');
            const aLastEnded = await scalar(a, 'SELECT CAST(MAX(ended_at) AS CHAR) FROM task_instance');
            // Nothing A committed ends after the fence completed: a later `ended_at` was written on B.
            const firstOnB = await scalar(b, `SELECT TIMESTAMPDIFF(MICROSECOND, ?, MIN(ended_at)) DIV 1000 FROM task_instance WHERE state = 'SUCCESS' AND ended_at > ?`, [
              new Date(fault.recoveryFromMs),
              new Date(fencedMs),
            ]);
            const bServer = await scalar(b, 'SELECT CONCAT(@@server_id, "/", @@read_only, "/", @@gtid_binlog_pos)');
            const exits = services.map((s) => ({ name: s.name, at: exitedAt.get(s.name), scheduler: stack.schedulers.includes(s) }));
            const crashed = exits.filter((e) => e.at !== undefined && !(e.scheduler && e.at >= toMs));
            log(`A's binlog at the end ${aPosition} (caught up at ${caughtUpAt}); its last ended_at ${aLastEnded}; B (server/read_only/binlog) ${bServer}`);
            log(`first SUCCESS written on B ${(Number(firstOnB) / 1000).toFixed(1)} s after the fence`);
            log(`service lines naming read-only (1290): ${linesMatching(stack, /read-only|1290/i)}; naming a killed or lost connection: ${linesMatching(stack, /killed|PROTOCOL_CONNECTION_LOST|ECONNRESET|1927/i)}`);
            log(`services exited before the window closed: ${crashed.map((e) => e.name).join(', ') || 'none'}`);
            notes.push(
              [
                `### ${TITLE}`,
                '',
                ...fault.evidence.map((e) => `- fault: ${e}`),
                `- first SUCCESS written on B ${(Number(firstOnB) / 1000).toFixed(1)} s after the fence; A's binlog unchanged since (${aPosition})`,
                `- services exited or restarted: ${crashed.map((e) => e.name).join(', ') || 'none'}`,
              ].join('\n'),
            );
            expect(aPosition, 'A wrote nothing after the fence').toBe(caughtUpAt);
            expect(firstOnB, 'a SUCCESS was written on B after the fence').not.toBe('');
            expect(crashed, 'no service exited: none needed a restart').toEqual([]);
          } finally {
            await Promise.all([a.end(), b.end()]);
          }
        },
      });
    } catch (error) {
      const verified = (error as { drillRow?: DrillRow }).drillRow;
      rows.push(verified ?? { drill: TITLE, lost: 'error', doubled: 'error', callsResumeS: 'error', backlogGoneS: 'error', goal: GOAL });
      throw error;
    }
    rows.push(result.row);
    notes.push(['```', result.details, '```'].join('\n'));
    const { stats } = result;
    console.log(
      `MySQL failover drill: ${stats.expectedSlots} slots, lost ${stats.lost.length}, doubled ${result.row.doubled}; ` +
        `calls resume ${stats.callsResumeS ?? 'never'} s, backlog gone ${stats.backlogGoneS ?? 'never'} s after the fence`,
    );
    expectDrillVerdict(result);
  }, 600_000);
});
