/**
 * The MySQL side of the failover drill (test/chaos/mysql-failover.test.ts): a private primary, a
 * GTID replica of it and a TCP proxy in front as the writer endpoint, started for a stack with
 * `topology.mysql: 'primary-replica'` (stack.ts).
 */
import type { RowDataPacket } from 'mysql2';
import mysql from 'mysql2/promise';
import { startMariaDb, startTcpProxy, type CuttableProxy, type MariaDbServer } from '@ax/testing';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `mariadbd` arguments of the pair's primary (A): a binary log in row format, GTIDs (always on in MariaDB). */
export const PRIMARY_ARGS: readonly string[] = ['--server-id=1', '--log-bin=ax-bin', '--binlog-format=ROW'];
/**
 * Of the replica (B): its own binary log (it becomes a primary), read-only until promoted, and
 * parallel appliers so it keeps up with the load on a 2-core machine (one applier waits for one
 * fsync per replicated transaction).
 */
export const REPLICA_ARGS: readonly string[] = [
  '--server-id=2',
  '--log-bin=ax-bin',
  '--binlog-format=ROW',
  '--relay-log=ax-relay',
  '--read-only=ON',
  '--slave-parallel-threads=4',
];
/** The services' MySQL user in a `primary-replica` topology, and its password. */
export const SERVICE_USER = 'ax';
const SERVICE_PASSWORD = 'ax-drill-password';

/**
 * The MySQL side of a `mysql: 'primary-replica'` topology. The services reach MySQL only through
 * `proxy`, as they would a VIP or DNS name, as {@link SERVICE_USER}: rights on the drill's
 * database and nothing global, so `read_only` binds it (it does not bind READ_ONLY ADMIN, which
 * root holds and SUPER includes before MariaDB 11.0). The drill's own pool (`stack.db`) goes
 * through the proxy as root.
 */
export interface MysqlPair {
  /** A: the primary the services start on (also `stack.mariadb`). */
  readonly primary: MariaDbServer;
  /** B: replicates A (`MASTER_USE_GTID=slave_pos`), read-only, until a drill promotes it. */
  readonly replica: MariaDbServer;
  /** The writer endpoint: forwards to A until a drill moves it. */
  readonly proxy: CuttableProxy;
  /** A root connection straight to `server` (not through the proxy); the caller ends it. */
  admin(server: MariaDbServer): Promise<mysql.Connection>;
  /** A connection to `to` (a server, or the proxy) as {@link SERVICE_USER} on the drill's database; the caller ends it. */
  asService(to: { readonly port: number }): Promise<mysql.Connection>;
}

/** The pair as the stack holds it. */
export interface StartedPair extends MysqlPair {
  /** Once the drill's database exists: creates the service user with rights on it only; → the services' `AX_MYSQL_URL`. */
  grantServiceUser(database: string): Promise<string>;
  /** Closes the proxy, removes both servers. */
  cleanup(): Promise<void>;
}

const adminConnection = (server: MariaDbServer): Promise<mysql.Connection> =>
  mysql.createConnection({ host: '127.0.0.1', port: server.port, user: 'root', connectTimeout: 5_000 });

/**
 * Starts A and B in `dir`, makes B replicate A from A's first binlog event (everything the stack
 * then creates on A — database, schema, tasks, the service user — reaches B by replication) and
 * puts the proxy in front of A.
 */
export async function startMysqlPair(dir: string): Promise<StartedPair> {
  const started = await Promise.allSettled([startMariaDb({ parentDir: dir, args: PRIMARY_ARGS }), startMariaDb({ parentDir: dir, args: REPLICA_ARGS })]);
  const servers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  let proxy: CuttableProxy | undefined;
  let database = '';
  const cleanup = async (): Promise<void> => {
    await proxy?.close();
    await Promise.all(servers.map((s) => s.cleanup()));
  };
  try {
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const [primary, replica] = servers as [MariaDbServer, MariaDbServer];
    const b = await adminConnection(replica);
    try {
      await b.query(
        `CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = ${primary.port}, MASTER_USER = 'root', MASTER_PASSWORD = '',
                          MASTER_CONNECT_RETRY = 1, MASTER_USE_GTID = slave_pos`,
      );
      await b.query('START SLAVE');
      const deadline = Date.now() + 30_000;
      for (;;) {
        const [status] = await b.query<RowDataPacket[]>('SHOW SLAVE STATUS');
        const s = status[0];
        if (s?.Slave_IO_Running === 'Yes' && s.Slave_SQL_Running === 'Yes') break;
        if (Date.now() > deadline) {
          throw new Error(`the replica does not replicate: IO ${String(s?.Slave_IO_Running)} (${String(s?.Last_IO_Error)}), SQL ${String(s?.Slave_SQL_Running)} (${String(s?.Last_SQL_Error)})`);
        }
        await sleep(200);
      }
    } finally {
      await b.end();
    }
    proxy = await startTcpProxy({ host: '127.0.0.1', port: primary.port });
    return {
      primary,
      replica,
      proxy,
      admin: adminConnection,
      asService: (to) =>
        mysql.createConnection({ host: '127.0.0.1', port: to.port, user: SERVICE_USER, password: SERVICE_PASSWORD, database, connectTimeout: 5_000 }),
      cleanup,
      async grantServiceUser(name) {
        database = name;
        const a = await adminConnection(primary);
        try {
          await a.query(`CREATE USER '${SERVICE_USER}'@'%' IDENTIFIED BY '${SERVICE_PASSWORD}'`);
          // `name` is [a-z0-9_] (createTestDatabase): backticks are enough.
          await a.query(`GRANT ALL PRIVILEGES ON \`${name}\`.* TO '${SERVICE_USER}'@'%'`);
        } finally {
          await a.end();
        }
        return `mysql://${SERVICE_USER}:${SERVICE_PASSWORD}@127.0.0.1:${(proxy as CuttableProxy).port}/${name}`;
      },
    };
  } catch (error) {
    await cleanup().catch(() => undefined);
    throw error;
  }
}
